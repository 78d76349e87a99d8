// OpSpec: everything about one kind of explore op (`send`, `kill`,
// `run_batch`, ...) in one object, the shape of the step kinds
// (model/step_kind.h): its name under explore.ops and default weight, its
// candidates (the ops of the kind a target and an explore block allow, or why
// none), its precondition (allowed now, on the PlanModel), what it does to the
// plan model beyond its steps, the scenario steps it expands to (their
// options filled here: the step kinds know nothing of explore), its estimated
// time, its one-line form and what it leaves at the plan's end. An Op points
// at its kind; nothing outside the kinds' own files asks which kind an op is.
//
// The kinds live in harness/explore/ops/, one file per family, registered in
// harness/explore/ops/builtin_ops.cpp (the one place, in the order the
// alphabet lists them: that order is the plans' draw order, so a fixed seed
// keeps its plans). The alphabet (alphabet.h) and the plan generator
// (plan.h) ask the kinds.
//
// Add an op kind:
//  1. harness/explore/ops/NAME_ops.cpp (or an existing family's file): a class
//     deriving from OpSpec, and a factory `std::unique_ptr<OpSpec> MakeNAMEOp()`
//     declared in ops/builtin_ops.h;
//  2. one line in ops/builtin_ops.cpp registering it (where it belongs in the
//     draw order), the file in harness/explore/CMakeLists.txt;
//  3. its weight and meaning in docs/ (explore.ops).
//
// Thread-safety: a spec is immutable; the registry is built once (Ops() in ops/builtin_ops.h, a
// function-local static) and read-only after.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "base/status.h"
#include "explore/explore_spec.h"
#include "model/plan_model.h"
#include "model/scenario.h"
#include "model/target.h"

namespace idemproof::explore {

using ::idemproof::PlanModel;
class OpSpec;

// kill_mid_work: how long the work runs before the kill (the scripted
// crash points' wait: long enough for the request, push or run to reach its
// slow part, well inside a 1.5 s slow variant).
inline constexpr std::int64_t kMidWorkWaitMs = 400;
// The capabilities kill_mid_work (on an action) and send_past_lease cause.
inline constexpr char kSlowCapability[] = "slow_request";
inline constexpr char kPastLeaseCapability[] = "slow_past_lease";

struct Op {
  const OpSpec* kind = nullptr;  // REQUIRES: set (a registered kind, OpNamed)
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

  // The scenario steps this op stands for (its kind's Steps).
  std::vector<Step> Steps() const;
  // One line: "send create_order k1/b1", "wait 100ms", "kill".
  std::string ToString() const;
  bool operator==(const Op& other) const;
  bool operator!=(const Op& other) const { return !(*this == other); }
};
std::ostream& operator<<(std::ostream& os, const Op& op);

// What the kinds' candidates are drawn from: the explore block resolved
// against the target (Alphabet::Build makes it).
struct OpContext {
  OpContext(const ExploreSpec& explore_spec, const TargetDescription& target_description)
      : spec(explore_spec), block(explore_spec.explore), target(target_description) {}
  const ExploreSpec& spec;
  const ExploreBlock& block;
  const TargetDescription& target;
  std::vector<std::string> actions;  // explore.actions, or every action needing no capture
  std::vector<std::string> hooks;    // explore.hooks, or every hook but heal
  std::vector<std::pair<std::string, std::string>> pairs;  // (key, biz)
  std::vector<std::string> callers{""};                    // explore.callers, or none ("")
  std::vector<std::string> instances{"main"};              // main and those the prologue spawned
  // kInvalidConfig "explore: MESSAGE" at the item that named it (ExploreBlock::marks),
  // else at the explore block.
  Status ConfigError(const std::string& item, const std::string& message) const;
};

// A kind's ops for one alphabet, or (none) why not.
struct OpCandidates {
  std::vector<Op> ops;
  std::string absent;  // why there are none, when `ops` is empty
};

// What the preconditions and the model updates read of the alphabet.
struct PlanRules {
  std::map<std::string, std::set<std::string>> needs_captured;  // action -> variables some action captures
  std::map<std::string, std::set<std::string>> provides;        // action -> variables (ProvidedVariables)
  bool lease_declared = false;  // a job cut mid-run waits out a lease before its rerun
  // True when every variable `op.action`'s request uses is captured for op.biz.
  bool Captured(const Op& op, const PlanModel& model) const;
  // Advances `model` past `step` (its `after`, then its kind's Plan).
  void ApplyStep(const Step& step, PlanModel& model) const;
};

// What a plan leaves at its end, for ToScenario (plan.h).
struct PlanEnd {
  bool paused = false;
  bool killed = false;
  std::vector<Op> jobs;  // the first op running each job, in order
  // Records `op` as its job's (op.name) run unless one came before.
  void RunJob(const Op& op);
};

class OpSpec {
 public:
  virtual ~OpSpec() = default;

  // Its name under explore.ops ("send_other"), unique in the registry.
  virtual const char* name() const = 0;
  // Its weight unless explore.ops gives one (0: opt-in).
  virtual int default_weight() const = 0;

  // The ops of this kind `ctx` allows (with `absent` saying why when none);
  // kInvalidConfig when the explore block names what the target lacks.
  virtual Result<OpCandidates> Candidates(const OpContext& ctx) const = 0;
  // The kind's own precondition in `model` (the alphabet checked the time
  // budget and a paused main first: Alphabet::Allowed).
  virtual bool Allowed(const Op& op, const PlanModel& model, const PlanRules& rules) const = 0;
  // The scenario steps `op` stands for, their options filled.
  virtual std::vector<Step> Steps(const Op& op) const = 0;
  // What `op` does to `model` beyond its steps' Plan (`before`: the model
  // before the op). Default: nothing.
  virtual void AfterSteps(const Op& op, const PlanModel& before, PlanModel& model, const PlanRules& rules) const;
  // Estimated wall time of `op`, for the window budget.
  virtual std::int64_t EstimateMs(const Op& op) const = 0;
  // True when `op` must fit in the remaining window budget in `model`.
  virtual bool Timed(const Op& /*op*/, const PlanModel& /*model*/) const { return false; }
  // True when it may run while main is paused (resume, waits, kill).
  virtual bool runs_while_paused() const { return false; }
  // True when it strikes the target or its surroundings (the nemesis: a
  // kill, restart or pause, a fault, a hook or cause, a client that gives
  // up): what the hunt counts as a fault fired.
  virtual bool strikes() const { return false; }
  // True when it reaches the target's business logic (send, deliver,
  // run_batch): an alphabet needs one such kind.
  virtual bool reaches_logic() const { return false; }
  // A kind this one is useless without, and why ("resume" for pause): the
  // alphabet drops this one when that one is not in it.
  virtual std::optional<std::pair<std::string, std::string>> Requires() const { return std::nullopt; }
  // "send create_order k1/b1".
  virtual std::string ToString(const Op& op) const = 0;
  // What `op` leaves at the plan's end (paused, killed, a job run).
  virtual void Track(const Op& /*op*/, PlanEnd& /*end*/) const {}
};

// The op kinds by name.
class OpRegistry {
 public:
  // kInvalidArgument when the name is taken.
  Status Register(std::unique_ptr<OpSpec> kind);
  // nullptr when unknown.
  const OpSpec* Find(const std::string& name) const;
  // Registration order (the alphabet's draw order).
  std::vector<const OpSpec*> Kinds() const;
  std::vector<std::string> Names() const;

 private:
  std::vector<std::unique_ptr<OpSpec>> kinds_;
};


}  // namespace idemproof::explore
