// Discoverer (issue 34, `idemproof discover --target FILE`): sends a
// handful of harmless probes per keyed action to the target (started the way
// a run starts it, with its services, when the file has `start:`; else the
// running one) and proposes the idempotency contract it saw
// (contract_inference.h).
//
// The probes are a scenario written for the target (ProbeScenarioYaml), run
// by the runtime's Interpreter: the same start and stop of the target, the
// same client and request rendering, fresh keys and business ids per run from
// model/naming.h (symbolic d<N>k1, d<N>b1...). Per keyed action (role create,
// pay, put or delete; callbacks dedup by their own message id and are left
// out): first, replay, changed (other_payload, else `payload: value_changed`),
// keyless; with a `slow` variant also a slow first in the background and a
// duplicate 300 ms later (or by the hook providing slow_request, healed after). An action that works on a create's resource (`of:`)
// gets one create of that resource per business id it uses first (setup).
// The runtime also reads each sent action's records probe per business id
// at the end, and fires the `heal` hook when declared: counted too.
//
// Bounds: at most kMostPerAction requests per action (6 probes, 3 setup
// creates, 6 records reads, the slow_business and heal hooks) and kMostRequests in all; actions past the total
// are left out, named with the reason. The run's history is counted and
// checked against the plan's count.
//
// Thread-safety: one Discover() at a time per target.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "discover/contract_inference.h"
#include "model/history.h"
#include "model/target.h"
#include "model/template.h"

namespace idemproof::discover {

inline constexpr int kMostPerAction = 17;
inline constexpr int kMostRequests = 60;

// One step of the probe scenario, and which probe its request is.
struct PlannedStep {
  std::string action;               // "" for cause / join
  std::optional<ProbeKind> kind;    // nullopt for cause / join
  std::string yaml;                 // the step as scenario YAML (list item, indented)
};

struct ProbePlan {
  std::vector<PlannedStep> steps;
  std::vector<std::string> probed;     // the actions probed, in order
  std::vector<std::string> left_out;   // "NAME: why"
  int requests = 0;                    // the most requests the plan sends (sends, records reads, heal)
};

// The probes for `target`'s keyed actions, creates first, within the bounds.
ProbePlan PlanProbes(const TargetDescription& target);
// The plan as a scenario file's text.
std::string ProbeScenarioYaml(const ProbePlan& plan);

// The answers of the plan's requests in `history` (setup creates included,
// records reads and hooks not), in history order.
std::vector<ProbeAnswer> AnswersIn(const History& history, const ProbePlan& plan);
// The requests `history` shows sent to the target or its services: sends,
// bursts, probes (records reads) and hooks.
int RequestsIn(const History& history);

struct DiscoverOptions {
  TemplateVars vars;                   // build_dir, source_dir
  std::optional<std::string> flaw;     // the target's flaw_args
  std::string out_root = "runs";       // the run folder goes under it
  std::uint64_t seed = 0;
  const std::atomic<bool>* cancel = nullptr;
};

struct Discovery {
  ProbePlan plan;
  std::vector<ProbeAnswer> answers;
  int requests_sent = 0;
  std::string run_dir;                 // the target's logs and history.jsonl
  Status run_error;                    // the runtime's error (the target did not start...)
  bool interrupted = false;
};

// Runs the plan. Errors: the run folder could not be made, the probe
// scenario did not load (a bug). What the target did is data in the result.
Result<Discovery> Discover(const TargetDescription& target, const DiscoverOptions& options);

}  // namespace idemproof::discover
