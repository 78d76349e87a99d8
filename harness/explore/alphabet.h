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
// Each op kind is an OpSpec (op_spec.h) in harness/explore/ops/: its
// candidates, precondition, steps and model update are its own; the
// alphabet asks every registered kind in turn (the draw order).
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

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "explore/explore_spec.h"
#include "explore/op_spec.h"
#include "model/scenario.h"
#include "model/target.h"
#include "runtime/interpreter.h"

namespace idemproof::explore {

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
  // The explore block resolved against the target, and the rules' captures.
  static Result<OpContext> Resolve(const ExploreSpec& spec, const TargetDescription& target, PlanRules& rules);
  // Adds `kind`'s runnable candidates as a group, or says why it is left out.
  Status AddKind(const OpSpec& kind, const OpContext& ctx, const runtime::Interpreter& interpreter);
  // Drops the kinds whose required kind is not in the alphabet.
  void DropUnsupported();
  // kInvalidConfig unless some kind reaching the target's logic is in it.
  Status CheckReachesLogic(const OpContext& ctx) const;
  bool Has(const std::string& kind) const;

  PlanRules rules_;
  std::vector<std::pair<int, std::vector<Op>>> groups_;  // every op, by kind, weighted
  std::vector<ExcludedOp> excluded_;
  PlanModel initial_;
};

}  // namespace idemproof::explore
