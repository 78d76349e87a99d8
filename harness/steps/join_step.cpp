// `join` (bare): waits until every background send has completed.
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class JoinStepKind final : public StepKind {
 public:
  const char* name() const override { return "join"; }
  bool bare() const override { return true; }
  std::vector<std::string> options() const override { return {"after", "label"}; }
  void Parse(StepParser& parser, const YAML::Node&, const YAML::Node& value, const YAML::Node&,
             Step&) const override {
    NoValue(parser, value, *this);
  }
  bool WritesBare(const Step&) const override { return true; }
  Status Write(const Step&, YAML::Emitter& out) const override { return WriteTrue(*this, out); }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override { AddPlanTime(m, 10); }
  Status Execute(const Step&, int, runtime::StepContext& ctx) const override {
    ctx.JoinBackground();
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeJoinStep() { return std::make_unique<JoinStepKind>(); }

}  // namespace idemproof::steps
