// The process ops (op_spec.h) on the main instance idemproof started (they
// need the target's start command): kill (SIGKILL; needs the target up),
// restart (stop+start, or start after a kill: a killed target can always be
// restarted, so some op always is), pause / resume (SIGSTOP / SIGCONT; while
// paused only resume, waits and kill may follow, and a plan that ends
// paused is resumed by ToScenario).
#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"

namespace idemproof::explore {
namespace {

// A bare process step of the kind's own name, when the target has a start command.
class ProcessOp : public OpSpec {
 public:
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    if (!ctx.target.start) return OpCandidates{{}, no_start()};
    Op op;
    op.kind = this;
    return OpCandidates{{op}, ""};
  }
  std::vector<Step> Steps(const Op&) const override { return {MakeStep(name())}; }
  std::string ToString(const Op&) const override { return name(); }

 protected:
  virtual std::string no_start() const { return "the target has no start command (process control needs one)"; }
};

class KillOp final : public ProcessOp {
 public:
  const char* name() const override { return "kill"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 1; }
  bool runs_while_paused() const override { return true; }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override { return m.up && m.managed; }
  std::int64_t EstimateMs(const Op&) const override { return 50; }
  void Track(const Op&, PlanEnd& end) const override {
    end.paused = false;
    end.killed = true;
  }
};

class RestartOp final : public ProcessOp {
 public:
  const char* name() const override { return "restart"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 1; }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override { return m.managed; }
  // A graceful restart keeps to the budget; one that brings a killed target
  // back is always allowed.
  bool Timed(const Op&, const PlanModel& m) const override { return m.up; }
  std::int64_t EstimateMs(const Op&) const override { return 500; }
  void Track(const Op&, PlanEnd& end) const override { end.killed = false; }
};

class SignalOp : public ProcessOp {
 public:
  std::int64_t EstimateMs(const Op&) const override { return 10; }

 protected:
  std::string no_start() const override {
    return "the target has no start command (pause/resume signal the process idemproof started)";
  }
};

class PauseOp final : public SignalOp {
 public:
  const char* name() const override { return "pause"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 1; }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override {
    return m.up && m.managed && !m.paused;
  }
  // Without resume a pause could leave nothing allowed but waits.
  std::optional<std::pair<std::string, std::string>> Requires() const override {
    return std::pair<std::string, std::string>{"resume", "a paused target could not be resumed"};
  }
  void Track(const Op&, PlanEnd& end) const override { end.paused = true; }
};

class ResumeOp final : public SignalOp {
 public:
  const char* name() const override { return "resume"; }
  int default_weight() const override { return 2; }
  bool runs_while_paused() const override { return true; }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override { return m.paused; }
  void Track(const Op&, PlanEnd& end) const override { end.paused = false; }
};

}  // namespace

std::unique_ptr<OpSpec> MakeKillOp() { return std::make_unique<KillOp>(); }
std::unique_ptr<OpSpec> MakeRestartOp() { return std::make_unique<RestartOp>(); }
std::unique_ptr<OpSpec> MakePauseOp() { return std::make_unique<PauseOp>(); }
std::unique_ptr<OpSpec> MakeResumeOp() { return std::make_unique<ResumeOp>(); }

}  // namespace idemproof::explore
