// The request ops (op_spec.h): one request of an explore action per (key,
// biz) pair: send (the action's default payload), send_other (the same key
// with the other payload), send_equivalent (the same key, the default request
// rewritten into an equal form: payload `equivalent`, model/payload.h),
// send_changed (the same key, a value of the default's JSON body changed),
// send_then_kill (a send whose answer's arrival SIGKILLs the target),
// send_background (a send nobody waits for: at most two per plan, joined at
// the end), burst (n identical requests at once) and fault (a send through a
// declared fault, started and healed around it). The sends go to every
// instance the prologue spawned and as every explore caller.
#include <sstream>

#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"

namespace idemproof::explore {
namespace {

// The ops of one request per explore action and (key, biz) pair.
class RequestOp : public OpSpec {
 public:
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    OpCandidates out;
    out.absent = absent();
    for (const auto& action : ctx.actions) {
      const ActionDescription& desc = ctx.target.actions.at(action);
      for (const auto& [key, biz] : ctx.pairs) {
        if (!Fits(desc, key)) continue;
        Op op;
        op.kind = this;
        op.action = action;
        op.key = key;
        op.biz = biz;
        Add(ctx, op, out.ops);
      }
    }
    return out;
  }
  std::string ToString(const Op& op) const override {
    return std::string(name()) + " " + op.action + " " + op.key + "/" + op.biz;
  }

 protected:
  // Why the kind has no op when none fits.
  virtual std::string absent() const { return "no action to send"; }
  // True when the action and key make an op of the kind.
  virtual bool Fits(const ActionDescription& /*desc*/, const std::string& /*key*/) const { return true; }
  // Adds the ops of one (action, key, biz) (`op`): default, `op` itself.
  virtual void Add(const OpContext& /*ctx*/, const Op& op, std::vector<Op>& out) const { out.push_back(op); }
  // The target can answer it (main up, or another instance) and its
  // captured variables are there.
  static bool Reachable(const Op& op, const PlanModel& m, const PlanRules& rules) {
    return (m.up || op.instance != "main") && rules.Captured(op, m);
  }
  // A send ops' step: `payload`, `then: kill`, `background`, to op.instance
  // (main: wherever the balancer places it, the same on a one-instance
  // target), as op.caller.
  static Step SendStep(const Op& op, PayloadVariant payload, bool then_kill, bool background) {
    Step step = RequestStep("send", op);
    SendOptions& o = step.Options<SendOptions>();
    o.payload = payload;
    o.kill_after_answer = then_kill;
    o.background = background;
    o.instance = op.instance == "main" ? kBalancedInstance : op.instance;
    o.caller = op.caller;
    return step;
  }
};

// A send with `payload`, to every instance as every caller.
class PlacedSendOp : public RequestOp {
 public:
  std::vector<Step> Steps(const Op& op) const override { return {SendStep(op, payload(), false, false)}; }
  std::int64_t EstimateMs(const Op&) const override { return 30; }
  std::string ToString(const Op& op) const override {
    std::string out = RequestOp::ToString(op);
    if (op.instance != "main") out += " @" + op.instance;
    if (!op.caller.empty()) out += " as " + op.caller;
    return out;
  }

 protected:
  virtual PayloadVariant payload() const { return PayloadVariant::kDefault; }
  void Add(const OpContext& ctx, const Op& base, std::vector<Op>& out) const override {
    for (const auto& instance : ctx.instances) {
      for (const auto& caller : ctx.callers) {
        Op op = base;
        op.instance = instance;
        op.caller = caller;
        out.push_back(op);
      }
    }
  }
};

class SendOp final : public PlacedSendOp {
 public:
  const char* name() const override { return "send"; }
  int default_weight() const override { return 10; }
  bool reaches_logic() const override { return true; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return Reachable(op, m, rules);
  }
};

// The same key again with another form of the request: only once the key
// was used, and not when it may have been released (first used right after
// a hook, or by the request a cause's variant changed: either may make that
// request fail retryably, and another payload then rightly executes).
class ResendOp : public PlacedSendOp {
 public:
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    const std::pair<std::string, std::string> use(op.key, op.biz);
    if (!m.used_keys.count(use) || m.maybe_released.count(use)) return false;
    return m.up && m.managed && Reachable(op, m, rules);
  }

 protected:
  bool Fits(const ActionDescription&, const std::string& key) const override { return key != kNoKey; }
  std::string absent() const override { return "every key is 'none'"; }
};

class SendOtherOp final : public ResendOp {
 public:
  const char* name() const override { return "send_other"; }
  int default_weight() const override { return 3; }

 protected:
  PayloadVariant payload() const override { return PayloadVariant::kOther; }
  bool Fits(const ActionDescription& desc, const std::string& key) const override {
    return desc.other_payload && key != kNoKey;
  }
  std::string absent() const override { return "no action declares other_payload (or every key is 'none')"; }
};

class SendEquivalentOp final : public ResendOp {
 public:
  const char* name() const override { return "send_equivalent"; }
  int default_weight() const override { return 3; }

 protected:
  PayloadVariant payload() const override { return PayloadVariant::kEquivalent; }
};

class SendChangedOp final : public ResendOp {
 public:
  const char* name() const override { return "send_changed"; }
  int default_weight() const override { return 2; }

 protected:
  PayloadVariant payload() const override { return PayloadVariant::kValueChanged; }
  bool Fits(const ActionDescription& desc, const std::string& key) const override {
    return desc.request.json && key != kNoKey;
  }
  std::string absent() const override { return "no action has a json: request body (or every key is 'none')"; }
};

// Needs the target up and started by idemproof; leaves it down.
class SendThenKillOp final : public RequestOp {
 public:
  const char* name() const override { return "send_then_kill"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 1; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return m.up && m.managed && Reachable(op, m, rules);
  }
  std::vector<Step> Steps(const Op& op) const override { return {SendStep(op, PayloadVariant::kDefault, true, false)}; }
  std::int64_t EstimateMs(const Op&) const override { return 80; }
  void Track(const Op&, PlanEnd& end) const override { end.killed = true; }

 protected:
  bool Fits(const ActionDescription&, const std::string& key) const override { return key != kNoKey; }
  std::string absent() const override { return "every key is 'none'"; }
};

// Opt-in; at most two in flight per plan.
class SendBackgroundOp final : public RequestOp {
 public:
  const char* name() const override { return "send_background"; }
  int default_weight() const override { return 0; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return m.background_sends < 2 && m.up && m.managed && Reachable(op, m, rules);
  }
  std::vector<Step> Steps(const Op& op) const override { return {SendStep(op, PayloadVariant::kDefault, false, true)}; }
  std::int64_t EstimateMs(const Op&) const override { return 10; }
};

class BurstOp final : public RequestOp {
 public:
  const char* name() const override { return "burst"; }
  int default_weight() const override { return 2; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return Reachable(op, m, rules);
  }
  std::vector<Step> Steps(const Op& op) const override {
    Step step = RequestStep("burst", op);
    SendOptions& o = step.Options<SendOptions>();
    o.n = op.n;
    o.mode = op.mode;
    return {step};
  }
  std::int64_t EstimateMs(const Op&) const override { return 100; }
  std::string ToString(const Op& op) const override {
    return "burst " + std::to_string(op.n) + " " + op.action + " " + op.key + "/" + op.biz;
  }

 protected:
  void Add(const OpContext& ctx, const Op& base, std::vector<Op>& out) const override {
    Op op = base;
    op.n = ctx.block.burst_n;
    op.mode = ctx.block.burst_mode;
    out.push_back(op);
  }
};

// A send through each fault explore.faults lists: the fault, the send, the heal.
class FaultOp final : public RequestOp {
 public:
  const char* name() const override { return "fault"; }
  bool strikes() const override { return true; }
  int default_weight() const override { return 2; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules& rules) const override {
    return Reachable(op, m, rules);
  }
  std::vector<Step> Steps(const Op& op) const override {
    Step fault = MakeStep("fault");
    fault.Options<FaultOptions>().name = op.name;
    Step heal = MakeStep("heal");
    heal.Options<FaultOptions>().name = op.name;
    return {fault, RequestStep("send", op), heal};
  }
  std::int64_t EstimateMs(const Op&) const override { return 100; }
  std::string ToString(const Op& op) const override {
    return "fault " + op.name + ": send " + op.action + " " + op.key + "/" + op.biz;
  }

 protected:
  std::string absent() const override {
    return "no fault listed under explore.faults (proxy drop-response / replay / hedge: declare the fault "
           "under 'faults:' and list it there)";
  }
  void Add(const OpContext& ctx, const Op& base, std::vector<Op>& out) const override {
    for (const auto& fault : ctx.block.faults) {
      Op op = base;
      op.name = fault;
      out.push_back(op);
    }
  }
};

}  // namespace

std::unique_ptr<OpSpec> MakeSendOp() { return std::make_unique<SendOp>(); }
std::unique_ptr<OpSpec> MakeSendOtherOp() { return std::make_unique<SendOtherOp>(); }
std::unique_ptr<OpSpec> MakeSendEquivalentOp() { return std::make_unique<SendEquivalentOp>(); }
std::unique_ptr<OpSpec> MakeSendChangedOp() { return std::make_unique<SendChangedOp>(); }
std::unique_ptr<OpSpec> MakeSendThenKillOp() { return std::make_unique<SendThenKillOp>(); }
std::unique_ptr<OpSpec> MakeSendBackgroundOp() { return std::make_unique<SendBackgroundOp>(); }
std::unique_ptr<OpSpec> MakeBurstOp() { return std::make_unique<BurstOp>(); }
std::unique_ptr<OpSpec> MakeFaultOp() { return std::make_unique<FaultOp>(); }

}  // namespace idemproof::explore
