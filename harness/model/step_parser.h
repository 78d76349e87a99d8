// What a step kind (model/step_kind.h) is lent to read and to check itself:
//  - StepParser: the scenario loader's helpers and the state it keeps across
//    steps (spawned instances, batch jobs); every failure throws a located
//    yaml::ConfigError (file:line:column), as the loader's own checks do;
//  - StepFitCheck: one scenario's fit to a target being built
//    (CheckScenarioAgainstTarget, scenario.h): needs and near-miss names.
//
// Thread-safety: one loader / one check at a time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/scenario.h"
#include "model/yaml_reader.h"

namespace idemproof {

class StepParser {
 public:
  StepParser(yaml::Reader& reader, const Scenario& scenario) : r_(reader), scenario_(scenario) {}

  yaml::Reader& reader() { return r_; }
  // The scenario being loaded: its faults, parameters and steps so far.
  const Scenario& scenario() const { return scenario_; }

  [[noreturn]] void Fail(const YAML::Node& node, const std::string& message) { r_.Fail(node, message); }
  // A name: letters, digits, _ . -
  std::string Symbol(const YAML::Node& node, const std::string& what);
  // An action or probe name: literal, or "$PARAM" naming a parameter of the same kind.
  std::string NameOrReference(const YAML::Node& node, const std::string& what, bool probe);
  // A message name: literal, or "$PARAM" naming a message parameter (role message).
  std::string MessageOrReference(const YAML::Node& node, const std::string& what);
  // `kind`: 0 an action parameter, 1 a probe parameter, 2 a message parameter, -1 either.
  void CheckReference(const YAML::Node& node, const std::string& ref, const std::string& what, int kind);
  // `value` when given, else fails at `key`: "WHAT needs EXPECTED".
  YAML::Node RequiredValue(const YAML::Node& value, const YAML::Node& key, const std::string& what,
                           const std::string& expected);
  // An instance a step names: the target's ("main", "instance-N") or one an
  // earlier step spawned.
  void KnownInstance(const YAML::Node& node, const std::string& name, const std::string& what);

  // The keys several kinds share, read alike (`what` is "step 'KIND'.KEY",
  // for Instance "step 'KIND'"):
  // `repeat:` 1..10000;
  int Repeat(const YAML::Node& node, const std::string& what);
  // `every:` a duration, or `retry_after` (*retry_after set, 1s returned);
  Duration Every(const YAML::Node& node, const std::string& what, bool* retry_after);
  // `instance:` a known instance (KnownInstance), or kOtherInstance when the
  // step places a request.
  std::string Instance(const YAML::Node& node, const std::string& what, bool places_request);

  // Instances spawned by the steps so far (besides "main").
  std::set<std::string>& spawned() { return instances_; }
  // The batch jobs so far: run_batch jobs -> [from, to), the clean runs'
  // jobs, the first job run.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>>& job_ranges() { return job_ranges_; }
  std::set<std::string>& clean_jobs() { return clean_jobs_; }
  std::string& first_job() { return first_job_; }

 private:
  yaml::Reader& r_;
  const Scenario& scenario_;
  std::set<std::string> instances_;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> job_ranges_;
  std::set<std::string> clean_jobs_;
  std::string first_job_;
};

class StepFitCheck {
 public:
  StepFitCheck(const TargetDescription& target, ScenarioFit& fit) : target_(target), fit_(fit) {}

  const TargetDescription& target() const { return target_; }
  // A need, once.
  void AddNeed(const std::string& need);
  // A near-miss error at `mark`.
  void AddError(Status error) { fit_.errors.push_back(std::move(error)); }
  // `name` (a `what`: "hook") missing from `known` is a typo (an error) when a
  // known one is close, otherwise a need.
  void CheckName(const std::string& name, const SourceMark& mark, const std::string& what,
                 const std::vector<std::string>& known);
  // "a start command (target 'start') for WHAT" and why the listed instances do not count.
  std::string NeedsStart(const std::string& what) const;

 private:
  const TargetDescription& target_;
  ScenarioFit& fit_;
};

}  // namespace idemproof
