// The ops that arm a failure (op_spec.h): hook (a target hook, e.g. "the next
// call fails with 503") and cause (a capability such as retryable_failure, by
// a variant of the action's next request or by a hook). Both need the target
// up; a cause by variant waits until the action's pending one was consumed.
#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"
#include "model/capabilities.h"

namespace idemproof::explore {
namespace {

class HookOp final : public OpSpec {
 public:
  const char* name() const override { return "hook"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 2; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    OpCandidates out{{}, "the target declares no hook besides heal"};
    for (const auto& h : ctx.hooks) {
      Op op;
      op.kind = this;
      op.name = h;
      out.ops.push_back(op);
    }
    return out;
  }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override { return m.up; }
  std::vector<Step> Steps(const Op& op) const override {
    Step step = MakeStep("hook");
    step.Options<HookOptions>().name = op.name;
    return {step};
  }
  std::int64_t EstimateMs(const Op&) const override { return 10; }
  std::string ToString(const Op& op) const override { return "hook " + op.name; }
};

// Each capability asked for (default: every one but heal and the message
// ones), per explore action by its variant, else once by its hook.
class CauseOp final : public OpSpec {
 public:
  const char* name() const override { return "cause"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 2; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    std::vector<std::string> causes;
    if (ctx.block.causes) {
      causes = *ctx.block.causes;
    } else {
      // A message capability (die_before_ack) acts on a publish, no action's request.
      for (const auto& c : CapabilityTable())
        if (!c.always && !c.message) causes.push_back(c.name);
    }
    OpCandidates out;
    std::string why;
    for (const auto& cause : causes) {
      bool by_hook = false, any = false;
      for (const auto& action : ctx.actions) {
        auto p = ResolveCapability(cause, action, ctx.target);
        if (!p.ok()) {
          why += (why.empty() ? "" : "; ") + p.status().message();
          continue;
        }
        Op op;
        op.kind = this;
        op.name = cause;
        op.action = action;
        op.variant = p->variant;
        op.hook = p->hook;
        if (!p->hook.empty()) {
          if (by_hook) continue;
          by_hook = true;
        }
        any = true;
        out.ops.push_back(op);
      }
      if (!any && ctx.block.causes)
        return ctx.ConfigError("cause " + cause, "the target provides no " + cause + " (" + why + ")");
    }
    out.absent = why.empty() ? "no capability to cause" : why;
    return out;
  }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules&) const override {
    return m.up && (op.variant.empty() || !m.variant_pending.count(op.action));
  }
  // The plan model gives a variant to the action's next request only
  // (PlanModel::variant_pending): so does the generated step.
  std::vector<Step> Steps(const Op& op) const override { return {CauseStep(op, op.name, true)}; }
  std::int64_t EstimateMs(const Op&) const override { return 10; }
  std::string ToString(const Op& op) const override {
    std::string out = "cause " + op.name;
    if (!op.variant.empty()) out += " (variant " + op.variant + " of " + op.action + ")";
    if (!op.hook.empty()) out += " (hook " + op.hook + ")";
    return out;
  }
};

}  // namespace

std::unique_ptr<OpSpec> MakeHookOp() { return std::make_unique<HookOp>(); }
std::unique_ptr<OpSpec> MakeCauseOp() { return std::make_unique<CauseOp>(); }

}  // namespace idemproof::explore
