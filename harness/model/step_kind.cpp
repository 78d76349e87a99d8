#include "model/step_kind.h"

#include <cstdio>
#include <cstdlib>


namespace idemproof {

void StepKindSpec::AfterLoad(StepParser&, Scenario&, std::size_t, const YAML::Node&) const {}
void StepKindSpec::Check(const Step&, StepFitCheck&) const {}
bool StepKindSpec::WritesBare(const Step&) const { return false; }
void StepKindSpec::Resolve(Step&, const TargetDescription&) const {}
std::string StepKindSpec::UnprovidedByAny(const Step&, const TargetDescription&) const { return ""; }
bool StepKindSpec::NeedsOwnProcesses(const Step&) const { return false; }
bool StepKindSpec::NeedsLaterRequest(const Step&) const { return false; }
StepEffect StepKindSpec::Effect(const Step&) const { return {}; }
std::vector<std::string> StepKindSpec::ParameterNames(const Step&) const { return {}; }
void StepKindSpec::Bind(Step&, const std::map<std::string, std::string>&) const {}

Status StepKindRegistry::Register(std::unique_ptr<StepKindSpec> kind) {
  if (Find(kind->name()) != nullptr)
    return Status::InvalidArgument(std::string("step kind '") + kind->name() + "' is registered twice");
  kinds_.push_back(std::move(kind));
  return Status::Ok();
}

const StepKindSpec* StepKindRegistry::Find(const std::string& name) const {
  for (const auto& k : kinds_)
    if (name == k->name()) return k.get();
  return nullptr;
}

std::vector<std::string> StepKindRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) out.push_back(k->name());
  return out;
}

StepKindRegistry& StepKinds() {
  static StepKindRegistry registry;
  return registry;
}

const StepKindSpec& StepKindNamed(const std::string& name) {
  const StepKindSpec* kind = StepKinds().Find(name);
  if (kind == nullptr) {
    // A kind the code names is linked in (harness/steps/): not data, a build mistake.
    std::fprintf(stderr, "idemproof: step kind '%s' is not registered (is harness/steps linked?)\n", name.c_str());
    std::abort();
  }
  return *kind;
}

}  // namespace idemproof
