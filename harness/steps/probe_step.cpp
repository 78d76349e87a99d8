// `probe: NAME` reads a target probe into the history under a label (`as:`,
// default its name). NAME may be a "$PARAM" probe parameter, bound with the
// label. Its `biz:` (default b1) binds {{biz}} and that biz's captured
// values.
//
// Execution: f probe, process probe: "value", or "error"
// (model/history_events.h); a request or command probe through the step
// context's Call, an egress probe from the egress proxy's record, a
// from_answer probe from the action's captured answer. A probe whose template
// needs a value no answer captured is not run: a note says so.
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

// The runtime this file drives (the step context).
using namespace runtime;

// An egress probe: the matching entries of the egress record so far, each
// narrowed by `value`; an entry without `value` fails the probe (a silent
// undercount would read as "fewer charges").
Status EgressProbe(StepContext& ctx, const ProbeDescription& probe, HistoryEvent invoke,
                   const std::string& biz_name, int index) {
  const std::int64_t start = monotonic_ns();
  HistoryEvent done = CompletionOf(invoke, EventType::kOk);
  if (!ctx.env().egress() || !ctx.env().egress()->Proxy(probe.egress)) {
    done.type = EventType::kFail;
    done.value["error"] = "egress " + probe.egress + " is not running";
  } else {
    const TemplateVars vars = ctx.VarsFor("", biz_name, index);
    nlohmann::json value = nlohmann::json::array();
    for (const auto& entry : ctx.env().egress()->Records(probe.egress)) {
      auto keep = EgressMatches(probe.match, entry, vars);
      if (!keep.ok()) return keep.status();
      if (!*keep) continue;
      if (!probe.value) {
        value.push_back(entry);
        continue;
      }
      auto v = probe.value->Find(entry);
      if (!v.ok()) {
        done.type = EventType::kFail;
        done.value["error"] = "no " + probe.value->text() + " in egress entry " + entry.dump();
        break;
      }
      value.push_back(*v);
    }
    if (done.type == EventType::kOk) done.value["value"] = value;
    done.value["egress"] = probe.egress;
  }
  ctx.recorder().Append(std::move(invoke), start);
  ctx.recorder().Append(std::move(done), monotonic_ns());
  return Status::Ok();
}

// A from_answer probe: the member its action's first 2xx answer for the
// biz had (captured), parsed as JSON when it parses, as a command's stdout
// is. No such answer yet: not run, a note says so (as a missing capture).
Status FromAnswerProbe(StepContext& ctx, const ProbeDescription& probe, HistoryEvent invoke,
                       const std::string& biz_name, int index) {
  const TemplateVars vars = ctx.VarsFor("", biz_name, index);
  auto it = vars.find(FromAnswerVariable(probe.name));
  if (it == vars.end()) {
    ctx.recorder().Note(index, "probe " + probe.name + " not run: no 2xx answer of " + probe.of + " for this biz gave " +
                                   probe.from_answer->text());
    return Status::Ok();
  }
  const std::int64_t now = monotonic_ns();
  HistoryEvent done = CompletionOf(invoke, EventType::kOk);
  nlohmann::json value = nlohmann::json::parse(it->second, nullptr, false);
  done.value["value"] = value.is_discarded() ? nlohmann::json(it->second) : value;
  done.value["from_answer"] = probe.of + " " + probe.from_answer->text();
  ctx.recorder().Append(std::move(invoke), now);
  ctx.recorder().Append(std::move(done), now);
  return Status::Ok();
}

// One probe step.
Status ProbeNow(StepContext& ctx, const Step& probe_step, int index) {
  const ProbeOptions& step = probe_step.Options<ProbeOptions>();
  const std::string& label = probe_step.label;
  auto it = ctx.target().probes.find(step.name);
  if (it == ctx.target().probes.end())
    return Status(StatusCode::kUnsupported, "the target declares no probe " + step.name);
  const ProbeDescription& probe = it->second;
  HistoryEvent invoke = ProbeInvoke(probe.name, label.empty() ? step.name : label, index);
  if (!probe.egress.empty()) return EgressProbe(ctx, probe, std::move(invoke), step.biz, index);
  if (probe.from_answer) return FromAnswerProbe(ctx, probe, std::move(invoke), step.biz, index);
  const HeaderList headers = ctx.target().HeadersAs(probe.caller);
  auto outcome = ctx.Call(probe.call, ctx.VarsFor("", step.biz, index), StepContext::CallMode::kCancellable, &headers);
  if (!probe.caller.empty()) invoke.value["caller"] = probe.caller;
  if (!outcome.ok()) {
    if (ctx.IsMissingCapture(outcome.status())) {
      ctx.recorder().Note(index, "probe " + probe.name + " not run: " + outcome.status().message());
      return Status::Ok();
    }
    return outcome.status();
  }
  HistoryEvent done = CompletionOf(invoke, outcome->type);
  ctx.recorder().Append(std::move(invoke), outcome->start_ns);
  if (outcome->type == EventType::kOk) {
    nlohmann::json value = outcome->value;
    if (probe.value) {
      auto v = probe.value->Find(outcome->value);
      if (v.ok()) {
        value = *v;
      } else {
        done.type = EventType::kFail;
        done.value["error"] = "no " + probe.value->text() + " in the answer";
      }
    }
    if (done.type == EventType::kOk) done.value["value"] = value;
    if (!outcome->response.is_null()) done.value["response"] = outcome->response;
  } else {
    done.value["error"] = outcome->error;
  }
  if (!outcome->command.is_null()) done.value["command"] = outcome->command;
  ctx.recorder().Append(std::move(done), outcome->end_ns);
  return Status::Ok();
}


class ProbeStepKind final : public StepKind {
 public:
  const char* name() const override { return "probe"; }
  std::vector<std::string> options() const override { return {"as", "biz", "after"}; }
  bool owns_label() const override { return true; }
  StepOptions NewOptions() const override { return ProbeOptions{}; }
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    ProbeOptions& o = step.Options<ProbeOptions>();
    o.name = parser.NameOrReference(parser.RequiredValue(value, key, what, "a name"), what, true);
    step.label = o.name;  // a "$PARAM" label becomes the bound probe's name
    if (node["biz"]) o.biz = parser.Symbol(node["biz"], what + ".biz");
  }
  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<ProbeOptions>().name};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    ProbeOptions& o = step.Options<ProbeOptions>();
    o.name = BoundName(o.name, binding);
    step.label = BoundName(step.label, binding);
  }
  void Check(const Step& s, StepFitCheck& fit) const override {
    fit.CheckName(s.Options<ProbeOptions>().name, s.mark, "probe", NamesOf(fit.target().probes));
  }
  Status Write(const Step& s, YAML::Emitter& out) const override {
    const std::string& probe = s.Options<ProbeOptions>().name;
    out << YAML::Key << name() << YAML::Value << probe;
    if (!s.label.empty() && s.label != probe) out << YAML::Key << "as" << YAML::Value << s.label;
    return Status::Ok();
  }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override { AddPlanTime(m, 10); }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return ProbeNow(ctx, step, index);
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeProbeStep() { return std::make_unique<ProbeStepKind>(); }

}  // namespace idemproof::steps
