// Operations: a history read as completed exchanges. An invoke is paired with
// the next non-invoke event of the same process (Jepsen's rule: a process
// does one thing at a time). Plus typed views of the request/answer JSON the
// runtime records (see history.h for the shapes), so oracles never poke at
// raw JSON.
//
// Thread-safety: views into a const History; the History must outlive them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/history.h"
#include "model/target/contract.h"

namespace idemproof {

// An HTTP answer as recorded.
struct HttpAnswer {
  int status = 0;
  HeaderList headers;   // as recorded; lookups are case-insensitive
  std::string body;
  // The harness cut the body at max_body ("truncated" in the history): the
  // body cannot be compared; size is the real one (exact) or a lower bound.
  bool truncated = false;
  std::uint64_t size = 0;
  bool size_exact = false;
  // Cut by the run's max_kept rather than max_body ("by": "max_kept").
  bool cut_by_kept = false;

  // The value of header `name` (case-insensitive), if present.
  std::optional<std::string> Header(const std::string& name) const;
  // Every value of header `name` (case-insensitive), in the order received.
  std::vector<std::string> HeaderValues(const std::string& name) const;
  // The body as JSON, or nullopt when it does not parse.
  std::optional<nlohmann::json> JsonBody() const;
  bool is_2xx() const { return status >= 200 && status < 300; }
  // "4194304 of 2147483648 bytes kept" / "4194304 of more than 4259840 bytes kept".
  std::string TruncationNote() const;
  // Where the body was cut: "max_body", or "the run's max_kept".
  std::string CutBy() const;
};

// Parses {"status", "headers", "body"} (headers: HeadersFromJson, model/history.h);
// nullopt when malformed.
std::optional<HttpAnswer> AnswerFromJson(const nlohmann::json& doc);
nlohmann::json AnswerToJson(const HttpAnswer& answer);
// AnswerToJson for evidence (results.json, junit.xml): the body quoted up to
// `max_quote` bytes (not splitting a UTF-8 character), then "… N bytes cut",
// so no verdict copies a whole body.
inline constexpr std::size_t kEvidenceQuote = 2048;
nlohmann::json AnswerEvidenceJson(const HttpAnswer& answer, std::size_t max_quote = kEvidenceQuote);

// One invoke and its completion (nullptr while still open at the end).
struct Operation {
  const HistoryEvent* invoke = nullptr;
  const HistoryEvent* completion = nullptr;

  bool completed_ok() const;  // completion is type ok
  // Completion type fail: it could not connect, so it reached nothing (and
  // is no delivery that could execute again).
  bool never_sent() const;
  // The answer of a completed_ok request; nullopt otherwise.
  std::optional<HttpAnswer> answer() const;
  std::int64_t invoke_ns() const { return invoke->time_ns; }
  // Completion time, or invoke time when still open.
  std::int64_t complete_ns() const;
};

// Every invoke, in invoke order, with its completion.
std::vector<Operation> PairOperations(const History& history);
// Only request operations (f send/burst), in invoke order.
std::vector<Operation> RequestOperations(const History& history);

// True when `op` (one of `ops`) ran alone: no other request of `ops` with
// its action and key ran while it did, and no proxy fault acted (an event f
// "fault" on the "proxy" lane) between its invoke and its completion. Only
// then is its answer its own, not the fruit of a concurrent copy of it
// (a burst) or of a proxy's replayed copy.
bool RanAlone(const History& history, const std::vector<Operation>& ops, const Operation& op);

// True when `answer` carries the target's replay marker. Always false when the
// target declares none.
bool IsReplayMarked(const HttpAnswer& answer, const IdempotencyContract& contract);

// The last completed records-probe count for (action, biz), if any.
std::optional<std::int64_t> RecordCount(const History& history, const std::string& action,
                                        const std::string& biz);
// The value of the last ok probe event with this label, if any.
std::optional<nlohmann::json> ProbeValue(const History& history, const std::string& label);

}  // namespace idemproof
