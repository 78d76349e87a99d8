// Alphabet: the ops a generated plan is made of, built from a target
// description, an explore spec and what the interpreter can execute, with
// the preconditions that keep plans meaningful (PlanModel).
//
// An op is one thing a client, gateway or operator does (a send of any kind
// may go as one of the target's callers listed under explore.callers): send
// (the action's default payload), send_other (the same key with the other payload),
// send_equivalent (the same key, the default request rewritten into an equal
// form: payload `equivalent`, model/payload.h), send_changed (the same key, a
// value of the default's JSON body changed: payload `value_changed`),
// send_then_kill (a send whose answer's arrival SIGKILLs the target: `then:
// kill`; needs the target up and started by idemproof, leaves it down),
// send_background (a send whose answer nobody waits for: it is still in
// flight while the next ops run; opt-in, weight 0 unless explore.ops gives
// one; at most two per plan, all joined at the end), burst
// (n identical requests at once), wait (short, or past the declared lease),
// kill (SIGKILL), restart (stop+start, or start after a kill), hook (a target
// hook, e.g. "the next call fails with 503"), cause (a capability such as
// retryable_failure, by a variant of the action's next request or a hook),
// fault (a send through a
// declared fault, started and healed around it), pause / resume (SIGSTOP /
// SIGCONT of the main instance), deliver (push a declared message to the
// consumer), redeliver (push a message delivered before again, two copies at
// once), run_batch (a batch job over the declared rows, possibly failing
// part-way) and rerun (that job again); kill_mid_work (a crash point inside
// the work of any role: an action's request, a message's push or a batch
// run in its slow variant, in the background, a moment for the work to
// begin, then SIGKILL and a start: what follows meets what the dead work
// left) and send_past_lease (the action's slow_past_lease variant in the
// background, then a wait past the lease: a later send of its key is a
// duplicate after the lease lapsed while the owner still runs);
// both opt-in (weight 0 unless explore.ops gives one). Each op renders to one or
// more scenario steps, so a plan is an ordinary Scenario run by the
// ordinary Interpreter.
//
// Ops the harness knows but cannot generate here are not faked: Build()
// lists them in `excluded` with the reason (nothing declared for them in the
// target or the explore block, or the interpreter's NeedsOf(): no injector...).
//
// Preconditions (PlanModel): sends, bursts, hooks, causes and faults need the
// target up; kill needs it up and started by idemproof; restart needs a start
// command; send_other (send_equivalent, send_changed) needs the key used before, and not first used right
// after a hook or by the request a cause's variant changed (either may make that request fail retryably, which releases
// the key: another payload then rightly executes); an action whose request
// uses a captured variable needs an earlier send of an action capturing it
// for the same biz; waits and graceful restarts keep the plan's estimated
// length 1 s under the declared retry window (a retry past the window may
// execute again), and a killed target can always be restarted. pause needs
// the target up, managed and running; while it is paused only resume, waits
// and kill may follow (a request would hang until its timeout), and a plan
// that ends paused is resumed by ToScenario (plan.h). deliver / redeliver /
// run_batch / rerun need the target up and not paused; redeliver needs the
// message delivered before; run_batch a job not run yet; rerun a job run
// before (after a kill_mid_work of it, and a declared lease, only once a
// wait_past_lease followed). kill_mid_work needs the target up, managed and
// not paused; it and send_past_lease keep at most two requests in flight.
// Every job run gets a clean run at the end (ToScenario), the
// reference range_continuity compares with.
//
// Thread-safety: plain values; an Alphabet is read-only once built.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "explore/explore_spec.h"
#include "explore/plan_model.h"
#include "base/duration.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "runtime/interpreter.h"

namespace idemproof::explore {

enum class OpKind {
  kSend, kSendOther, kSendEquivalent, kSendChanged, kSendThenKill, kSendBackground, kBurst, kWait, kWaitPastLease, kWaitPastWindow, kKill, kRestart, kHook, kFault,
  kPause, kResume, kDeliver, kRedeliver, kRunBatch, kRerun, kCause, kKillMidWork, kSendPastLease
};
const char* OpKindName(OpKind kind);  // as under explore.ops
// The ops that are one send: send, send_other, send_equivalent,
// send_changed, send_then_kill, send_background.
inline bool IsSendOp(OpKind kind) {
  return kind == OpKind::kSend || kind == OpKind::kSendOther || kind == OpKind::kSendEquivalent ||
         kind == OpKind::kSendChanged || kind == OpKind::kSendThenKill || kind == OpKind::kSendBackground;
}

// kill_mid_work: how long the work runs before the kill (the scripted
// crash points' wait: long enough for the request, push or run to reach its
// slow part, well inside a 1.5 s slow variant).
inline constexpr std::int64_t kMidWorkWaitMs = 400;
// The capabilities kill_mid_work (on an action) and send_past_lease cause.
inline constexpr char kSlowCapability[] = "slow_request";
inline constexpr char kPastLeaseCapability[] = "slow_past_lease";

struct Op {
  OpKind kind = OpKind::kSend;
  std::string action;  // send / send_other / burst / fault; deliver / redeliver: the message name
  std::string key;     // symbolic; deliver / redeliver: the symbolic message id
  std::string biz;     // symbolic
  std::string name;    // hook / fault name; cause: the capability; run_batch / rerun / kill_mid_work: the symbolic job
  // cause / kill_mid_work / send_past_lease: how the target provides the
  // capability (model/capabilities.h): a variant of `action`'s next request
  // (kill_mid_work on a message or a job: the variant of its push or run),
  // or a hook.
  std::string variant;
  std::string hook;
  Duration duration{0};  // waits
  int n = 0;             // burst
  BurstMode mode = BurstMode::kThreads;
  int copies = 1;      // deliver / redeliver: copies pushed at once
  std::int64_t from = 0, to = 0;          // run_batch: rows [from, to)
  std::optional<std::int64_t> fail_after; // run_batch: the run fails after K rows
  // send / send_other: the target instance; "main", or one the file's fixed
  // steps spawned before the generated ops (it answers while main is paused
  // or killed: a takeover from a frozen owner).
  std::string instance = "main";
  // send kinds: the target caller it goes as ("first" / "second", from
  // explore.callers); "" = none.
  std::string caller;
  // kill_mid_work: whose work the kill cuts: "send" (action/key/biz),
  // "deliver" (message `action`, id `key`) or "run_batch" (job `name`).
  std::string work;

  // The scenario steps this op stands for: which kinds, in order, here; each
  // step's options from its kind (StepKindSpec::FromOp, harness/steps/).
  std::vector<Step> Steps() const;
  // One line: "send create_order k1/b1", "wait 100ms", "kill".
  std::string ToString() const;
  bool operator==(const Op& other) const;
  bool operator!=(const Op& other) const { return !(*this == other); }
};
std::ostream& operator<<(std::ostream& os, const Op& op);

// An op kind left out of the alphabet, and why.
struct ExcludedOp {
  std::string op;
  std::string reason;
};

class Alphabet {
 public:
  // Builds the alphabet. kInvalidConfig when the spec names unknown actions
  // or hooks, or when no send op remains.
  static Result<Alphabet> Build(const ExploreSpec& spec, const TargetDescription& target,
                                const runtime::Interpreter& interpreter);

  // The model after the spec's fixed prologue (steps before insert_at).
  const PlanModel& initial() const { return initial_; }
  // True when `op` may run in state `model`.
  bool Allowed(const Op& op, const PlanModel& model) const;
  // Advances the model past `op`.
  void Apply(const Op& op, PlanModel& model) const;
  // The ops allowed in `model`, grouped by kind with the kind's weight.
  std::vector<std::pair<int, std::vector<Op>>> Choices(const PlanModel& model) const;

  const std::vector<std::pair<int, std::vector<Op>>>& groups() const { return groups_; }
  const std::vector<ExcludedOp>& excluded() const { return excluded_; }

 private:
  void ApplyStep(const Step& step, PlanModel& model) const;
  // True when every variable `op.action`'s request uses is captured for op.biz.
  bool Captured(const Op& op, const PlanModel& model) const;
  // Variables an action's request uses that some action captures.
  std::map<std::string, std::set<std::string>> needs_captured_;   // action -> variables
  std::map<std::string, std::set<std::string>> provides_;          // action -> variables
  std::vector<std::pair<int, std::vector<Op>>> groups_;  // every op, by kind, weighted
  std::vector<ExcludedOp> excluded_;
  PlanModel initial_;
  bool lease_declared_ = false;  // a job cut mid-run waits out a lease before its rerun
};

}  // namespace idemproof::explore
