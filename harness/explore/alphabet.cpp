#include "explore/alphabet.h"

#include <algorithm>
#include <sstream>

#include "model/capabilities.h"
#include "model/template.h"

namespace idemproof::explore {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kSend: return "send";
    case OpKind::kSendOther: return "send_other";
    case OpKind::kSendEquivalent: return "send_equivalent";
    case OpKind::kSendChanged: return "send_changed";
    case OpKind::kSendThenKill: return "send_then_kill";
    case OpKind::kSendBackground: return "send_background";
    case OpKind::kBurst: return "burst";
    case OpKind::kWait: return "wait";
    case OpKind::kWaitPastLease: return "wait_past_lease";
    case OpKind::kWaitPastWindow: return "wait_past_window";
    case OpKind::kKill: return "kill";
    case OpKind::kRestart: return "restart";
    case OpKind::kHook: return "hook";
    case OpKind::kCause: return "cause";
    case OpKind::kFault: return "fault";
    case OpKind::kPause: return "pause";
    case OpKind::kResume: return "resume";
    case OpKind::kDeliver: return "deliver";
    case OpKind::kRedeliver: return "redeliver";
    case OpKind::kRunBatch: return "run_batch";
    case OpKind::kRerun: return "rerun";
    case OpKind::kKillMidWork: return "kill_mid_work";
    case OpKind::kSendPastLease: return "send_past_lease";
  }
  return "?";
}

namespace {

const std::map<std::string, int>& DefaultWeights() {
  static const std::map<std::string, int> kWeights = {
      {"send", 10}, {"send_other", 3}, {"send_equivalent", 3}, {"send_changed", 2}, {"send_then_kill", 1}, {"send_background", 0}, {"burst", 2}, {"wait", 2}, {"wait_past_lease", 1}, {"wait_past_window", 0},
      {"kill", 1},  {"restart", 1},    {"hook", 2},  {"fault", 2}, {"pause", 1},
      {"resume", 2}, {"deliver", 10},  {"redeliver", 3}, {"run_batch", 5}, {"rerun", 5}, {"cause", 2},
      {"kill_mid_work", 0}, {"send_past_lease", 0}};
  return kWeights;
}

// A step of `kind` for `op`, its options filled by the kind (StepKindSpec::FromOp).
Step StepOf(const char* kind, const Op& op) {
  Step s = MakeStep(kind);
  s.kind->FromOp(op, s);
  return s;
}

// Estimated wall time of an op, for the window budget.
std::int64_t EstimateMs(const Op& op) {
  switch (op.kind) {
    case OpKind::kSend:
    case OpKind::kSendOther:
    case OpKind::kSendEquivalent:
    case OpKind::kSendChanged: return 30;
    case OpKind::kSendThenKill: return 80;
    case OpKind::kSendBackground: return 10;
    case OpKind::kBurst: return 100;
    case OpKind::kWait:
    case OpKind::kWaitPastLease:
    case OpKind::kWaitPastWindow:
      return std::chrono::duration_cast<std::chrono::milliseconds>(op.duration).count();
    case OpKind::kKill: return 50;
    case OpKind::kRestart: return 500;
    case OpKind::kHook:
    case OpKind::kCause: return 10;
    case OpKind::kFault: return 100;
    case OpKind::kPause:
    case OpKind::kResume: return 10;
    case OpKind::kDeliver:
    case OpKind::kRedeliver: return 50;
    case OpKind::kRunBatch:
    case OpKind::kRerun: return 200;
    case OpKind::kKillMidWork: return kMidWorkWaitMs + 560;
    case OpKind::kSendPastLease:
      return 20 + std::chrono::duration_cast<std::chrono::milliseconds>(op.duration).count();
  }
  return 0;
}

void CollectVariables(const std::string& text, std::set<std::string>& out) {
  auto vars = TemplateVariables(text);
  if (vars.ok()) out.insert(vars->begin(), vars->end());
}

void CollectVariables(const nlohmann::json& doc, std::set<std::string>& out) {
  if (doc.is_string()) {
    CollectVariables(doc.get<std::string>(), out);
  } else if (doc.is_structured()) {
    for (const auto& item : doc) CollectVariables(item, out);
  }
}

std::set<std::string> RequestVariables(const RequestTemplate& r) {
  std::set<std::string> out;
  CollectVariables(r.path, out);
  for (const auto& [name, value] : r.headers) CollectVariables(value, out);
  if (r.body) CollectVariables(*r.body, out);
  if (r.json) CollectVariables(*r.json, out);
  return out;
}

}  // namespace

std::vector<Step> Op::Steps() const {
  switch (kind) {
    case OpKind::kSend:
    case OpKind::kSendOther:
    case OpKind::kSendEquivalent:
    case OpKind::kSendChanged:
    case OpKind::kSendThenKill:
    case OpKind::kSendBackground: return {StepOf("send", *this)};
    case OpKind::kBurst: return {StepOf("burst", *this)};
    case OpKind::kWait:
    case OpKind::kWaitPastLease:
    case OpKind::kWaitPastWindow: return {StepOf("wait", *this)};
    case OpKind::kKill: return {MakeStep("kill")};
    case OpKind::kRestart: return {MakeStep("restart")};
    case OpKind::kHook: return {StepOf("hook", *this)};
    // The plan model gives a variant to the action's next request only
    // (PlanModel::variant_pending): so does the generated step.
    case OpKind::kCause: return {StepOf("cause", *this)};
    case OpKind::kFault: return {StepOf("fault", *this), StepOf("send", *this), StepOf("heal", *this)};
    case OpKind::kPause: return {MakeStep("pause")};
    case OpKind::kResume: return {MakeStep("resume")};
    case OpKind::kDeliver:
    case OpKind::kRedeliver: return {StepOf("deliver", *this)};
    case OpKind::kRunBatch: return {StepOf("run_batch", *this)};
    case OpKind::kRerun: return {StepOf("rerun", *this)};
    case OpKind::kKillMidWork: {
      // The work in its slow variant in the background (a send's by a cause
      // before it), a wait into it, the kill, the restart.
      std::vector<Step> out;
      if (work == "send") {
        out.push_back(StepOf("cause", *this));
        out.push_back(StepOf("send", *this));
      } else {
        out.push_back(StepOf(work == "deliver" ? "deliver" : "run_batch", *this));
      }
      out.push_back(StepOf("wait", *this));
      out.push_back(MakeStep("kill"));
      // The crash point is the kill; the start after it is where every
      // retry, redelivery or rerun that follows meets what the dead work left.
      out.push_back(MakeStep("restart"));
      return out;
    }
    // Past the lease, the owner still running: what follows is late for
    // its lease (a send of its key is the duplicate class 2 is about).
    case OpKind::kSendPastLease: return {StepOf("cause", *this), StepOf("send", *this), StepOf("wait", *this)};
  }
  return {};
}

std::string Op::ToString() const {
  std::ostringstream os;
  switch (kind) {
    case OpKind::kSend:
    case OpKind::kSendOther:
    case OpKind::kSendEquivalent:
    case OpKind::kSendChanged:
    case OpKind::kSendThenKill:
    case OpKind::kSendBackground:
      os << OpKindName(kind) << " " << action << " " << key << "/" << biz;
      if (instance != "main") os << " @" << instance;
      if (!caller.empty()) os << " as " << caller;
      break;
    case OpKind::kBurst: os << "burst " << n << " " << action << " " << key << "/" << biz; break;
    case OpKind::kWait:
    case OpKind::kWaitPastLease:
    case OpKind::kWaitPastWindow: os << OpKindName(kind) << " " << FormatDuration(duration); break;
    case OpKind::kKill:
    case OpKind::kRestart: os << OpKindName(kind); break;
    case OpKind::kHook: os << "hook " << name; break;
    case OpKind::kCause:
      os << "cause " << name;
      if (!variant.empty()) os << " (variant " << variant << " of " << action << ")";
      if (!hook.empty()) os << " (hook " << hook << ")";
      break;
    case OpKind::kFault: os << "fault " << name << ": send " << action << " " << key << "/" << biz; break;
    case OpKind::kPause:
    case OpKind::kResume: os << OpKindName(kind); break;
    case OpKind::kDeliver:
    case OpKind::kRedeliver:
      os << OpKindName(kind) << " " << action << " " << key;
      if (copies != 1) os << " x" << copies;
      break;
    case OpKind::kRunBatch:
    case OpKind::kRerun:
      os << OpKindName(kind) << " " << name;
      if (kind == OpKind::kRunBatch) os << " [" << from << ", " << to << ")";
      if (fail_after) os << " fail_after " << *fail_after;
      break;
    case OpKind::kKillMidWork:
      os << "kill_mid_work " << work << " ";
      if (work == "send") os << action << " " << key << "/" << biz;
      if (work == "deliver") os << action << " " << key;
      if (work == "run_batch") os << name << " [" << from << ", " << to << ")";
      os << " (" << (variant.empty() ? "hook " + hook : "variant " + variant) << ")";
      break;
    case OpKind::kSendPastLease:
      os << "send_past_lease " << action << " " << key << "/" << biz << " ("
         << (variant.empty() ? "hook " + hook : "variant " + variant) << "), wait " << FormatDuration(duration);
      break;
  }
  return os.str();
}

bool Op::operator==(const Op& o) const {
  return kind == o.kind && action == o.action && key == o.key && biz == o.biz && name == o.name &&
         duration == o.duration && n == o.n && mode == o.mode && copies == o.copies && from == o.from &&
         to == o.to && fail_after == o.fail_after && instance == o.instance && caller == o.caller && variant == o.variant &&
         hook == o.hook && work == o.work;
}

std::ostream& operator<<(std::ostream& os, const Op& op) { return os << op.ToString(); }

Result<Alphabet> Alphabet::Build(const ExploreSpec& spec, const TargetDescription& target,
                                 const runtime::Interpreter& interpreter) {
  Alphabet a;
  const ExploreBlock& b = spec.explore;
  // Errors point at the item that named it, else at the explore block.
  auto config_error = [&](const std::string& item, const std::string& message) {
    auto it = b.marks.find(item);
    return Status::InvalidConfig("explore: " + message, it != b.marks.end() ? it->second : b.mark);
  };

  std::set<std::string> capturable;
  for (const auto& [name, action] : target.actions) {
    for (const auto& [var, path] : action.capture) {
      capturable.insert(var);
      a.provides_[name].insert(var);
    }
  }
  for (const auto& [name, action] : target.actions) {
    for (const auto& var : RequestVariables(action.request)) {
      if (capturable.count(var)) a.needs_captured_[name].insert(var);
    }
  }

  std::vector<std::string> actions = b.actions;
  if (actions.empty()) {
    for (const auto& [name, action] : target.actions) {
      if (a.needs_captured_[name].empty()) actions.push_back(name);
    }
  }
  for (const auto& name : actions) {
    if (!target.actions.count(name)) {
      return config_error("action " + name, "the target declares no action '" + name + "'");
    }
  }
  std::vector<std::string> hooks;
  if (b.hooks) {
    hooks = *b.hooks;
    for (const auto& h : hooks) {
      if (!target.hooks.count(h)) return config_error("hook " + h, "the target declares no hook '" + h + "'");
    }
  } else {
    for (const auto& [name, hook] : target.hooks) {
      if (hook.role != "heal") hooks.push_back(name);
    }
  }

  std::vector<std::pair<std::string, std::string>> pairs;
  if (b.bound_pairing) {
    for (std::size_t i = 0; i < b.keys.size(); ++i) pairs.emplace_back(b.keys[i], b.biz[i]);
  } else {
    for (const auto& k : b.keys) {
      for (const auto& z : b.biz) pairs.emplace_back(k, z);
    }
  }

  auto weight = [&](const std::string& kind) {
    auto it = b.weights.find(kind);
    return it != b.weights.end() ? it->second : DefaultWeights().at(kind);
  };
  // Whether the interpreter (and the target) can run an op; the reason when not.
  auto unrunnable = [&](const Op& op) -> std::string {
    Scenario probe = spec.scenario;
    probe.steps = op.Steps();
    std::vector<std::string> needs = interpreter.NeedsOf(probe);
    ScenarioFit fit = CheckScenarioAgainstTarget(probe, target);
    needs.insert(needs.end(), fit.needs.begin(), fit.needs.end());
    for (const auto& e : fit.errors) needs.push_back(e.message());
    std::string out;
    for (const auto& n : needs) out += (out.empty() ? "" : "; ") + n;
    return out;
  };
  auto add_group = [&](const std::string& kind, std::vector<Op> ops, const std::string& absent) {
    const int w = weight(kind);
    if (w == 0) {
      a.excluded_.push_back({kind, "weight 0 in explore.ops"});
      return;
    }
    if (ops.empty()) {
      a.excluded_.push_back({kind, absent});
      return;
    }
    std::vector<Op> runnable;
    std::string reason;
    for (auto& op : ops) {
      std::string why = unrunnable(op);
      if (why.empty()) {
        runnable.push_back(std::move(op));
      } else if (reason.empty()) {
        reason = why;
      }
    }
    if (runnable.empty()) {
      a.excluded_.push_back({kind, reason});
      return;
    }
    a.groups_.emplace_back(w, std::move(runnable));
  };

  // The callers sends go as: each listed one the target declares (the
  // first, the second), else none.
  std::vector<std::string> callers{""};
  if (!b.callers.empty()) callers = b.callers;
  for (const auto& caller : b.callers) {
    if (target.callers.size() <= CallerIndex(caller))
      return config_error("callers", "explore.callers names '" + caller + "', but the target declares " +
                                         std::to_string(target.callers.size()) + " caller(s) (target 'callers')");
  }
  // Instances the fixed steps before the generated ops spawned: sends go to
  // them too.
  std::vector<std::string> instances{"main"};
  for (std::size_t i = 0; i < spec.insert_at(); ++i) {
    if (const auto* spawn = spec.scenario.steps[i].Find<SpawnOptions>()) instances.push_back(spawn->name);
  }
  std::vector<Op> sends, others, equivalents, changes, killing_sends, backgrounds, bursts, faults;
  for (const auto& action : actions) {
    const ActionDescription& desc = target.actions.at(action);
    for (const auto& [key, biz] : pairs) {
      Op op;
      op.action = action;
      op.key = key;
      op.biz = biz;
      for (const auto& instance : instances) {
        op.instance = instance;
        for (const auto& caller : callers) {
          op.caller = caller;
          op.kind = OpKind::kSend;
          sends.push_back(op);
          if (desc.other_payload && key != kNoKey) {
            op.kind = OpKind::kSendOther;
            others.push_back(op);
          }
          if (key != kNoKey) {
            op.kind = OpKind::kSendEquivalent;
            equivalents.push_back(op);
          }
          if (desc.request.json && key != kNoKey) {
            op.kind = OpKind::kSendChanged;
            changes.push_back(op);
          }
        }
      }
      op.instance = "main";
      op.caller.clear();
      op.kind = OpKind::kSendBackground;
      backgrounds.push_back(op);
      if (key != kNoKey) {
        op.kind = OpKind::kSendThenKill;
        killing_sends.push_back(op);
      }
      op.kind = OpKind::kBurst;
      op.n = b.burst_n;
      op.mode = b.burst_mode;
      bursts.push_back(op);
      op.n = 0;
      op.mode = BurstMode::kThreads;
      for (const auto& fault : b.faults) {
        op.kind = OpKind::kFault;
        op.name = fault;
        faults.push_back(op);
      }
      op.name.clear();
    }
  }
  add_group("send", sends, "no action to send");
  add_group("send_other", others, "no action declares other_payload (or every key is 'none')");
  add_group("send_equivalent", equivalents, "every key is 'none'");
  add_group("send_changed", changes, "no action has a json: request body (or every key is 'none')");
  add_group("send_then_kill", killing_sends, "every key is 'none'");
  add_group("send_background", backgrounds, "no action to send");
  add_group("burst", bursts, "no action to send");
  add_group("fault", faults,
            "no fault listed under explore.faults (proxy drop-response / replay / hedge: declare the fault "
            "under 'faults:' and list it there)");
  {
    Op w;
    w.kind = OpKind::kWait;
    w.duration = b.wait;
    add_group("wait", {w}, "");
  }
  if (target.idempotency.lease) {
    Op w;
    w.kind = OpKind::kWaitPastLease;
    w.duration = *target.idempotency.lease + std::chrono::milliseconds(200);
    add_group("wait_past_lease", {w}, "");
  } else {
    add_group("wait_past_lease", {}, "the target declares no idempotency.lease");
  }
  if (auto past = PastWindowWait(target.idempotency)) {
    Op w;
    w.kind = OpKind::kWaitPastWindow;
    w.duration = *past;
    add_group("wait_past_window", {w}, "");
  } else {
    // Say which: a 24 h window was declared, just not one to wait out.
    const auto& window = target.idempotency.window;
    add_group("wait_past_window", {},
              window ? "the declared idempotency.window (" + FormatDuration(*window) +
                           ") is longer than the longest wait explore makes past it (" +
                           FormatDuration(kLongestPastWindow) + "): no plan waits it out"
                     : std::string("the target declares no idempotency.window"));
  }
  const std::string no_start = "the target has no start command (process control needs one)";
  Op kill, restart;
  kill.kind = OpKind::kKill;
  restart.kind = OpKind::kRestart;
  add_group("kill", target.start ? std::vector<Op>{kill} : std::vector<Op>{}, no_start);
  add_group("restart", target.start ? std::vector<Op>{restart} : std::vector<Op>{}, no_start);
  std::vector<Op> hook_ops;
  for (const auto& h : hooks) {
    Op op;
    op.kind = OpKind::kHook;
    op.name = h;
    hook_ops.push_back(op);
  }
  add_group("hook", hook_ops, "the target declares no hook besides heal");

  // cause: each capability asked for (default: every one but heal), per
  // explore action by its variant, else once by its hook.
  {
    std::vector<std::string> causes;
    if (b.causes) {
      causes = *b.causes;
    } else {
      // A message capability (die_before_ack) acts on a publish, no action's request.
      for (const auto& c : CapabilityTable())
        if (!c.always && !c.message) causes.push_back(c.name);
    }
    std::vector<Op> cause_ops;
    std::string why;
    for (const auto& cause : causes) {
      bool by_hook = false, any = false;
      for (const auto& action : actions) {
        auto p = ResolveCapability(cause, action, target);
        if (!p.ok()) {
          why += (why.empty() ? "" : "; ") + p.status().message();
          continue;
        }
        Op op;
        op.kind = OpKind::kCause;
        op.name = cause;
        op.action = action;
        op.variant = p->variant;
        op.hook = p->hook;
        if (!p->hook.empty()) {
          if (by_hook) continue;
          by_hook = true;
        }
        any = true;
        cause_ops.push_back(op);
      }
      if (!any && b.causes)
        return config_error("cause " + cause, "the target provides no " + cause + " (" + why + ")");
    }
    add_group("cause", cause_ops, why.empty() ? "no capability to cause" : why);
  }

  // `op` once per keyed pair for `action`, the capability provided as `p` says.
  auto add_keyed = [&](std::vector<Op>& out, Op op, const std::string& action, const CapabilityProvision& p) {
    op.action = action;
    op.variant = p.variant;
    op.hook = p.hook;
    for (const auto& [key, biz] : pairs) {
      if (key == kNoKey) continue;
      op.key = key;
      op.biz = biz;
      out.push_back(op);
    }
  };
  // kill_mid_work: a crash point inside the work of every role the explore
  // block lists: each action (its key/biz pairs) the target makes slow
  // (slow_request: a variant or a hook), each message (its ids) and each job
  // whose push or run declares the capability's variant ("slow").
  {
    std::vector<Op> cuts;
    std::string why;
    auto add_why = [&](const std::string& w) { why += (why.empty() ? "" : "; ") + w; };
    const std::string slow_variant = FindCapability(kSlowCapability)->variant;
    for (const auto& action : actions) {
      auto p = ResolveCapability(kSlowCapability, action, target);
      if (!p.ok()) {
        add_why(p.status().message());
        continue;
      }
      Op op;
      op.kind = OpKind::kKillMidWork;
      op.work = "send";
      add_keyed(cuts, op, action, *p);
    }
    for (const auto& message : b.messages) {
      auto it = target.messages.find(message);
      if (it == target.messages.end()) continue;  // refused below, with the deliver op
      if (!it->second.variants.count(slow_variant)) {
        add_why("message " + message + " declares no variant '" + slow_variant + "'");
        continue;
      }
      for (const auto& key : b.keys) {
        if (key == kNoKey) continue;
        Op op;
        op.kind = OpKind::kKillMidWork;
        op.work = "deliver";
        op.action = message;
        op.key = key;
        op.biz = b.biz.front();
        op.variant = slow_variant;
        cuts.push_back(op);
      }
    }
    if (!b.jobs.empty() && target.batch && !target.batch->variants.count(slow_variant))
      add_why("the target's batch declares no variant '" + slow_variant + "'");
    if (!b.jobs.empty() && target.batch && target.batch->variants.count(slow_variant)) {
      for (const auto& job : b.jobs) {
        Op op;
        op.kind = OpKind::kKillMidWork;
        op.work = "run_batch";
        op.name = job;
        op.from = b.batch_from;
        op.to = b.batch_to;
        op.variant = slow_variant;
        cuts.push_back(op);
      }
    }
    add_group("kill_mid_work", target.start ? cuts : std::vector<Op>{},
              !target.start ? no_start
                            : "no explore action, message or job the target makes slow" +
                                  (why.empty() ? std::string() : " (" + why + ")"));
  }
  // send_past_lease: each explore action with a slow_past_lease variant
  // ({{slow_ms}}: the declared lease x 1.5), on its keyed pairs.
  {
    std::vector<Op> overruns;
    std::string why;
    for (const auto& action : actions) {
      auto p = ResolveCapability(kPastLeaseCapability, action, target);
      if (!p.ok()) {
        why += (why.empty() ? "" : "; ") + p.status().message();
        continue;
      }
      Op op;
      op.kind = OpKind::kSendPastLease;
      op.duration = target.idempotency.lease ? *target.idempotency.lease + std::chrono::milliseconds(200)
                                             : Duration::zero();
      add_keyed(overruns, op, action, *p);
    }
    if (!target.idempotency.lease) {
      overruns.clear();
      why = "the target declares no idempotency.lease";
    }
    add_group("send_past_lease", overruns, why.empty() ? "no explore action with a keyed pair" : why);
  }

  // pause / resume: the main instance, which idemproof must have started.
  {
    Op pause, resume;
    pause.kind = OpKind::kPause;
    resume.kind = OpKind::kResume;
    const std::string why = "the target has no start command (pause/resume signal the process idemproof started)";
    add_group("pause", target.start ? std::vector<Op>{pause} : std::vector<Op>{}, why);
    add_group("resume", target.start ? std::vector<Op>{resume} : std::vector<Op>{}, why);
  }
  // deliver / redeliver: the explore block's messages, ids from the keys pool.
  {
    std::vector<Op> delivers, redelivers;
    std::string absent = b.messages.empty() ? "no message listed under explore.messages" : "";
    for (const auto& message : b.messages) {
      if (!target.messages.count(message)) {
        return config_error("message " + message, "the target declares no message '" + message + "'");
      }
      for (const auto& key : b.keys) {
        if (key == kNoKey) continue;
        Op op;
        op.kind = OpKind::kDeliver;
        op.action = message;
        op.key = key;
        op.biz = b.biz.front();
        delivers.push_back(op);
        op.kind = OpKind::kRedeliver;
        op.copies = 2;
        redelivers.push_back(op);
      }
    }
    if (!b.messages.empty() && delivers.empty()) absent = "every key of explore.keys is 'none' (message ids come from the keys)";
    add_group("deliver", delivers, absent);
    add_group("redeliver", redelivers, absent);
  }
  // run_batch / rerun: the explore block's jobs over its rows.
  {
    std::vector<Op> runs, reruns;
    std::string absent = b.jobs.empty() ? "no job listed under explore.batch.jobs" : "";
    if (!b.jobs.empty() && !target.batch) absent = "the target declares no batch section";
    if (!b.jobs.empty() && target.batch && b.batch_fail_after && !target.batch->failing_run) {
      absent = "explore.batch.fail_after needs the target's batch.failing_run";
    }
    if (absent.empty()) {
      for (const auto& job : b.jobs) {
        Op op;
        op.kind = OpKind::kRunBatch;
        op.name = job;
        op.from = b.batch_from;
        op.to = b.batch_to;
        runs.push_back(op);
        if (b.batch_fail_after) {
          op.fail_after = b.batch_fail_after;
          runs.push_back(op);
          op.fail_after.reset();
        }
        op.kind = OpKind::kRerun;
        reruns.push_back(op);
      }
    }
    add_group("run_batch", runs, absent);
    add_group("rerun", reruns, absent);
  }

  // A pause without resume could leave nothing allowed but waits: drop it.
  {
    auto has = [&](OpKind k) {
      return std::any_of(a.groups_.begin(), a.groups_.end(), [k](const auto& g) { return g.second.front().kind == k; });
    };
    if (has(OpKind::kPause) && !has(OpKind::kResume)) {
      std::erase_if(a.groups_, [](const auto& g) { return g.second.front().kind == OpKind::kPause; });
      a.excluded_.push_back({"pause", "resume is not in the alphabet (a paused target could not be resumed)"});
    }
  }

  // A plan must be able to reach the target's business logic somehow.
  bool has_request = false;
  for (const auto& [w, ops] : a.groups_) {
    const OpKind k = ops.front().kind;
    if (k == OpKind::kSend || k == OpKind::kDeliver || k == OpKind::kRunBatch) has_request = true;
  }
  if (!has_request) {
    std::string why;
    for (const auto& e : a.excluded_) {
      if (e.op == "send" || e.op == "deliver" || e.op == "run_batch") why += (why.empty() ? "" : "; ") + e.op + ": " + e.reason;
    }
    return config_error("", "no send, deliver or run_batch op can run (" + why + ")");
  }

  a.initial_.managed = target.start.has_value();
  a.lease_declared_ = target.idempotency.lease.has_value();
  if (target.idempotency.window) {
    a.initial_.budget_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(*target.idempotency.window).count() - 1000;
  }
  for (std::size_t i = 0; i < spec.insert_at(); ++i) a.ApplyStep(spec.scenario.steps[i], a.initial_);
  return a;
}

void Alphabet::ApplyStep(const Step& step, PlanModel& m) const {
  m.elapsed_ms += std::chrono::duration_cast<std::chrono::milliseconds>(step.after).count();
  step.kind->Plan(step, m, provides_);  // its explore op (harness/steps/)
}

bool Alphabet::Allowed(const Op& op, const PlanModel& m) const {
  // Time-consuming ops stay inside the budget; a restart that brings a
  // killed target back is always allowed (so some op always is).
  const bool timed = op.kind == OpKind::kWait || op.kind == OpKind::kWaitPastLease ||
                     op.kind == OpKind::kKillMidWork || op.kind == OpKind::kSendPastLease ||
                     (op.kind == OpKind::kRestart && m.up);
  if (timed && m.budget_ms >= 0 && m.elapsed_ms + EstimateMs(op) > m.budget_ms) return false;
  // A spawned instance answers whatever main's state: a send to it needs only
  // what a send needs (a key used before for send_other, captured variables).
  const bool elsewhere = op.instance != "main";
  // A paused target answers nothing: only resume, waits and kill make sense.
  if (m.paused && !elsewhere && op.kind != OpKind::kResume && op.kind != OpKind::kWait &&
      op.kind != OpKind::kWaitPastLease && op.kind != OpKind::kWaitPastWindow && op.kind != OpKind::kKill) {
    return false;
  }
  switch (op.kind) {
    case OpKind::kSendOther:
    case OpKind::kSendEquivalent:
    case OpKind::kSendChanged:
      if (!m.used_keys.count({op.key, op.biz}) || m.maybe_released.count({op.key, op.biz})) return false;
      [[fallthrough]];
    case OpKind::kSendBackground:
      if (op.kind == OpKind::kSendBackground && m.background_sends >= 2) return false;
      [[fallthrough]];
    case OpKind::kSendThenKill:
      if (!m.up || !m.managed) return false;
      [[fallthrough]];
    case OpKind::kSend:
    case OpKind::kBurst:
    case OpKind::kFault: {
      if (!m.up && !elsewhere) return false;
      return Captured(op, m);
    }
    case OpKind::kWait:
    case OpKind::kWaitPastLease: return true;
    // Leaving the window is the point, so the budget does not hold it back.
    case OpKind::kWaitPastWindow: return m.past_window_waits < 1 && !m.used_keys.empty();
    case OpKind::kKill: return m.up && m.managed;
    case OpKind::kRestart: return m.managed;
    case OpKind::kHook: return m.up;
    case OpKind::kCause: return m.up && (op.variant.empty() || !m.variant_pending.count(op.action));
    case OpKind::kPause: return m.up && m.managed && !m.paused;
    case OpKind::kResume: return m.paused;
    case OpKind::kDeliver: return m.up;
    case OpKind::kRedeliver: return m.up && m.delivered.count(op.key) > 0;
    case OpKind::kRunBatch: return m.up && !m.jobs_run.count(op.name);
    case OpKind::kRerun: return m.up && m.jobs_run.count(op.name) > 0 && !m.jobs_cut.count(op.name);
    case OpKind::kKillMidWork: {
      if (!m.up || !m.managed || m.background_sends >= 2) return false;
      if (op.work == "run_batch") return !m.jobs_run.count(op.name);
      if (op.work == "send") {
        if (m.variant_pending.count(op.action)) return false;
        return Captured(op, m);
      }
      return true;
    }
    case OpKind::kSendPastLease: {
      if (!m.up || m.background_sends >= 2 || m.variant_pending.count(op.action)) return false;
      return Captured(op, m);
    }
  }
  return false;
}

bool Alphabet::Captured(const Op& op, const PlanModel& m) const {
  auto it = needs_captured_.find(op.action);
  if (it == needs_captured_.end()) return true;
  return std::all_of(it->second.begin(), it->second.end(),
                     [&](const std::string& var) { return m.captured.count({var, op.biz}) > 0; });
}

void Alphabet::Apply(const Op& op, PlanModel& m) const {
  // A request cut by the kill never answers, and one outliving its lease
  // answers only at the end (joined): neither captures anything for the ops
  // that follow (a put of its resource would have no id to name).
  const auto captured = m.captured;
  for (const Step& s : op.Steps()) ApplyStep(s, m);
  if (op.kind == OpKind::kKillMidWork || op.kind == OpKind::kSendPastLease) m.captured = captured;
  if (op.kind == OpKind::kKillMidWork) {
    if (op.work == "run_batch" && lease_declared_) m.jobs_cut.insert(op.name);
  }
  if (op.kind == OpKind::kWaitPastLease) m.jobs_cut.clear();
}

std::vector<std::pair<int, std::vector<Op>>> Alphabet::Choices(const PlanModel& m) const {
  std::vector<std::pair<int, std::vector<Op>>> out;
  for (const auto& [w, ops] : groups_) {
    std::vector<Op> allowed;
    for (const auto& op : ops) {
      if (Allowed(op, m)) allowed.push_back(op);
    }
    if (!allowed.empty()) out.emplace_back(w, std::move(allowed));
  }
  return out;
}

}  // namespace idemproof::explore
