// FaultEvent and FaultEventLog: what the injectors did, for the history.
//
// Every fault that fires is one event, with the request it acted on and every
// upstream answer the client never saw (a dropped response, the answer to a
// replayed or hedged copy), so oracles can line the fault up against the
// target's records. Arming and healing an injector are events too (phase
// "start" / "heal"). The harness turns each event into a History event on the
// lane "proxy" (process "proxy", f "fault").
//
// Times are std::chrono::steady_clock nanoseconds since its epoch, the clock
// the reference service's X-Arrival-Ns uses; the harness must use the same
// clock for its own events to line them up.
//
// Thread-safety: FaultEventLog is safe to use from several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/header_list.h"
#include "base/http_message.h"
#include "base/steady_clock.h"
#include "base/thread_annotations.h"

namespace idemproof::injectors {

// Now on std::chrono::steady_clock, in nanoseconds (one helper for every room).
using ::idemproof::steady_now_ns;

// The request a fault acted on, as sent (target: path and query): the one
// HTTP request type of every room (base/http_message.h).
using RequestSnapshot = ::idemproof::HttpRequest;

struct AnswerSnapshot {
  int status = 0;
  HeaderList headers;
  std::string body;
  std::int64_t time_ns = 0;  // when the answer was fully read
};

// One request the proxy wrote upstream (copies included) and what came back:
// an entry of the egress record (ProxySettings::on_exchange).
struct UpstreamExchange {
  RequestSnapshot request;
  std::optional<AnswerSnapshot> answer;  // absent: no full answer (see error)
  std::string error;                     // why there is no answer
  bool timed_out = false;
  std::int64_t sent_ns = 0;              // when the request was fully written
};

struct FaultEvent {
  std::int64_t time_ns = 0;
  std::string fault;   // kind: drop-response, replay-upstream, hedge, delay, reset
  std::string name;    // the injector's name (FaultSettings::name)
  std::string phase;   // "start" | "heal" (arming) or "injected" (it fired)
  std::string detail;  // one line: what the fault did ("closed client connection", ...)
  std::optional<RequestSnapshot> request;
  std::vector<AnswerSnapshot> upstream;  // answers the client did not get
  std::optional<AnswerSnapshot> client_answer;  // what the client got, if anything
  std::int64_t upstream_sends = 0;       // how many times the request went upstream
  // Why the fault, though picked, did not do what it is for ("" = it did):
  // "the downstream did not answer: nothing killed". faults_fired reads it.
  std::string missed;
};

// {"time_ns", "fault", "name", "phase", "detail", "request": {...},
//  "upstream": [{"status", "headers": [[k, v]...], "body", "time_ns"}...],
//  "client_answer": {...} | null, "upstream_sends"}, plus "missed" when set
void to_json(nlohmann::json& out, const FaultEvent& event);

// {"request": {"method", "target", "headers", "body"}, "answer": {...} | null,
//  "error", "timed_out", "sent_ns"}
void to_json(nlohmann::json& out, const UpstreamExchange& exchange);

class FaultEventLog {
 public:
  using Sink = std::function<void(const FaultEvent&)>;

  // `sink` (optional) is called for every event, in order, under the log's
  // lock: it must be quick and must not call back into the log.
  explicit FaultEventLog(Sink sink = {}) : sink_(std::move(sink)) {}

  void record(FaultEvent event);
  std::vector<FaultEvent> snapshot() const;
  std::size_t size() const;

 private:
  mutable base::Mutex mu_;
  const Sink sink_;
  std::vector<FaultEvent> events_ GUARDED_BY(mu_);
};

}  // namespace idemproof::injectors
