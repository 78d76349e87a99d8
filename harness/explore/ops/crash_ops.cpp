// The ops that cut work off (op_spec.h), both opt-in (weight 0 unless
// explore.ops gives one), both keeping at most two requests in flight:
// kill_mid_work (a crash point inside the work of any role: an action's
// request, a message's push or a batch run in its slow variant, in the
// background, a moment for the work to begin, then SIGKILL and a start: what
// follows meets what the dead work left; needs the target up, managed and not
// paused) and send_past_lease (the action's slow_past_lease variant in the
// background, then a wait past the lease: a later send of its key is a
// duplicate after the lease lapsed while the owner still runs).
#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"
#include "model/capabilities.h"

namespace idemproof::explore {
namespace {

// Adds `op` once per keyed pair for `action`, the capability provided as `p` says.
void AddKeyed(const OpContext& ctx, Op op, const std::string& action, const CapabilityProvision& p,
              std::vector<Op>& out) {
  op.action = action;
  op.variant = p.variant;
  op.hook = p.hook;
  for (const auto& [key, biz] : ctx.pairs) {
    if (key == kNoKey) continue;
    op.key = key;
    op.biz = biz;
    out.push_back(op);
  }
}

// "variant V" or "hook H": how the op's capability is provided.
std::string ProvidedBy(const Op& op) { return op.variant.empty() ? "hook " + op.hook : "variant " + op.variant; }

// A request cut by the kill never answers, and one outliving its lease
// answers only at the end (joined): neither captures anything for the ops
// that follow (a put of its resource would have no id to name).
void CaptureNothing(const PlanModel& before, PlanModel& m) { m.captured = before.captured; }

class KillMidWorkOp final : public OpSpec {
 public:
  const char* name() const override { return "kill_mid_work"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 0; }
  // Every role the explore block lists: each action (its key/biz pairs) the
  // target makes slow (slow_request: a variant or a hook), each message (its
  // ids) and each job whose push or run declares the capability's variant.
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    const ExploreBlock& b = ctx.block;
    const TargetDescription& target = ctx.target;
    if (!target.start) return OpCandidates{{}, "the target has no start command (process control needs one)"};
    OpCandidates out;
    std::string why;
    auto add_why = [&](const std::string& w) { why += (why.empty() ? "" : "; ") + w; };
    const std::string slow_variant = FindCapability(kSlowCapability)->variant;
    for (const auto& action : ctx.actions) {
      auto p = ResolveCapability(kSlowCapability, action, target);
      if (!p.ok()) {
        add_why(p.status().message());
        continue;
      }
      AddKeyed(ctx, Cut("send"), action, *p, out.ops);
    }
    for (const auto& message : b.messages) {
      auto it = target.messages.find(message);
      if (it == target.messages.end()) continue;  // the deliver op refuses it
      if (!it->second.variants.count(slow_variant)) {
        add_why("message " + message + " declares no variant '" + slow_variant + "'");
        continue;
      }
      for (const auto& key : b.keys) {
        if (key == kNoKey) continue;
        Op op = Cut("deliver");
        op.action = message;
        op.key = key;
        op.biz = b.biz.front();
        op.variant = slow_variant;
        out.ops.push_back(op);
      }
    }
    if (!b.jobs.empty() && target.batch && !target.batch->variants.count(slow_variant))
      add_why("the target's batch declares no variant '" + slow_variant + "'");
    if (!b.jobs.empty() && target.batch && target.batch->variants.count(slow_variant)) {
      for (const auto& job : b.jobs) {
        Op op = Cut("run_batch");
        op.name = job;
        op.from = b.batch_from;
        op.to = b.batch_to;
        op.variant = slow_variant;
        out.ops.push_back(op);
      }
    }
    out.absent = "no explore action, message or job the target makes slow" +
                 (why.empty() ? std::string() : " (" + why + ")");
    return out;
  }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    if (!m.up || !m.managed || m.background_sends >= 2) return false;
    if (op.work == "run_batch") return !m.jobs_run.count(op.name);
    if (op.work == "send") return !m.variant_pending.count(op.action) && rules.Captured(op, m);
    return true;
  }
  bool Timed(const Op&, const PlanModel&) const override { return true; }
  std::int64_t EstimateMs(const Op&) const override { return kMidWorkWaitMs + 560; }
  // The work in its slow variant in the background (a send's by a cause
  // before it, for its whole attempt: the retries after the restart repeat
  // it; a push once: one the kill cuts off is not pushed again by itself), a
  // wait into it, the kill (the crash point), the start after it, where every
  // retry, redelivery or rerun that follows meets what the dead work left.
  std::vector<Step> Steps(const Op& op) const override {
    std::vector<Step> out;
    if (op.work == "send") {
      out.push_back(CauseStep(op, kSlowCapability, false));
      out.push_back(BackgroundSendStep(op));
    } else if (op.work == "deliver") {
      Step push = DeliverStep(op);
      QueueOptions& o = push.Options<QueueOptions>();
      o.variant = op.variant;
      o.max_attempts = 1;
      o.background = true;
      out.push_back(push);
    } else {
      Step run = BatchStep("run_batch", op);
      BatchOptions& o = run.Options<BatchOptions>();
      o.variant = op.variant;
      o.background = true;
      out.push_back(run);
    }
    out.push_back(WaitStep(std::chrono::milliseconds(kMidWorkWaitMs)));
    out.push_back(MakeStep("kill"));
    out.push_back(MakeStep("restart"));
    return out;
  }
  // A job cut mid-run under a declared lease is not rerun before the lease lapsed.
  void AfterSteps(const Op& op, const PlanModel& before, PlanModel& m, const PlanRules& rules) const override {
    CaptureNothing(before, m);
    if (op.work == "run_batch" && rules.lease_declared) m.jobs_cut.insert(op.name);
  }
  std::string ToString(const Op& op) const override {
    std::string out = "kill_mid_work " + op.work + " ";
    if (op.work == "send") out += op.action + " " + op.key + "/" + op.biz;
    if (op.work == "deliver") out += op.action + " " + op.key;
    if (op.work == "run_batch")
      out += op.name + " [" + std::to_string(op.from) + ", " + std::to_string(op.to) + ")";
    return out + " (" + ProvidedBy(op) + ")";
  }
  // It restarts the target itself.
  void Track(const Op& op, PlanEnd& end) const override {
    end.paused = end.killed = false;
    if (op.work == "run_batch") end.RunJob(op);
  }

 private:
  Op Cut(const char* work) const {
    Op op;
    op.kind = this;
    op.work = work;
    return op;
  }
};

// Each explore action with a slow_past_lease variant ({{slow_ms}}: the
// declared lease x 1.5), on its keyed pairs.
class SendPastLeaseOp final : public OpSpec {
 public:
  const char* name() const override { return "send_past_lease"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 0; }
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    const auto& lease = ctx.target.idempotency.lease;
    OpCandidates out;
    std::string why;
    for (const auto& action : ctx.actions) {
      auto p = ResolveCapability(kPastLeaseCapability, action, ctx.target);
      if (!p.ok()) {
        why += (why.empty() ? "" : "; ") + p.status().message();
        continue;
      }
      Op op;
      op.kind = this;
      op.duration = lease ? *lease + std::chrono::milliseconds(200) : Duration::zero();
      AddKeyed(ctx, op, action, *p, out.ops);
    }
    if (!lease) {
      out.ops.clear();
      why = "the target declares no idempotency.lease";
    }
    out.absent = why.empty() ? "no explore action with a keyed pair" : why;
    return out;
  }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return m.up && m.background_sends < 2 && !m.variant_pending.count(op.action) && rules.Captured(op, m);
  }
  bool Timed(const Op&, const PlanModel&) const override { return true; }
  std::int64_t EstimateMs(const Op& op) const override {
    return 20 + std::chrono::duration_cast<std::chrono::milliseconds>(op.duration).count();
  }
  // Past the lease, the owner still running: what follows is late for its
  // lease (a send of its key is the duplicate class 2 is about).
  std::vector<Step> Steps(const Op& op) const override {
    return {CauseStep(op, kPastLeaseCapability, false), BackgroundSendStep(op), WaitStep(op.duration)};
  }
  void AfterSteps(const Op&, const PlanModel& before, PlanModel& m, const PlanRules&) const override {
    CaptureNothing(before, m);
  }
  std::string ToString(const Op& op) const override {
    return "send_past_lease " + op.action + " " + op.key + "/" + op.biz + " (" + ProvidedBy(op) + "), wait " +
           FormatDuration(op.duration);
  }
};

}  // namespace

std::unique_ptr<OpSpec> MakeKillMidWorkOp() { return std::make_unique<KillMidWorkOp>(); }
std::unique_ptr<OpSpec> MakeSendPastLeaseOp() { return std::make_unique<SendPastLeaseOp>(); }

}  // namespace idemproof::explore
