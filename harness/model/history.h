// History: the record of one scenario run, in Jepsen's shape. One event type
// for everything: requests (invoke + completion per process), probes, hooks,
// faults and process control. Written as JSONL (one event per line) before
// any oracle runs, so `idemproof check RUN_DIR` can re-check offline.
//
// On-disk format (kHistoryFormat, recorded as "format" in the run's
// results.json): 2 stores every headers field as the ordered list of
// [name, value] pairs seen, repeated names kept. Format 1 (no "format" in
// results.json) stored a request's and an answer's headers as {name: value}
// (a repeated name kept once); FromJsonl(..., 1) converts them to lists.
//
// Event shapes (the `value` field), the contract between the runtime (which
// writes) and the oracles (which read); model/history_events.h builds every
// one of them and names the values of `f` and `process`:
//  - f "send" | "burst", type invoke, process "client-N" / "burst-N":
//      {"request": {"method", "url", "headers": [[name, value]...], "body": str},
//       "variant": NAME (only when a request variant of the action was used),
//       "variant_repeated": true (the variant came from the key's attempt: a
//       later request repeating it, runtime/step_context.h VariantFor),
//       "key_form": FORM (only for a malformed key, model/key_forms.h: the
//       header carried that form of `key`)}
//    completion on the same process (repeating "variant"):
//      type ok   = an answer arrived (ANY status; the oracles judge statuses)
//      type info = no answer (timeout, reset, lost): outcome unknown
//      type fail = definitely not sent (could not connect)
//      {"response": {"status": int, "headers": [[name, value]...], "body": str},
//       "connection_reused": bool, "error": str}   (response absent unless ok)
//    fields action, key (concrete; "" = sent without key), key_name
//    (symbolic), biz, biz_name, payload ("default" | "other"), step are set.
//  - f "probe", process "probe", invoke then ok/fail/info:
//      {"probe": "records" | NAME, "label": str, "value": <json>, "count": int}
//    a records probe sets action, biz, biz_name and "count"; "value" is the
//    probe's JSON value; "error" on fail/info.
//  - f "hook", process "nemesis": {"hook": NAME, "cause": CAPABILITY (a cause
//    step), "response": {...} (a request) | "command": {"exit": int|null,
//    "signal": int|null, "stdout": first 4 KiB, "stdout_truncated": bool}
//    (a command), "error" (fail/info), "failed": true (not ok, non-2xx, exit != 0)}
//  - f "fault" | "kill" | "stop" | "start" | "restart", process "nemesis":
//      {"fault": NAME, "phase": "start" | "heal", "injected": int, ...}
//  - f "batch", process "batch" (a batch job run, see batch_history.h),
//    invoke: {"request": {...as send}, "batch": {"job", "job_name",
//             "role": "run" | "rerun" | "clean", "from", "to",
//             "fail_after" (only when the run must fail), "of" (clean runs:
//             the job whose range it repeats), "attempt" (1.. within a step)}}
//    completion ok/info/fail exactly as a send's.
//  - f "batch_result", process "probe": one job's result read after a batch
//    run. invoke: {"batch": {"job", "job_name"}, "after": index of the batch
//    run's invoke}; ok adds "result": <the result call's JSON value> and,
//    when the target reads markers with a separate call, "markers": <its
//    JSON value>; fail/info carry "error".
//  - f "deliver", process "deliverer-N" / f "publish", process "publisher":
//    queue deliveries (see steps/deliver_publish_steps.cpp); action = the message
//    name, key = the concrete message id, key_name its symbolic name.
//  - f "pause" | "resume" | "spawn" | "services", process "nemesis":
//      {"instance", "pid"} / {"services": {"services.NAME.url": ...}}
//  - f "fault", process "proxy", type info: one event of the chaos proxy
//    (injectors/fault_event.h JSON: "fault" kind, "name", "phase" start |
//    heal | injected | error, "request" {method, target, headers [[k, v]],
//    body}, "upstream": the answers the client never saw, each with "at_ns"
//    in this history's time base, "client_answer", "upstream_sends").
//  - f "note", process "harness", value.burst after every burst:
//      {"step", "n", "mode": "last_byte" | "threads", "harness_spread_us",
//       "target_spread_us" (null when not observable), "arrivals_reported",
//       "arrival_header"}
//  - f "wait" / "join" / "note": free-form value.
//
// Thread-safety: History is NOT thread-safe; the interpreter serialises
// appends. Reading a const History concurrently is fine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/header_list.h"
#include "base/status.h"

namespace idemproof {

// The history format this build writes; it reads 1 and 2.
inline constexpr int kHistoryFormat = 2;

enum class EventType { kInvoke, kOk, kFail, kInfo };
const char* EventTypeName(EventType type);  // "invoke", "ok", "fail", "info"
Result<EventType> ParseEventType(const std::string& text);

struct HistoryEvent {
  std::int64_t index = -1;     // position in the history, set by History::Append
  std::string process;         // "client-0", "burst-3", "probe", "nemesis"
  EventType type = EventType::kInvoke;
  std::string f;               // "send", "burst", "probe", "hook", "fault", ...
  std::string action;
  std::string key;             // concrete key sent; "" = no key header
  std::string key_name;        // symbolic ("k1", "none", "fresh")
  std::string biz;             // concrete biz id
  std::string biz_name;        // symbolic ("b1")
  std::string payload;         // "default" | "other" | ""
  int step = -1;               // index of the scenario step that caused it
  std::int64_t time_ns = 0;    // steady clock, relative to the run's start
  nlohmann::json value = nlohmann::json::object();

  // f send or burst (model/history_events.h).
  bool is_request() const;
};

// [[name, value], ...]: every header in the order seen, a repeated name
// (two Set-Cookie) kept as often as it came. Every event writes headers so.
nlohmann::json HeadersJson(const HeaderList& headers);
// The one reader of recorded headers: the [[name, value], ...] list, or a
// format-1 {name: value} object (results.json evidence of older runs: one
// value per name, in name order). Malformed entries are skipped.
HeaderList HeadersFromJson(const nlohmann::json& headers);

// Event <-> one JSON object. Empty string fields and step -1 are omitted when
// writing and default when reading; unknown fields are ignored on read.
nlohmann::json EventToJson(const HistoryEvent& event);
Result<HistoryEvent> EventFromJson(const nlohmann::json& doc);

class History {
 public:
  // Appends a copy, assigning index = size(); returns the index.
  std::int64_t Append(HistoryEvent event);
  const std::vector<HistoryEvent>& events() const { return events_; }
  std::size_t size() const { return events_.size(); }
  bool empty() const { return events_.empty(); }

  // One JSON object per line, '\n' terminated, events in index order.
  std::string ToJsonl() const;
  Status WriteJsonl(const std::string& path) const;
  // Parses JSONL (blank lines skipped) written in `format`; a format-1
  // history's events are converted to the current shapes. Errors name the
  // line number; a format other than 1 and 2 is an error. Indices are taken
  // from the file; a gap or disorder is an error.
  static Result<History> FromJsonl(const std::string& text, const std::string& file = "<jsonl>",
                                   int format = kHistoryFormat);
  static Result<History> ReadJsonl(const std::string& path, int format = kHistoryFormat);

 private:
  std::vector<HistoryEvent> events_;
};

}  // namespace idemproof
