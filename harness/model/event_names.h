// Event names: the values of a HistoryEvent's `f` and `process` fields
// (model/history.h holds the event; model/history_events.h builds each
// shape). Apart from both so the history can tell a request by its `f`
// without depending on the builders.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <string>

namespace idemproof {

// Values of HistoryEvent::f.
namespace event_f {
inline constexpr char kSend[] = "send";
inline constexpr char kBurst[] = "burst";
inline constexpr char kProbe[] = "probe";
inline constexpr char kBatchResult[] = "batch_result";
inline constexpr char kHook[] = "hook";
inline constexpr char kFault[] = "fault";
inline constexpr char kStart[] = "start";
inline constexpr char kStop[] = "stop";
inline constexpr char kKill[] = "kill";
inline constexpr char kRestart[] = "restart";
inline constexpr char kPause[] = "pause";
inline constexpr char kResume[] = "resume";
// The wait for the readiness request after a start `until: accepting`
// (value {"pid", "error"}): requests before it raced the start-up.
inline constexpr char kReady[] = "ready";
inline constexpr char kSpawn[] = "spawn";
inline constexpr char kServices[] = "services";
inline constexpr char kBatch[] = "batch";
inline constexpr char kDeliver[] = "deliver";
inline constexpr char kPublish[] = "publish";
inline constexpr char kNote[] = "note";
inline constexpr char kWait[] = "wait";
// The target process ended, or was found not to be the one answering, other
// than by a step (value: "pid", "exit", "why"): the oracles cannot be valid.
inline constexpr char kTargetExited[] = "target_exited";
inline constexpr char kEgress[] = "egress";
inline constexpr char kCause[] = "cause";
}  // namespace event_f

// Values of HistoryEvent::process (the lanes of a history).
namespace event_process {
inline constexpr char kHarness[] = "harness";  // notes and waits
inline constexpr char kNemesis[] = "nemesis";  // faults, hooks, process control
inline constexpr char kProbe[] = "probe";      // probes and batch results
inline constexpr char kProxy[] = "proxy";      // the chaos proxy's own events
inline constexpr char kEgress[] = "egress";    // the egress record: requests that reached a downstream
inline constexpr char kBatch[] = "batch";      // batch job runs
inline constexpr char kPublisher[] = "publisher";
// "client-N": 0 = the foreground sends.
inline std::string Client(int n) { return "client-" + std::to_string(n); }
// "burst-N": the n-th request of a burst.
inline std::string Burst(int n) { return "burst-" + std::to_string(n); }
// "deliverer-N".
inline std::string Deliverer(int copy) { return "deliverer-" + std::to_string(copy); }
}  // namespace event_process

}  // namespace idemproof
