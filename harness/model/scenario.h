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

#include "base/burst_mode.h"
#include "base/duration.h"
#include "base/status.h"
#include "model/payload.h"
#include "model/roles.h"
#include "model/step_kind.h"
#include "model/target.h"
#include "model/vocabulary.h"

namespace idemproof {

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

// Instance names a step may use besides "main", the target's declared ones
// ("instance-2"... model/target.h) and spawned ones: `instance: other` = an
// instance other than the one the last request of the same key went to;
// "" (a send or burst naming none) = wherever the balancer places it.
inline constexpr const char* kOtherInstance = "other";
inline constexpr const char* kBalancedInstance = "";

// One step. Only the fields of its kind are meaningful.
struct Step {
  const StepKindSpec* kind = nullptr;  // REQUIRES (once built): registered in StepKinds()
  // Its kind's name ("send"): for messages and tests.
  std::string KindName() const { return kind == nullptr ? std::string("?") : std::string(kind->name()); }
  SourceMark mark;
  Duration after{0};       // all kinds: sleep this long before the step
  std::string label;       // all kinds: free text shown in reports; probe: the label

  // send / burst
  std::string action;
  std::string key = "k1";  // symbolic, or kNoKey / kFreshKey
  // `key_form: max_length`: the key grown to the target's
  // idempotency.key_max_length (model/naming.h); false = the plain key.
  bool key_at_max_length = false;
  std::string biz = "b1";  // symbolic; also the biz a probe, hook or batch step binds ({{biz}})
  PayloadVariant payload = PayloadVariant::kDefault;
  // burst: the payloads of its requests in turn (request i gets
  // payloads[i % size]); empty = every request gets `payload`.
  std::vector<PayloadVariant> payloads;
  // The payload of the step's request number `i` (0-based).
  PayloadVariant PayloadOf(int i) const {
    return payloads.empty() ? payload : payloads[static_cast<std::size_t>(i) % payloads.size()];
  }
  // Every payload the step sends.
  std::vector<PayloadVariant> AllPayloads() const { return payloads.empty() ? std::vector{payload} : payloads; }
  int repeat = 1;          // send: how many sequential requests
  Duration every{0};       // send: pause between repeats
  // send `every: retry_after`: the pause before each repeat is the last
  // answer's Retry-After (delay-seconds), as a client that honours it
  // waits; `every` (1s) stands in when it gives none. Bounded by the
  // recovery bound like `until: recovered` (request_steps.cpp).
  bool every_retry_after = false;
  // send `until: recovered`: after `repeat` sends, go on every `every` while
  // the last answer is in progress, until the target's recovery bound
  // (idempotency.lease, else idempotency.recovery_bound) has passed since
  // the step began, plus one send after it. REQUIRES: every > 0.
  bool until_recovered = false;
  bool background = false; // send, deliver, run_batch: do not wait for the answer (see kJoin)
  // send `then: kill`: SIGKILL the instance that answered the moment the answer has
  // arrived (before the target may have stored it), as a kill step would.
  bool kill_after_answer = false;
  // send / burst `caller: first|second`: sent as the target's first /
  // second declared caller (its `callers:` headers); "" = as the target's
  // own headers say.
  std::string caller;
  std::optional<Duration> timeout;  // send/burst: overrides target request_timeout
  int n = 2;               // burst: how many
  BurstMode mode = BurstMode::kLastByte;

  // run_batch / rerun / clean_run (see docs/scenario-reference.md, "Batch")
  std::string job;         // symbolic job name ("j1"), mapped to a unique one per run
  std::int64_t from = 0;   // run_batch / clean_run: first row id
  std::int64_t to = 0;     // run_batch / clean_run: one past the last row id
  std::optional<std::int64_t> fail_after;  // run_batch / rerun: the run fails after K rows
  std::string of;          // clean_run: the job whose range it repeats (resolved by the loader)

  // send / burst / pause / resume / start / stop / kill / restart: the
  // target instance ("main" = the one started first; "instance-N" the
  // target's others; spawned ones by name; kOtherInstance), or
  // kBalancedInstance when the step names none: a request goes where the
  // balancer places it, process control acts on "main" (ControlledInstance).
  std::string instance = kBalancedInstance;
  const std::string& ControlledInstance() const {
    static const std::string kMain = "main";
    return instance.empty() ? kMain : instance;
  }
  // (spawn: the new instance's name is in `name`; deliver / publish: the message's)
  // deliver / publish
  std::string message_id = "m1";  // symbolic message id, mapped like keys
  int copies = 1;          // deliver: copies pushed at once per round (to `to` in turn); publish: entries added
  int lose_ack = 0;        // deliver: the first N acks are dropped: the message is redelivered
  int max_attempts = 10;   // deliver: rounds without an ack before giving up
  std::vector<std::string> consumers{"main"};  // deliver (`to:`): consumer instances
  // deliver / run_batch `variant:`: the declared variant of the message's
  // push or of the batch run request this step's requests get; "" = none.
  std::string variant;
  // wait
  Duration duration{0};
  // `wait: past_window`: the duration comes from the target's
  // idempotency.window when the step runs (PastWindowWait); `duration` is 0.
  bool past_window = false;
  // `wait: past_lease`: the target's idempotency.lease plus a fifth of it (at
  // least 200ms), resolved when it runs (wait_step.cpp); `duration` is 0.
  bool past_lease = false;
  // hook / probe / fault / heal / deliver / publish / spawn: the name
  // (cause: the capability; `action` is the next send's or burst's action)
  std::string name;
  // cause: how the target provides it, set by the bind stage (binding.h);
  // unresolved, the runtime resolves it itself (ResolveCapability).
  bool cause_resolved = false;
  std::string cause_variant;  // the variant `action`'s next request gets; "" = none
  std::string cause_hook;     // the hook fired; "" = none
  std::string cause_ledger;   // the egress ledger probe whose downstream gets a kill-after-answer; "" = none
  // cause `variant: first_only`: the variant changes the next request only,
  // not the later requests of its key (they differ from it on purpose).
  // Default (`attempt`): every later request of that key repeats it.
  bool cause_first_only = false;
};

// A step of the registered kind `kind_name` (StepKindNamed), every field at
// its default.
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
Duration WaitDuration(const Step& step, const IdempotencyContract& contract);

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
