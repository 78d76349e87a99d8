// Scenario: one failure hunt, loaded from a scenario file (YAML). A scenario
// says which layer it exercises, what it does (steps), which faults it may
// inject, and what must hold afterwards (oracles with parameters). It carries
// NOTHING target-specific: actions, probes and hooks are names the target
// file defines; keys and biz ids are symbolic names ("k1", "b1") the runtime
// maps to unique values per scenario run.
//
// The file format is documented key by key in docs/scenario-reference.md.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/status.h"
#include "model/roles.h"
#include "model/step_kind.h"
#include "model/step_options.h"
#include "model/target/contract.h"
#include "model/vocabulary.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

// kCluster: duplicates that land on another instance of the target (a
// claim held in one process's memory, a per-instance cache).
enum class Layer { kClient, kGateway, kQueue, kSideEffect, kConcurrency, kBatch, kCluster };
// "client", "gateway", "queue", "side-effect", "concurrency", "batch", "cluster".
const char* LayerName(Layer layer);
Result<Layer> ParseLayer(const std::string& text);

// A step's kind is a StepKindSpec (model/step_kind.h), registered by name
// in StepKinds(): send, burst, wait, hook, probe, fault, heal, join, start,
// stop, kill, restart, run_batch, rerun, clean_run, pause, resume, spawn,
// deliver, publish, cause (harness/steps/, one file per kind or family).

// Reserved key names: "none" = send without the key header; "fresh" = a new
// unique key for every request (the wrong client that regenerates its key).
inline constexpr const char* kNoKey = "none";
inline constexpr const char* kFreshKey = "fresh";

// One step: the header every kind has, and its kind's options
// (model/step_options.h), the one struct its kind's Parse fills.
struct Step {
  const StepKindSpec* kind = nullptr;  // REQUIRES (once built): registered in StepKinds()
  // Its kind's name ("send"): for messages and tests.
  std::string KindName() const { return kind == nullptr ? std::string("?") : std::string(kind->name()); }
  SourceMark mark;
  Duration after{0};  // sleep this long before the step
  std::string label;  // free text shown in reports; probe: the label (`as:`)
  // One of StepOptions: what kind->NewOptions() gives, filled by its Parse.
  StepOptions options;

  // The options as `T`. REQUIRES: the step's options are a T (its kind's;
  // std::bad_variant_access otherwise).
  template <typename T>
  T& Options() {
    return std::get<T>(options);
  }
  template <typename T>
  const T& Options() const {
    return std::get<T>(options);
  }
  // The options as `T`, or nullptr when they are another kind's.
  template <typename T>
  const T* Find() const {
    return std::get_if<T>(&options);
  }
  template <typename T>
  T* Find() {
    return std::get_if<T>(&options);
  }
  // The instance its `instance:` names (send, burst, process control);
  // kBalancedInstance when it names none or its kind takes none.
  const std::string& NamedInstance() const;
};

// A step of the registered kind `kind_name` (StepKindNamed), its options its
// kind's (NewOptions), every field at its default.
Step MakeStep(const std::string& kind_name);

// `on: store`: a fault on the service's own store (see FaultDeclaration::on).
inline constexpr char kStoreHop[] = "store";
// `on: downstream`: a fault on each http egress the scenario's actions call
// (TargetDescription::DownstreamsOf; see FaultDeclaration::on).
inline constexpr char kDownstreamHop[] = "downstream";
// "egress.NAME": a fault on the target's downstream NAME (its `on:` once bound).
std::string EgressHop(const std::string& egress);
// NAME of an `on:` that is "egress.NAME"; "" for any other hop.
std::string EgressOfHop(const std::string& on);

// A fault the scenario may inject, by a fault step or for its whole length.
struct FaultDeclaration {
  std::string name;        // the key in `faults:`
  std::string kind;        // the injector kind
  // Where it acts: "" = the client's hop (a proxy in front of the target);
  // "egress.NAME" = the target's downstream NAME (target `egress:`);
  // kStoreHop = the service's own store: the bind stage makes one scenario
  // per tcp egress of the target (`protocol: tcp`), with "egress.NAME";
  // kDownstreamHop = each http egress an action the bound scenario sends
  // calls: one scenario per such downstream, with "egress.NAME" (a
  // kill-after-answer with no `match` gets the match of the action's ledger
  // probe on it, the effect it declares).
  std::string on;
  nlohmann::json params;   // every other key of the block, as JSON (durations as strings)
  SourceMark mark;
  // `required: false`: the fault may find nothing to act on and the scenario
  // still holds (a sweep's position past the writes a create makes);
  // faults_fired says it was not reached instead of undecided. At least one
  // fault must still fire.
  bool required = true;
};

// One expectation: an oracle name plus its parameters (an object; {} when none).
struct OracleSpec {
  std::string name;
  nlohmann::json params = nlohmann::json::object();
  SourceMark mark;
};

// A scenario parameter (`for_each:`): a name the steps and expectations use
// as "$NAME" where an action or probe name goes. The bind stage (binding.h)
// binds it to each action or probe of a target that has the role.
struct ScenarioParameter {
  std::string name;
  std::string role;                // an action role or a probe role (roles.h)
  std::vector<std::string> needs;  // action parameters: "records", "other_payload", "json_body", "calls"
  std::string of;                  // an earlier action parameter this one works on; "" = none
  SourceMark mark;
  bool is_probe() const { return IsProbeRole(role); }
  bool is_message() const { return IsMessageRole(role); }  // bound to a message (target `messages:`)
};

// The prefix of a parameter reference in a step or an oracle parameter.
inline constexpr char kParameterSigil = '$';
// The bound name of "$PARAM" (`binding`: parameter -> name), or `name`
// itself when it is no reference or names no bound parameter.
std::string BoundName(const std::string& name, const std::map<std::string, std::string>& binding);

struct Scenario {
  std::string file;
  std::string name;   // default: the file's stem
  Layer layer = Layer::kClient;
  std::string hunts;  // required: the failure it hunts, one line
  std::vector<Step> steps;
  std::map<std::string, FaultDeclaration> faults;
  std::vector<OracleSpec> expect;
  SourceMark mark;
  std::vector<ScenarioParameter> parameters;  // `for_each:`, in file order
  // `min_instances:`: the fewest target instances the scenario is meaningful
  // on (1 = any target).
  int min_instances = 1;
  // `max_instances:`: the most it is meaningful on (a consumer killed
  // before its ack must be the one the scenario restarts); 0 = no limit.
  int max_instances = 0;
  // The fewest target instances it needs: min_instances, 2 for a step
  // saying `instance: other`, N for one naming "instance-N".
  int InstancesNeeded() const;

  // Set by the bind stage (binding.h). A bound scenario's steps and
  // expectations name actions and probes literally; `name` is
  // "NAME[value,...]", `bound_from` the name before binding.
  std::map<std::string, std::string> binding;  // parameter -> action or probe name
  std::string bound_from;
  // Set by the bind stage when no action and probe of the target fit the
  // parameters: what the target lacks (the scenario is not_applicable).
  std::vector<std::string> unmet;

  // The actions sent by send/burst steps, in first-use order.
  std::vector<std::string> ActionsUsed() const;
  // True when a step runs a batch job.
  bool UsesBatch() const;
  // True when a step or an oracle parameter says "$name".
  bool ReferencesParameter(const std::string& name) const;
};

// `wait: past_window`: how long it waits for `contract` — the declared
// window plus a tenth of it, at least 200ms more, so the retry that follows
// comes after the window has passed since the last answer. nullopt when the
// contract declares no window, or one longer than kLongestPastWindow (a
// scenario does not wait that long: the scenario is not applicable).
inline constexpr Duration kLongestPastWindow = std::chrono::minutes(10);
std::optional<Duration> PastWindowWait(const IdempotencyContract& contract);
// What a wait step sleeps: its duration, or PastWindowWait (0 without one).
Duration WaitDuration(const WaitOptions& wait, const IdempotencyContract& contract);

// Loads and strictly validates a scenario file. Errors are kInvalidConfig with
// file:line:column: YAML syntax, unknown keys or step kinds (closest known key
// suggested), wrong types, missing required fields, bad durations, unknown
// oracles or oracle parameters, unknown fault kinds (when the vocabulary lists
// them), steps naming undeclared faults, `for_each:` parameters with an
// unknown role or need, "$NAME" references to no parameter (or to a probe
// parameter where an action goes, and back), parameters never referenced.
Result<Scenario> LoadScenarioFile(const std::string& path, const ScenarioVocabulary& vocabulary);
// `parameters_used_elsewhere`: the file's other blocks (an explore file's
// `explore:`) may be where a parameter is used; the caller checks.
Result<Scenario> ParseScenario(const std::string& yaml, const std::string& file,
                               const ScenarioVocabulary& vocabulary, bool parameters_used_elsewhere = false);

// How a scenario fits a target. A scenario with parameters is checked once
// bound (binding.h); an unbound one's `unmet` become its needs.
//  - errors: the scenario names an action, hook or probe whose name is a
//    near miss of a declared one (a typo): the run must stop with exit code 2.
//  - needs: capabilities the target does not declare (an action, hook or
//    probe it lacks entirely, a start command for kill/restart): the
//    scenario's verdicts are all not_applicable "needs X".
struct ScenarioFit {
  std::vector<Status> errors;
  std::vector<std::string> needs;
  bool runnable() const { return errors.empty() && needs.empty(); }
};
ScenarioFit CheckScenarioAgainstTarget(const Scenario& scenario, const TargetDescription& target);


}  // namespace idemproof
