// Verdict: what one oracle concluded about one scenario run.
//   valid          the property held, and there was evidence to judge it
//   invalid        the property was violated; `details` holds the proof
//   unknown        could not decide (no answer arrived, the oracle crashed)
//   not_applicable the scenario/target gives nothing to judge (e.g. the target
//                  declares no replay marker, the scenario sent no mismatch)
// `evidence` is ONE line a human reads in a summary table; `details` is JSON
// (the two differing answers, counts, event indices...).
// An invalid verdict (a finding) has a severity: a violation breaks a MUST
// (exit 1), a deviation a SHOULD (exit 0 unless --strict). Other statuses
// ignore it.
//
// Thread-safety: plain values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace idemproof {

enum class VerdictStatus { kValid, kInvalid, kUnknown, kNotApplicable };
// "valid", "invalid", "unknown", "not_applicable".
const char* VerdictStatusName(VerdictStatus status);
Result<VerdictStatus> ParseVerdictStatus(const std::string& text);

enum class Severity { kViolation, kDeviation };
const char* SeverityName(Severity severity);  // "violation", "deviation"
Result<Severity> ParseSeverity(const std::string& text);

struct Verdict {
  std::string oracle;
  VerdictStatus status = VerdictStatus::kUnknown;
  Severity severity = Severity::kViolation;  // meaningful for kInvalid only
  std::string evidence;
  nlohmann::json details = nlohmann::json::object();

  static Verdict Valid(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  static Verdict Invalid(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  static Verdict Unknown(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  static Verdict NotApplicable(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  // An invalid verdict of severity deviation.
  static Verdict Deviation(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());

  bool is_violation() const { return status == VerdictStatus::kInvalid && severity == Severity::kViolation; }
  bool is_deviation() const { return status == VerdictStatus::kInvalid && severity == Severity::kDeviation; }
  // What tables print: "deviation" for a deviation, else the status name.
  const char* Label() const;
};

// JSON: {"oracle","status","evidence","details"} plus "severity" on invalid
// verdicts (read back as violation when absent).

nlohmann::json VerdictToJson(const Verdict& verdict);
Result<Verdict> VerdictFromJson(const nlohmann::json& doc);

}  // namespace idemproof
