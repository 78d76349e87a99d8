// The queue steps: `deliver: MESSAGE` pushes a declared message to consumer
// instances over HTTP at least once (`copies`, `lose_ack`, `max_attempts`,
// `every`, `to:`); `publish: MESSAGE` adds `copies` entries to the target's
// broker (a Redis stream) and waits until consumed. They share the message
// options (message id, biz, copies, timeout, variant, background) and the
// message check: a deliver's variant changes the push, a publish's the
// entry's fields (messages.NAME.variants.V.fields).
// Execution: runtime/queue_steps.h.
#include "runtime/queue_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class QueueStepKind final : public StepKindSpec {
 public:
  explicit QueueStepKind(bool deliver) : deliver_(deliver) {}
  const char* name() const override { return deliver_ ? "deliver" : "publish"; }
  std::vector<std::string> options() const override {
    if (deliver_)
      return {"message", "biz",     "copies",     "lose_ack", "every", "max_attempts", "to",
              "timeout", "variant", "background", "after",    "label"};
    return {"message", "biz", "copies", "timeout", "variant", "background", "after", "label"};
  }
  StepOptions NewOptions() const override { return QueueOptions{}; }

  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    QueueOptions& st = step.Options<QueueOptions>();
    st.name = parser.MessageOrReference(parser.RequiredValue(value, key, what, "a message name"), what);
    yaml::Reader& r = parser.reader();
    if (node["variant"]) st.variant = parser.Symbol(node["variant"], what + ".variant");
    if (node["message"]) st.message_id = parser.Symbol(node["message"], what + ".message");
    auto count = [&](const char* k, long long lo, long long hi) {
      long long n = r.Int(node[k], what + "." + k);
      if (n < lo || n > hi)
        r.Fail(node[k], what + "." + k + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
      return static_cast<int>(n);
    };
    if (node["copies"]) st.copies = count("copies", 1, 100);
    if (node["lose_ack"]) st.lose_ack = count("lose_ack", 0, 100);
    if (node["max_attempts"]) st.max_attempts = count("max_attempts", 1, 1000);
    if (node["to"]) {
      st.consumers = r.StringList(node["to"], what + ".to");
      if (st.consumers.empty()) r.Fail(node["to"], what + ".to must name at least one instance");
      for (const auto& item : node["to"]) parser.KnownInstance(item, item.Scalar(), what + ".to");
    }
    if (node["biz"]) st.biz = parser.Symbol(node["biz"], what + ".biz");
    // (`every: retry_after` reads as its 1s stand-in here: a deliver honours no Retry-After.)
    bool retry_after = false;
    if (node["every"]) st.every = parser.Every(node["every"], what + ".every", &retry_after);
    if (node["background"]) st.background = r.Bool(node["background"], what + ".background");
    if (node["timeout"]) st.timeout = r.Timeout(node["timeout"], what + ".timeout");
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const TargetDescription& target = fit.target();
    const QueueOptions& s = step.Options<QueueOptions>();
    auto m = target.messages.find(s.name);
    if (m == target.messages.end()) {
      const std::string close = yaml::ClosestWord(s.name, NamesOf(target.messages));
      if (!close.empty()) {
        fit.AddError(Status::InvalidConfig("message '" + s.name + "' is not declared by target '" + target.name +
                                               "' (did you mean '" + close + "'?)",
                                           step.mark));
      } else {
        fit.AddNeed("message '" + s.name + "' (target 'messages')");
      }
    } else if (deliver_ && !m->second.push) {
      fit.AddNeed("a push request for message '" + s.name + "' (messages." + s.name + ".push)");
    } else if (deliver_ && !s.variant.empty() && !m->second.variants.count(s.variant)) {
      fit.AddNeed("a variant '" + s.variant + "' of message '" + s.name + "' (messages." + s.name + ".variants)");
    } else if (!deliver_ && m->second.fields.empty()) {
      fit.AddNeed("broker fields for message '" + s.name + "' (messages." + s.name + ".fields)");
    } else if (!deliver_ && !s.variant.empty() &&
               (!m->second.variants.count(s.variant) || m->second.variants.at(s.variant).fields.empty())) {
      fit.AddNeed("a variant '" + s.variant + "' of message '" + s.name + "' that changes its broker entry (messages." +
                  s.name + ".variants." + s.variant + ".fields)");
    }
    if (!deliver_ && !target.broker) fit.AddNeed("a broker (target 'broker') for step 'publish'");
    if (deliver_) {
      for (const auto& instance : s.consumers)
        if (!TargetInstanceIndex(instance) && !target.start)
          fit.AddNeed("a start command (target 'start') for consumer instance '" + instance + "'");
    }
  }

  // Unbound (no message fits): a publish names what else it lacks.
  std::string UnprovidedByAny(const Step&, const TargetDescription& target) const override {
    return !deliver_ && !target.broker ? "a broker (target 'broker') for step 'publish'" : "";
  }

  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<QueueOptions>().name};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    QueueOptions& o = step.Options<QueueOptions>();
    o.name = BoundName(o.name, binding);
  }

  Status Write(const Step& step, YAML::Emitter& out) const override {
    const QueueOptions& s = step.Options<QueueOptions>();
    if (!deliver_)
      return Status(StatusCode::kUnsupported, std::string("cannot write step kind ") + name() + " as YAML yet");
    out << YAML::Key << name() << YAML::Value << s.name;
    out << YAML::Key << "message" << YAML::Value << s.message_id;
    out << YAML::Key << "biz" << YAML::Value << s.biz;
    if (s.copies != 1) out << YAML::Key << "copies" << YAML::Value << s.copies;
    if (s.lose_ack != 0) out << YAML::Key << "lose_ack" << YAML::Value << s.lose_ack;
    if (s.every.count() > 0) out << YAML::Key << "every" << YAML::Value << FormatDuration(s.every);
    if (s.max_attempts != 10) out << YAML::Key << "max_attempts" << YAML::Value << s.max_attempts;
    if (s.consumers != std::vector<std::string>{"main"}) out << YAML::Key << "to" << YAML::Value << YAML::Flow << s.consumers;
    if (s.timeout) out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*s.timeout);
    if (!s.variant.empty()) out << YAML::Key << "variant" << YAML::Value << s.variant;
    if (s.background) out << YAML::Key << "background" << YAML::Value << true;
    return Status::Ok();
  }

  void Plan(const Step& step, explore::PlanModel& m, const ProvidedVariables&) const override {
    if (deliver_) {
      m.delivered.insert(step.Options<QueueOptions>().message_id);
      AddPlanTime(m, 50);
    } else {
      AddPlanTime(m, 10);
    }
  }

  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return deliver_ ? runtime::DeliverStep(ctx, step, index) : runtime::PublishStep(ctx, step, index);
  }

 private:
  const bool deliver_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeDeliverStep() { return std::make_unique<QueueStepKind>(true); }
std::unique_ptr<StepKindSpec> MakePublishStep() { return std::make_unique<QueueStepKind>(false); }

}  // namespace idemproof::steps
