// Verdict: what one oracle concluded about one scenario run.
//   valid          the property held, and there was evidence to judge it
//   invalid        the property was violated; `details` holds the proof
//   unknown        could not decide (no answer arrived, the oracle crashed)
//   not_applicable the scenario/target gives nothing to judge (e.g. the target
//                  declares no replay marker, the scenario sent no mismatch)
// `evidence` is ONE line a human reads in a summary table; `details` is the
// proof, typed (model/verdict_details.h: findings, counts, tallies...).
// An invalid verdict (a finding) has a severity: a violation breaks a MUST
// (exit 1), a deviation a SHOULD (exit 0 unless --strict). Other statuses
// ignore it.
// `premise` says how often what the property is about happened in the run
// ("overlapping duplicates" x31): the registry fills `what` from the
// oracle's signature and turns a valid verdict whose count is 0 or unset
// into `unknown: premise not reached` (a property never exercised proved
// nothing). Oracles without a premise (probe_equal) leave it empty.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "model/verdict_details.h"

namespace idemproof {

enum class VerdictStatus { kValid, kInvalid, kUnknown, kNotApplicable };
// "valid", "invalid", "unknown", "not_applicable".
const char* VerdictStatusName(VerdictStatus status);
Result<VerdictStatus> ParseVerdictStatus(const std::string& text);

enum class Severity { kViolation, kDeviation };
const char* SeverityName(Severity severity);  // "violation", "deviation"
Result<Severity> ParseSeverity(const std::string& text);

struct Premise {
  std::string what;              // plural noun phrase: "overlapping duplicates"
  std::optional<std::int64_t> count;  // unset: the oracle did not get far enough to count
};

// The evidence of every PremiseNotReached verdict starts with this.
inline constexpr const char* kPremiseNotReached = "premise not reached: ";

// The rule of the run's semantics profile a verdict applied (model/profile.h).
struct AppliedRule {
  std::string id;     // "ietf/mismatch-status"; "" = none
  std::string text;
  std::string level;  // "MUST" | "SHOULD"
};

struct Verdict {
  std::string oracle;
  VerdictStatus status = VerdictStatus::kUnknown;
  Severity severity = Severity::kViolation;  // meaningful for kInvalid only
  std::string evidence;
  VerdictDetails details;
  Premise premise;
  AppliedRule rule;

  static Verdict Valid(std::string oracle, std::string evidence, VerdictDetails details = {});
  static Verdict Invalid(std::string oracle, std::string evidence, VerdictDetails details = {});
  static Verdict Unknown(std::string oracle, std::string evidence, VerdictDetails details = {});
  static Verdict NotApplicable(std::string oracle, std::string evidence, VerdictDetails details = {});
  // An invalid verdict of severity deviation.
  static Verdict Deviation(std::string oracle, std::string evidence, VerdictDetails details = {});

  bool is_violation() const { return status == VerdictStatus::kInvalid && severity == Severity::kViolation; }
  bool is_deviation() const { return status == VerdictStatus::kInvalid && severity == Severity::kDeviation; }
  // What tables print: "deviation" for a deviation, else the status name.
  const char* Label() const;
  // This verdict with its premise count set.
  Verdict Counted(std::int64_t premise_count) &&;
  // Unknown because what the property is about never happened (count 0).
  bool PremiseNotReached() const {
    return status == VerdictStatus::kUnknown && !premise.what.empty() && premise.count && *premise.count == 0;
  }
};

// JSON (model/results_json.h): {"oracle","status","evidence","details"} plus
// "severity" on invalid verdicts (read back as violation when absent) and
// "premise": {"what", "count"} when the oracle has one (count null when not
// counted).

}  // namespace idemproof
