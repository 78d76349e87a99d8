// The request steps: `send: ACTION` (one request, or `repeat` sequential
// ones every `every`, `until: recovered`, in the background until a `join`,
// `then: kill`) and `burst: ACTION` (n requests released together, by the
// last-byte sender or threads). They share the request's options (key, biz,
// payload, caller, timeout, instance) and their check against the target.
// Execution: runtime/request_steps.h.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "model/capabilities.h"
#include "runtime/request_steps.h"
#include "runtime/run_types.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

// Whether a json body holds an array somewhere (payload large grows it).
bool HasArray(const std::optional<nlohmann::json>& json) {
  if (!json) return false;
  if (json->is_array()) return true;
  if (!json->is_object()) return false;
  for (const auto& [k, v] : json->items())
    if (HasArray(v)) return true;
  return false;
}

class RequestStepKind : public StepKindSpec {
 public:
  bool sends_request() const override { return true; }

  StepOptions NewOptions() const override { return SendOptions{}; }

  // The request's options (CheckKeys let through only this kind's).
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    yaml::Reader& r = parser.reader();
    SendOptions& o = step.Options<SendOptions>();
    o.action = parser.NameOrReference(parser.RequiredValue(value, key, what, "an action name"), what, false);
    if (node["key"]) o.key = parser.Symbol(node["key"], what + ".key");
    if (node["biz"]) o.biz = parser.Symbol(node["biz"], what + ".biz");
    if (node["key_form"]) {
      const std::string form = r.String(node["key_form"], what + ".key_form");
      if (form != "plain" && form != "max_length")
        r.Fail(node["key_form"], what + ".key_form must be plain or max_length, found '" + form + "'" +
                                     yaml::DidYouMean(form, {"plain", "max_length"}));
      if (form == "max_length" && (o.key == kNoKey || o.key == kFreshKey))
        r.Fail(node["key_form"], what + ".key_form: max_length needs a named key (k1, k2...), not '" + o.key + "'");
      o.key_at_max_length = form == "max_length";
    }
    if (node["payload"]) Payloads(parser, node["payload"], what + ".payload", o);
    if (node["caller"]) {
      o.caller = r.String(node["caller"], what + ".caller");
      if (o.caller != "first" && o.caller != "second")
        r.Fail(node["caller"], what + ".caller must be first or second (the target's declared callers), found '" +
                                   o.caller + "'" + yaml::DidYouMean(o.caller, {"first", "second"}));
    }
    if (node["repeat"]) o.repeat = parser.Repeat(node["repeat"], what + ".repeat");
    if (node["every"]) o.every = parser.Every(node["every"], what + ".every", &o.every_retry_after);
    if (node["until"]) {
      const std::string u = r.String(node["until"], what + ".until");
      if (u != "recovered") r.Fail(node["until"], what + ".until must be 'recovered', found '" + u + "'");
      if (o.every <= Duration::zero())
        r.Fail(node["until"], what + ".until needs a positive 'every' (the pause between retries)");
      o.until_recovered = true;
    }
    if (node["background"]) o.background = r.Bool(node["background"], what + ".background");
    if (node["then"]) {
      const std::string then = r.String(node["then"], what + ".then");
      if (then != "kill") r.Fail(node["then"], what + ".then must be 'kill', found '" + then + "'");
      if (node["repeat"] || node["until"] || node["background"])
        r.Fail(node["then"], what + ".then: kill goes with one foreground request (no repeat, until or background)");
      o.kill_after_answer = true;
    }
    if (node["timeout"]) o.timeout = r.Timeout(node["timeout"], what + ".timeout");
    if (node["instance"]) o.instance = parser.Instance(node["instance"], what, true);
    if (node["n"]) {
      long long n = r.Int(node["n"], what + ".n");
      if (n < 2 || n > 1000) r.Fail(node["n"], what + ".n must be between 2 and 1000");
      o.n = static_cast<int>(n);
    }
    if (node["mode"]) {
      std::string m = r.String(node["mode"], what + ".mode");
      if (m == "last_byte") o.mode = BurstMode::kLastByte;
      else if (m == "threads") o.mode = BurstMode::kThreads;
      else r.Fail(node["mode"], what + ".mode must be 'last_byte' or 'threads', found '" + m + "'" +
                                    yaml::DidYouMean(m, {"last_byte", "threads"}));
    }
  }

  // `payload: NAME` (model/payload.h); a burst may list several, cycled
  // over its requests.
  void Payloads(StepParser& parser, const YAML::Node& node, const std::string& what, SendOptions& o) const {
    yaml::Reader& r = parser.reader();
    auto one = [&](const YAML::Node& item, const std::string& item_what) {
      const std::string name = r.String(item, item_what);
      auto p = ParsePayloadName(name);
      if (!p) {
        std::string known;
        for (const auto& n : PayloadNames()) known += (known.empty() ? "" : ", ") + n;
        r.Fail(item, item_what + ": unknown payload '" + name + "'" + yaml::DidYouMean(name, PayloadNames()) +
                         "; known: " + known);
        return PayloadVariant::kDefault;
      }
      return *p;
    };
    if (!node.IsSequence()) {
      o.payload = one(node, what);
      return;
    }
    if (!takes_payload_list()) {
      r.Fail(node, what + ": only a burst takes a list of payloads");
      return;
    }
    if (node.size() == 0) r.Fail(node, what + " must not be an empty list");
    for (std::size_t i = 0; i < node.size(); ++i)
      o.payloads.push_back(one(node[i], what + "[" + std::to_string(i) + "]"));
    if (!o.payloads.empty()) o.payload = o.payloads.front();
  }
  // A `payload:` may be a list, cycled over its requests (burst).
  virtual bool takes_payload_list() const { return false; }

  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<SendOptions>().action};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    SendOptions& o = step.Options<SendOptions>();
    o.action = BoundName(o.action, binding);
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const TargetDescription& target = fit.target();
    const SendOptions& s = step.Options<SendOptions>();
    const ActionDescription* a = target.FindAction(s.action);
    if (a == nullptr) {
      // As for hooks: a near miss is a typo; an action the target lacks
      // entirely (a shop without payments) is a capability it lacks.
      fit.CheckName(s.action, step.mark, "action", NamesOf(target.actions));
    } else {
      for (PayloadVariant p : s.AllPayloads()) {
        if (p == PayloadVariant::kOther && !a->other_payload) fit.AddNeed("other_payload for action '" + s.action + "'");
        if (NeedsJsonBody(p) && !a->request.json)
          fit.AddNeed("a JSON body for action '" + s.action + "' (payload " + PayloadName(p) + ")");
        if (p == PayloadVariant::kLarge && !a->variants.count(kLargeVariant) && !HasArray(a->request.json))
          fit.AddNeed("a JSON array in the body, or a 'large' variant, for action '" + s.action + "' (payload large)");
        if (IsSpellingForm(p) && !target.idempotency.path_equivalence.Declared())
          fit.AddNeed("idempotency.path_equivalence (how the target treats another spelling of a keyed route: "
                      "trailing_slash, case, query_order)");
        if (p == PayloadVariant::kIgnoredChanged && a->fingerprint_ignores.empty())
          fit.AddNeed("fingerprint_ignores for action '" + s.action + "' (payload ignored_changed)");
      }
    }
    if (s.kill_after_answer && !target.start) fit.AddNeed(fit.NeedsStart("step 'send' with then: kill"));
    if (!s.caller.empty() && target.callers.size() <= CallerIndex(s.caller))
      fit.AddNeed(std::string(s.caller == "second" ? "two callers" : "a caller") +
                  " (target 'callers') for caller: " + s.caller);
    // A spawned instance is started by the harness; the target's own are declared.
    if (!s.instance.empty() && s.instance != kOtherInstance && !TargetInstanceIndex(s.instance) && !target.start)
      fit.AddNeed("a start command (target 'start') for instance '" + s.instance + "'");
  }

  // The keys a send and a burst share, first the action.
  void WriteRequest(const SendOptions& s, YAML::Emitter& out) const {
    out << YAML::Key << name() << YAML::Value << s.action;
    out << YAML::Key << "key" << YAML::Value << s.key;
    if (s.key_at_max_length) out << YAML::Key << "key_form" << YAML::Value << "max_length";
    out << YAML::Key << "biz" << YAML::Value << s.biz;
    if (!s.payloads.empty()) {
      out << YAML::Key << "payload" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (PayloadVariant p : s.payloads) out << PayloadName(p);
      out << YAML::EndSeq;
    } else if (s.payload != PayloadVariant::kDefault) {
      out << YAML::Key << "payload" << YAML::Value << PayloadName(s.payload);
    }
  }
  static void WriteCallerAndTimeout(const SendOptions& s, YAML::Emitter& out) {
    if (!s.caller.empty()) out << YAML::Key << "caller" << YAML::Value << s.caller;
    if (s.timeout) out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*s.timeout);
  }

  // Explore's model: a request that executes consumes a pending hook or variant.
  static void PlanRequest(const SendOptions& step, explore::PlanModel& m, const ProvidedVariables& provides) {
    if (step.key != kNoKey) {
      // Only a request that executes consumes a pending hook: a key's first
      // use, or a retry of a key that may have been released. A replay
      // does not execute, so the hook then hits a later request.
      const std::pair<std::string, std::string> use(step.key, step.biz);
      const bool executes = !m.used_keys.count(use) || m.maybe_released.count(use);
      if (m.hook_pending && executes) {
        m.maybe_released.insert(use);
        m.hook_pending = false;
      }
      // A variant goes to the action's next request whether it executes or not.
      if (m.variant_pending.erase(step.action) > 0 && executes) m.maybe_released.insert(use);
      m.used_keys.insert(use);
    } else {
      m.variant_pending.erase(step.action);
    }
    auto it = provides.find(step.action);
    if (it != provides.end()) {
      for (const auto& var : it->second) m.captured.emplace(var, step.biz);
    }
  }
};

class SendStepKind final : public RequestStepKind {
 public:
  const char* name() const override { return "send"; }
  std::vector<std::string> options() const override {
    return {"key", "key_form", "biz", "payload", "after", "repeat", "every", "until", "background", "timeout", "label", "instance",
            "then", "caller"};
  }
  Status Write(const Step& step, YAML::Emitter& out) const override {
    const SendOptions& s = step.Options<SendOptions>();
    WriteRequest(s, out);
    if (s.repeat != 1) out << YAML::Key << "repeat" << YAML::Value << s.repeat;
    if (s.every_retry_after) {
      out << YAML::Key << "every" << YAML::Value << "retry_after";
    } else if (s.every.count() > 0) {
      out << YAML::Key << "every" << YAML::Value << FormatDuration(s.every);
    }
    if (s.until_recovered) out << YAML::Key << "until" << YAML::Value << "recovered";
    if (s.background) out << YAML::Key << "background" << YAML::Value << true;
    if (s.kill_after_answer) out << YAML::Key << "then" << YAML::Value << "kill";
    if (!s.instance.empty()) out << YAML::Key << "instance" << YAML::Value << s.instance;
    WriteCallerAndTimeout(s, out);
    return Status::Ok();
  }
  void Plan(const Step& s, explore::PlanModel& m, const ProvidedVariables& provides) const override {
    const SendOptions& step = s.Options<SendOptions>();
    PlanRequest(step, m, provides);
    if (step.background) ++m.background_sends;
    AddPlanTime(m, step.background ? 10 : 30 * step.repeat);
    if (step.kill_after_answer) {
      m.up = false;
      m.paused = false;
      AddPlanTime(m, 50);
    }
  }
  // `then: kill` may end the instance that answered.
  StepEffect Effect(const Step& step) const override {
    StepEffect e;
    e.may_take_main_down = step.Options<SendOptions>().kill_after_answer;
    return e;
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::SendStep(ctx, step, index);
  }
};

class BurstStepKind final : public RequestStepKind {
 public:
  const char* name() const override { return "burst"; }
  std::vector<std::string> options() const override {
    return {"n", "key", "key_form", "biz", "payload", "mode", "after", "timeout", "label", "caller", "instance"};
  }
  bool takes_payload_list() const override { return true; }
  Status Write(const Step& step, YAML::Emitter& out) const override {
    const SendOptions& s = step.Options<SendOptions>();
    WriteRequest(s, out);
    out << YAML::Key << "n" << YAML::Value << s.n;
    out << YAML::Key << "mode" << YAML::Value << (s.mode == BurstMode::kThreads ? "threads" : "last_byte");
    WriteCallerAndTimeout(s, out);
    return Status::Ok();
  }
  void Plan(const Step& step, explore::PlanModel& m, const ProvidedVariables& provides) const override {
    PlanRequest(step.Options<SendOptions>(), m, provides);
    AddPlanTime(m, 100);
  }
  void RuntimeNeeds(const Step& step, const Scenario&, const TargetDescription&,
                    const runtime::InterpreterOptions& options, std::vector<std::string>& needs) const override {
    if (step.Options<SendOptions>().mode == BurstMode::kLastByte && options.last_byte_burst == nullptr)
      needs.push_back("a last-byte synchronised burst sender (step at " + step.mark.ToString() + ")");
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::BurstStep(ctx, step, index);
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeSendStep() { return std::make_unique<SendStepKind>(); }
std::unique_ptr<StepKindSpec> MakeBurstStep() { return std::make_unique<BurstStepKind>(); }

}  // namespace idemproof::steps
