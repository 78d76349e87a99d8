// `spawn: NAME` starts another instance of the target (same command, same
// store) that later steps name by NAME. It needs the target's start command
// and a run of its own processes. Recorded as a nemesis event f spawn
// ({"instance"}, then {"pid"} or "error"); its pid joins the run's target pids.
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class SpawnStepKind final : public StepKind {
 public:
  const char* name() const override { return "spawn"; }
  std::vector<std::string> options() const override { return {"after", "label"}; }
  bool spawns_instance() const override { return true; }
  StepOptions NewOptions() const override { return SpawnOptions{}; }
  void Parse(StepParser& parser, const YAML::Node&, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    std::string& name = step.Options<SpawnOptions>().name;
    name = parser.Symbol(parser.RequiredValue(value, key, what, "an instance name"), what);
    if (name == "main" || parser.spawned().count(name))
      parser.Fail(value, what + ": instance '" + name + "' already exists");
    if (name == kOtherInstance || TargetInstanceIndex(name))
      parser.Fail(value, what + ": '" + name + "' names the target's own instances (main, instance-N, other); "
                                "give the spawned one another name");
    parser.spawned().insert(name);
  }
  void Check(const Step&, StepFitCheck& fit) const override {
    if (!fit.target().start) fit.AddNeed(fit.NeedsStart(What(*this)));
  }
  Status Write(const Step& s, YAML::Emitter& out) const override {
    out << YAML::Key << name() << YAML::Value << s.Options<SpawnOptions>().name;
    return Status::Ok();
  }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override { AddPlanTime(m, 10); }
  bool NeedsOwnProcesses(const Step&) const override { return true; }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    const std::string& name = step.Options<SpawnOptions>().name;
    HistoryEvent invoke = ProcessInvoke(event_f::kSpawn, index, {{"instance", name}});
    HistoryEvent done = invoke;
    ctx.recorder().Append(std::move(invoke), runtime::monotonic_ns());
    pid_t pid = 0;
    Status s = ctx.env().instances().Spawn(name, &pid);
    done.type = s.ok() ? EventType::kOk : EventType::kFail;
    done.value["pid"] = pid;
    if (!s.ok()) done.value["error"] = s.message();
    if (s.ok()) ctx.recorder().out().target_pids.push_back(pid);
    ctx.recorder().Append(std::move(done), runtime::monotonic_ns());
    return s;
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeSpawnStep() { return std::make_unique<SpawnStepKind>(); }

}  // namespace idemproof::steps
