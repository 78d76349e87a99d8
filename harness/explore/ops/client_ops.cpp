// The client-side op kinds (op_spec.h), both opt-in (weight 0 unless
// explore.ops gives one):
//  - send_abort: a client that gives up while the handler runs (issue 46, "a
//    client abort"): the action's slow_request capability on its next request,
//    then a send of a keyed pair whose timeout (kAbortAfterMs) closes the
//    connection long before the slow handler answers. What follows (a retry,
//    another payload, a kill) meets a key whose owner still runs or stored
//    what the gone client's stream held (answer_after_abort judges the retry);
//  - send_caller: a send of a used key as the target's second declared caller
//    with a business id of its own (biz + "-" + caller): a key in another
//    caller's hands is another key (caller_scope; a middleware keying by the
//    key alone replays the first caller's answer). Its own biz keeps the
//    record counts right: two callers' orders are two orders.
#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"
#include "model/capabilities.h"

namespace idemproof::explore {
namespace {

// How long the aborting client waits: well inside a slow variant (1.5 s on
// the reference), past the request's write.
inline constexpr std::int64_t kAbortAfterMs = 300;

// An op of `kind` on `action` for each keyed pair (a keyless pair has no
// key to give up on or to hand to another caller), `fill` setting the rest.
template <typename Fill>
void AddKeyedPairOps(const OpSpec* kind, const std::string& action, const OpContext& ctx, OpCandidates& out,
                     Fill fill) {
  for (const auto& [key, biz] : ctx.pairs) {
    if (key == kNoKey) continue;
    Op op;
    op.kind = kind;
    op.action = action;
    op.key = key;
    op.biz = biz;
    fill(op);
    out.ops.push_back(op);
  }
}

class SendAbortOp final : public OpSpec {
 public:
  const char* name() const override { return "send_abort"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 0; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    OpCandidates out;
    std::string why;
    for (const auto& action : ctx.actions) {
      auto p = ResolveCapability(kSlowCapability, action, ctx.target);
      if (!p.ok()) {
        why += (why.empty() ? "" : "; ") + p.status().message();
        continue;
      }
      AddKeyedPairOps(this, action, ctx, out, [&](Op& op) {
        op.variant = p->variant;
        op.hook = p->hook;
        op.duration = std::chrono::milliseconds(kAbortAfterMs);
      });
    }
    out.absent = "needs an explore action the target makes slow (slow_request) with a keyed pair" +
                 (why.empty() ? std::string() : " (" + why + ")");
    return out;
  }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return m.up && !m.variant_pending.count(op.action) && rules.Captured(op, m);
  }
  bool Timed(const Op&, const PlanModel&) const override { return true; }
  std::int64_t EstimateMs(const Op&) const override { return kAbortAfterMs + 20; }
  // The slow variant on this request only: the retries that follow are plain.
  std::vector<Step> Steps(const Op& op) const override {
    Step send = RequestStep("send", op);
    SendOptions& o = send.Options<SendOptions>();
    o.instance = kBalancedInstance;
    o.timeout = op.duration;
    return {CauseStep(op, kSlowCapability, true), send};
  }
  // No answer came: nothing captured from it.
  void AfterSteps(const Op&, const PlanModel& before, PlanModel& m, const PlanRules&) const override {
    m.captured = before.captured;
  }
  std::string ToString(const Op& op) const override {
    return "send_abort " + op.action + " " + op.key + "/" + op.biz + " (" +
           (op.variant.empty() ? "hook " + op.hook : "variant " + op.variant) + ") after " +
           FormatDuration(op.duration);
  }
};

class SendCallerOp final : public OpSpec {
 public:
  const char* name() const override { return "send_caller"; }
  int default_weight() const override { return 0; }
  // Each explore action's keyed pairs, as the target's second caller (the
  // first, when explore.callers lists them, is what the other sends go as).
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    OpCandidates out;
    if (ctx.target.callers.size() < 2) {
      out.absent = "needs two callers declared in the target (callers:)";
      return out;
    }
    if (ctx.callers.size() > 1 || !ctx.callers.front().empty()) {
      out.absent = "explore.callers already sends as both callers";
      return out;
    }
    for (const auto& action : ctx.actions)
      AddKeyedPairOps(this, action, ctx, out, [](Op& op) { op.caller = "second"; });
    out.absent = "needs an explore action with a keyed pair";
    return out;
  }
  // Once the first caller used the key: the second's send is then a reuse
  // of a key someone else holds.
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return m.up && m.used_keys.count({op.key, op.biz}) && rules.Captured(op, m);
  }
  std::int64_t EstimateMs(const Op&) const override { return 30; }
  std::vector<Step> Steps(const Op& op) const override {
    Step send = RequestStep("send", op);
    SendOptions& o = send.Options<SendOptions>();
    o.biz = op.biz + "-" + op.caller;
    o.caller = op.caller;
    o.instance = kBalancedInstance;
    return {send};
  }
  // Its answer's captures belong to its own biz, which no other op names.
  void AfterSteps(const Op&, const PlanModel& before, PlanModel& m, const PlanRules&) const override {
    m.captured = before.captured;
  }
  std::string ToString(const Op& op) const override {
    return "send_caller " + op.action + " " + op.key + "/" + op.biz + "-" + op.caller + " as " + op.caller;
  }
};

}  // namespace

std::unique_ptr<OpSpec> MakeSendAbortOp() { return std::make_unique<SendAbortOp>(); }
std::unique_ptr<OpSpec> MakeSendCallerOp() { return std::make_unique<SendCallerOp>(); }

}  // namespace idemproof::explore
