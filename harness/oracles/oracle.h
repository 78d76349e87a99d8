// Oracles: pure checks of one scenario run. An oracle reads the Scenario,
// the TargetDescription and the History and returns a Verdict; it does no
// I/O, keeps no state and never throws out of OracleRegistry::Check (an
// exception becomes `unknown`, never `valid`). An oracle with nothing to
// judge (e.g. no replay happened) says unknown or not_applicable with the
// reason, never a silent valid.
//
// The registry maps names (as written in a scenario's `expect:`) to oracles
// and their parameter signatures; BuiltinOracles() holds every oracle listed
// in docs/scenario-reference.md:
//   one_record, identical_replay, mismatch_rejected, missing_key_rejected,
//   keyless_executes, empty_key_rejected, long_key_rejected,
//   key_syntax_rejected, problem_details,
//   in_progress, retryable_released, no_false_dedup, new_key_executes, action_scope, caller_scope, window,
//   retry_after, key_released, route_spelling, probe_equal, range_continuity,
//   and the side-effect ones (side_effect_oracles.h): intent_reconciled,
//   lease_recovery, applied_once, downstream_once.
//
// Thread-safety: a registry is built once, then read-only; Check may be
// called concurrently.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/history.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "model/verdict.h"
#include "model/vocabulary.h"

namespace idemproof {

// What an oracle gets. All references outlive the call.
struct OracleInput {
  const Scenario& scenario;
  const TargetDescription& target;
  const History& history;
  const nlohmann::json& params;  // the OracleSpec's params, validated against the signature
};

using OracleFn = std::function<Verdict(const OracleInput&)>;

class OracleRegistry {
 public:
  // Adds an oracle. kInvalidArgument if the name is taken or empty.
  Status Register(OracleSignature signature, OracleFn fn);

  std::vector<OracleSignature> Signatures() const;  // sorted by name
  // The oracle part of a scenario vocabulary (fault_kinds left nullopt).
  ScenarioVocabulary Vocabulary() const;

  // Runs one expectation. Unknown oracle or a thrown exception -> unknown
  // verdict naming the cause. The verdict's `oracle` is spec.name; its
  // `rule` is the one the target's semantics profile applies (model/
  // profile.h), and a finding against a SHOULD rule is a deviation.
  Verdict Check(const OracleSpec& spec, const Scenario& scenario, const TargetDescription& target,
                const History& history) const;
  // Runs every expectation of the scenario, in order; then, when the target
  // declares `errors: problem+json` and the scenario got a 4xx but does not
  // expect problem_details, problem_details too.
  std::vector<Verdict> CheckAll(const Scenario& scenario, const TargetDescription& target,
                                const History& history) const;

 private:
  struct Entry {
    OracleSignature signature;
    OracleFn fn;
  };
  // Check without the profile's rule.
  Verdict CheckUnder(const OracleSpec& spec, const Scenario& scenario, const TargetDescription& target,
                     const History& history) const;

  std::map<std::string, Entry> entries_;
};

// Registers every built-in oracle.
void RegisterBuiltinOracles(OracleRegistry& registry);
// A process-wide registry holding the built-ins (built on first use).
const OracleRegistry& BuiltinOracles();

}  // namespace idemproof
