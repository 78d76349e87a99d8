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
// One kind of finding is set aside, not counted as a violation:
// lease_recovery assumes the crashed request is the only one that can hold
// its key, retried one request at a time, and judges a retry by its answer
// alone. The simulation also sends other requests of the key around the
// crash, and the correct core then answers rightly what the oracle calls
// wrong: 409 behind a concurrent retry's claim, or behind a retry that
// claimed and crashed again ("still in progress after its lease ended");
// 422 after a request with the other payload took the key ("got
// mismatch"); a retry's 201 while a crashed request that never claimed
// "held" the key, the 409 that "showed the claim" being another retry's.
// The correct core shows each within a few thousand plans (e.g. send k1;
// crash; wait; send k1; send k1 other payload; step it). Until the oracle
// knows, a lease_recovery finding whose every key is one of these, with
// another request of the key that could explain the answer (a mismatch: one
// of the other payload invoked before it; else one invoked between the
// crash and it), goes to Judgement::set_aside. Any other finding (two
// completions, a record count, a refusal no other request explains) stays
// a violation.
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
  std::vector<Violation> set_aside;  // the oracle gap above
  // An oracle crashed or is missing (not a pass): its verdict; else "".
  std::string error;
};

Judgement JudgeSimulation(const History& history, const TargetDescription& target);

}  // namespace idemproof::sim
