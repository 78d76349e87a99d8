// `start`, `stop` (SIGTERM, then SIGKILL after stop_timeout), `kill`
// (SIGKILL), `restart` (stop + start, same store): process control of a
// target instance (`instance:`, main by default). They need the target's
// start command; on another instance than main, a run of their own processes.
// `start` and `restart` of main take `until: accepting`: the step ends when
// the port accepts a connection, not when the readiness request answers, so
// the next steps' requests race the start-up (the `ready` step waits).
// Execution: runtime/process_steps.h (ControlTarget).
#include "runtime/process_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class ProcessControlStepKind final : public InstanceControlStepKind {
 public:
  ProcessControlStepKind(runtime::ProcessOp op) : op_(op) {}
  const char* name() const override { return runtime::ProcessOpName(op_); }
  std::vector<std::string> options() const override {
    std::vector<std::string> keys = InstanceControlStepKind::options();
    if (Starts()) keys.push_back("until");
    return keys;
  }
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    InstanceControlStepKind::Parse(parser, node, value, key, step);
    if (!node.IsMap() || !node["until"]) return;
    const YAML::Node until = node["until"];
    if (!until.IsScalar() || (until.Scalar() != "accepting" && until.Scalar() != "ready"))
      parser.Fail(until, What(*this) + ": 'until' is accepting (the port accepts a connection) or ready (the "
                                       "readiness request answers, the default)");
    InstanceOptions& options = step.Options<InstanceOptions>();
    options.until_accepting = until.Scalar() == "accepting";
    if (options.until_accepting && options.ControlledInstance() != "main")
      parser.Fail(until, What(*this) + ": 'until: accepting' acts on main only, not on instance '" +
                             options.ControlledInstance() + "'");
  }
  // Written bare when it names no instance and waits for readiness.
  bool WritesBare(const Step& step) const override {
    return Controlled(step) == "main" && !step.Options<InstanceOptions>().until_accepting;
  }
  Status Write(const Step& step, YAML::Emitter& out) const override {
    Status written = WriteTrue(*this, out);
    if (Controlled(step) != "main") out << YAML::Key << "instance" << YAML::Value << Controlled(step);
    if (step.Options<InstanceOptions>().until_accepting) out << YAML::Key << "until" << YAML::Value << "accepting";
    return written;
  }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override {
    if (op_ == runtime::ProcessOp::kStart || op_ == runtime::ProcessOp::kRestart) {
      m.up = true;
      AddPlanTime(m, 500);
    } else {
      m.up = false;
      m.paused = false;
      AddPlanTime(m, 50);
    }
  }
  StepEffect Effect(const Step& step) const override {
    StepEffect e;
    const bool on_main = Controlled(step) == "main";
    const bool up = op_ == runtime::ProcessOp::kStart || op_ == runtime::ProcessOp::kRestart;
    e.brings_main_up = up && on_main;
    e.may_take_main_down = !up && on_main;
    return e;
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::ControlTarget(ctx.env(), ctx.recorder(), op_, index, Controlled(step),
                                  step.Options<InstanceOptions>().until_accepting ? runtime::StartUntil::kAccepting
                                                                                  : runtime::StartUntil::kReady);
  }

 private:
  bool Starts() const { return op_ == runtime::ProcessOp::kStart || op_ == runtime::ProcessOp::kRestart; }
  const runtime::ProcessOp op_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeStartStep() { return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kStart); }
std::unique_ptr<StepKindSpec> MakeStopStep() { return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kStop); }
std::unique_ptr<StepKindSpec> MakeKillStep() { return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kKill); }
std::unique_ptr<StepKindSpec> MakeRestartStep() {
  return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kRestart);
}

}  // namespace idemproof::steps
