// History events: the one place that builds each event shape of a History
// (model/history.h documents the shapes; model/event_names.h names the
// values of the `f` and `process` fields). The runtime records through these
// builders, the tests' literal histories build through them, and the oracles
// and reports compare against the constants, so a hand-written history
// cannot drift from a recorded one. The JSONL on disk is whatever
// EventToJson() writes of them.
//
// An event is built as an invoke (type kInvoke) and completed by copying it:
// RequestCompletion() replaces the value with the exchange's (requests,
// batch runs, deliveries), CompletionOf() keeps the invoke's value and lets
// the caller add to it (probes, hooks, faults, process control, publish).
// Times (time_ns) are left 0: the recorder sets them.
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/event_names.h"
#include "model/history.h"

namespace idemproof {

// True for the kill / stop / start / restart of the target (process nemesis).
bool IsTargetControl(const HistoryEvent& e);
// True for kill / stop: the target went down.
bool IsTargetDown(const HistoryEvent& e);

// Written with HeadersJson (model/history.h).
using RecordedHeaders = HeaderList;

// A request as recorded: {"method", "url", "headers": [[name, value], ...], "body"}.
struct RecordedRequest {
  std::string method;
  std::string url;
  RecordedHeaders headers;
  std::string body;
};

// What became of a request. `type`: ok = an answer arrived (any status),
// info = no answer (outcome unknown), fail = certainly never sent.
struct RecordedExchange {
  EventType type = EventType::kInfo;
  int status = 0;  // ok only
  RecordedHeaders headers;
  std::string body;
  // The body was cut at the target's max_body: its real size (exact: the
  // declared Content-Length; else a lower bound). Recorded as "truncated".
  bool body_truncated = false;
  std::uint64_t body_size = 0;
  bool body_size_exact = false;
  // Cut before max_body: the run's max_kept was spent ("by": "max_kept").
  bool body_cut_by_kept = false;
  std::string error;  // info / fail only
  bool connection_reused = false;
  int send_attempts = 0;  // > 1: the client resent it (recorded only then)
};

nlohmann::json RequestJson(const RecordedRequest& request);
// The most of a cut answer body (body_truncated) the history records: its
// first 4 KiB, whatever max_body or max_kept let the client read.
inline constexpr std::size_t kTruncatedBodyHead = 4096;

// {"status", "headers", "body"} of an answered exchange, and "truncated":
// {"kept", "size", "exact"} when the body was cut (+ "by": "max_kept" when
// the run's budget cut it). A cut body is recorded once, as its first
// kTruncatedBodyHead bytes (whole UTF-8 sequences): "kept" is their number,
// "size" the answer's length (exact: its Content-Length; else what arrived
// before the cut, a lower bound), so size - kept bytes were left out.
nlohmann::json ResponseJson(const RecordedExchange& exchange);

// Who a request is about: the fields every request-like event carries.
struct RequestSubject {
  std::string action;
  std::string key;       // concrete; "" = sent without key
  std::string key_name;  // symbolic
  std::string biz;       // concrete
  std::string biz_name;  // symbolic
  std::string payload;   // "default" | "other" | "" (not a send)
};

// f send | burst on `process`: {"request": ...}, plus "variant" when a
// request variant of the action was used ("" = none; RequestCompletion
// repeats it).
HistoryEvent RequestInvoke(const std::string& process, const std::string& f, const RequestSubject& subject,
                           const RecordedRequest& request, int step, const std::string& variant = "");
// The completion of a request-like invoke: same fields, the type of the
// exchange, value {"connection_reused", "send_attempts" (> 1 only),
// "response" (ok) | "error"}.
HistoryEvent RequestCompletion(const HistoryEvent& invoke, const RecordedExchange& exchange);
// The completion of any other invoke: the invoke with `type`, value kept.
HistoryEvent CompletionOf(const HistoryEvent& invoke, EventType type);

// f probe, process probe: {"probe", "label"}; the completion adds "value"
// (and "response"), or "error".
HistoryEvent ProbeInvoke(const std::string& probe, const std::string& label, int step);
// The records probe of one (action, biz) at the end of a run: label
// "records:<action>:<biz_name>"; the completion adds "value" and "count".
HistoryEvent RecordsProbeInvoke(const std::string& action, const std::string& biz, const std::string& biz_name);
// f hook, process nemesis: {"hook"}; the completion adds "response" (a
// request), "command" (a command: exit status and stdout head) or "error".
HistoryEvent HookInvoke(const std::string& hook, int step);
// f fault, process nemesis: {"fault", "phase": "start" | "heal"}; the
// completion adds "injector" (start) / "injected" (heal) or "error".
HistoryEvent FaultInvoke(const std::string& fault, bool start, int step);
// f fault, process proxy, type info: one event of an injector.
HistoryEvent InjectorEvent(nlohmann::json event);
// One entry of an egress record (runtime/egress_proxies.h): process egress,
// f egress, type info.
HistoryEvent EgressEvent(nlohmann::json entry);
// Process control, process nemesis: f start | stop | kill | restart | spawn |
// pause | resume | services with its value ({"pid"}, {"instance", "pid"}...).
HistoryEvent ProcessInvoke(const std::string& f, int step, nlohmann::json value);
// f note, process harness, type info: {"note": text}.
HistoryEvent Note(int step, const std::string& text);
// A note with more than its text ({"note": ..., "burst": ...}).
HistoryEvent NoteWith(int step, nlohmann::json value);

// ---- Readers: what the builders above write, read back typed, so the
// reports never probe an event's JSON. Absent or ill-typed members read as
// "" / nullopt.

// A string member of `e`'s value that the builders write: "label" and
// "probe" (probes), "hook" and "cause" (hooks), "instance" (requests sent to
// a cluster instance), "error" (a failed completion).
std::string EventText(const HistoryEvent& e, const char* member);
// The request line of a request invoke ({"request": {"method", "url"}}).
struct RequestLine {
  std::string method;
  std::string url;
};
RequestLine RequestLineOf(const HistoryEvent& invoke);
// A counting probe's answer ("count"), as JSON text ("3"); nullopt when none.
std::optional<std::string> ProbeCountText(const HistoryEvent& completion);
// A burst's spread note ({"note": "burst spread", "burst": {...}}, written
// by the burst step): nullopt for any other event.
struct BurstSpreadNote {
  int step = -1;
  int n = 0;
  std::string mode;
  std::string arrival_header;
  std::optional<double> harness_spread_us;
  std::optional<double> target_spread_us;
};
std::optional<BurstSpreadNote> BurstSpreadOf(const HistoryEvent& note);
// The target (pid) ended other than by a step; `why`: "exited (signal 9 (Killed))".
HistoryEvent TargetExited(int step, int pid, const std::string& why);
// f wait, process harness, type ok: {"duration"}, and "past_window": true
// for a `wait: past_window` (duration: the one it resolved to).
HistoryEvent WaitEvent(int step, const std::string& duration, bool past_window = false);
// f batch, process batch: {"request", "batch": info}; BatchCompletion() is a
// RequestCompletion() that repeats "batch".
HistoryEvent BatchInvoke(const RecordedRequest& request, const nlohmann::json& batch, int step);
HistoryEvent BatchCompletion(const HistoryEvent& invoke, const RecordedExchange& exchange);
// f batch_result, process probe: {"batch": {"job", "job_name"}, "after"}.
HistoryEvent BatchResultInvoke(const std::string& job, const std::string& job_name, std::int64_t after, int step);
// f deliver, process deliverer-<copy>: {"request", "delivery"}; the completion
// is a RequestCompletion() repeating "delivery", plus "ack_lost": true.
HistoryEvent DeliverInvoke(const RequestSubject& subject, int copy, const RecordedRequest& request,
                           const nlohmann::json& delivery, int step);
HistoryEvent DeliverCompletion(const HistoryEvent& invoke, const RecordedExchange& exchange, bool ack_lost);
// f publish, process publisher: {"entry", "stream", "copy"}; the completion
// adds "entry_id" or "error".
HistoryEvent PublishInvoke(const RequestSubject& subject, const nlohmann::json& entry, const std::string& stream,
                           int copy, int step);
// f note about a message (fields of `subject`), process harness, type info.
HistoryEvent MessageNote(const RequestSubject& subject, int step, nlohmann::json value);

}  // namespace idemproof
