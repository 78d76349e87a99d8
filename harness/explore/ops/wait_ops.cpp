// The wait ops (op_spec.h): wait (explore.wait, short), wait_past_lease (past
// the declared lease: a job cut mid-run may then be rerun) and
// wait_past_window (past the declared idempotency.window, at most once per
// plan: leaving the window is its point, so the budget does not hold it
// back). A paused target lets waits run.
#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"

namespace idemproof::explore {
namespace {

class WaitOpBase : public OpSpec {
 public:
  bool runs_while_paused() const override { return true; }
  std::vector<Step> Steps(const Op& op) const override { return {WaitStep(op.duration)}; }
  std::int64_t EstimateMs(const Op& op) const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(op.duration).count();
  }
  bool Allowed(const Op&, const PlanModel&, const PlanRules&) const override { return true; }
  bool Timed(const Op&, const PlanModel&) const override { return true; }
  std::string ToString(const Op& op) const override { return std::string(name()) + " " + FormatDuration(op.duration); }

 protected:
  // The one op of the kind, waiting `duration`.
  OpCandidates One(Duration duration) const {
    Op op;
    op.kind = this;
    op.duration = duration;
    return {{op}, ""};
  }
};

class WaitOp final : public WaitOpBase {
 public:
  const char* name() const override { return "wait"; }
  int default_weight() const override { return 2; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override { return One(ctx.block.wait); }
};

class WaitPastLeaseOp final : public WaitOpBase {
 public:
  const char* name() const override { return "wait_past_lease"; }
  int default_weight() const override { return 1; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    const auto& lease = ctx.target.idempotency.lease;
    if (!lease) return OpCandidates{{}, "the target declares no idempotency.lease"};
    return One(*lease + std::chrono::milliseconds(200));
  }
  // Every job a kill_mid_work cut may run again.
  void AfterSteps(const Op&, const PlanModel&, PlanModel& m, const PlanRules&) const override { m.jobs_cut.clear(); }
};

class WaitPastWindowOp final : public WaitOpBase {
 public:
  const char* name() const override { return "wait_past_window"; }
  int default_weight() const override { return 0; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    if (auto past = PastWindowWait(ctx.target.idempotency)) return One(*past);
    // Say which: a 24 h window was declared, just not one to wait out.
    const auto& window = ctx.target.idempotency.window;
    return OpCandidates{{},
                        window ? "the declared idempotency.window (" + FormatDuration(*window) +
                                     ") is longer than the longest wait explore makes past it (" +
                                     FormatDuration(kLongestPastWindow) + "): no plan waits it out"
                               : std::string("the target declares no idempotency.window")};
  }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override {
    return m.past_window_waits < 1 && !m.used_keys.empty();
  }
  bool Timed(const Op&, const PlanModel&) const override { return false; }
  std::vector<Step> Steps(const Op& op) const override { return {WaitStep(op.duration, true)}; }
};

}  // namespace

std::unique_ptr<OpSpec> MakeWaitOp() { return std::make_unique<WaitOp>(); }
std::unique_ptr<OpSpec> MakeWaitPastLeaseOp() { return std::make_unique<WaitPastLeaseOp>(); }
std::unique_ptr<OpSpec> MakeWaitPastWindowOp() { return std::make_unique<WaitPastWindowOp>(); }

}  // namespace idemproof::explore
