// The simulation's history and its judging: a trial records what happened as
// a real History (model/history.h), built through the history-event builders
// (model/history_events.h) as the runtime records a live run, and the
// built-in oracles (oracles/oracle.h) judge it, the same code that judges a
// live target. A fix to an oracle reaches the simulation, and the simulation
// tests the oracles.
//
// The simulated service is described as a target file would describe it
// (SimTarget): the reference's key header, replay marker, statuses, lease
// and TTL window; create_order with a records probe, pay with the provider's
// ledger as probe. A trial's history holds, in the order they happened:
//   - each request: a send invoke on its own process "client-<id>" and its
//     ok completion when the core answered, or an info completion ("lost in
//     a crash") when a crash abandoned it;
//   - each crash: the target's kill and start (process control, as a
//     scenario's `kill` + `start` record them; lease_recovery reads them);
//   - each wait; at the end the records probe of every order business id
//     and the ledger probe of the payment.
// Times are the simulated clock's (its nanoseconds since the simulation's
// epoch) plus one nanosecond per event, so events never tie.
//
// JudgeSimulation runs the expectations of SimScenario: one_record (orders),
// intent_reconciled (the payment), lease_recovery, identical_replay; plus
// no_internal_error, the simulation's own check that no answer is a 5xx (no
// oracle says that: a live target may fail; in the simulation nothing
// fails, so a 5xx is a store error, in the core or in the wiring).
//
// Thread-safety: SimTarget and SimScenario are built once and read-only;
// a SimRecorder is one trial's. JudgeSimulation may run concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/http_message.h"
#include "model/history.h"
#include "model/scenario.h"
#include "model/target.h"
#include "sim/sim_plan.h"

namespace idemproof::sim {

// One broken expectation: the oracle's name ("one_record", or
// "no_internal_error") and its evidence, one line.
struct Violation {
  std::string invariant;
  std::string evidence;
};

// The simulated service as a target file describes it, for a core whose
// lease is `lease` and whose completed records live `window`.
// REQUIRES: lease and window are whole milliseconds, > 0.
const TargetDescription& SimTarget(std::chrono::nanoseconds lease, std::chrono::nanoseconds window);

// The scenario whose `expect:` the simulation checks (see above).
const Scenario& SimScenario();

// Builds one trial's History. `now_ns` is the simulated clock's time since
// the simulation's epoch; request ids are the scheduler's (1, 2, ...).
class SimRecorder {
 public:
  // Request `id` of pool action `action` was sent by plan op `step`.
  void Sent(int id, int action, int step, std::int64_t now_ns);
  // Request `id` got `answer`.
  void Answered(int id, const HttpResponse& answer, std::int64_t now_ns);
  // The process was killed at plan op `step`, its requests `abandoned`
  // (their answers lost), and started again.
  void Crashed(const std::vector<int>& abandoned, int step, std::int64_t now_ns);
  // The clock moved by `seconds` at plan op `step`.
  void Waited(std::int64_t seconds, int step, std::int64_t now_ns);
  // The records probe of an order business id: `count` orders.
  void Records(const std::string& biz, std::int64_t count, std::int64_t now_ns);
  // The provider's ledger for a payment business id: the transaction ids.
  void Ledger(const std::string& biz, const std::vector<std::string>& transactions, std::int64_t now_ns);

  const History& history() const { return history_; }
  // The history, moved out: the recorder is done.
  History Take() && { return std::move(history_); }

 private:
  std::int64_t Time(std::int64_t now_ns);
  void AppendWithCompletion(HistoryEvent invoke, nlohmann::json value, std::int64_t now_ns);

  History history_;
  std::vector<std::int64_t> invokes_;  // request id - 1 -> its invoke's index
  std::int64_t last_ns_ = -1;
};

struct Judgement {
  // Every expectation of SimScenario() that the history breaks, in its
  // order, then no_internal_error.
  std::vector<Violation> violations;
  // An oracle crashed or is missing (not a pass): its verdict; else "".
  std::string error;
};

Judgement JudgeSimulation(const History& history, const TargetDescription& target);

}  // namespace idemproof::sim
