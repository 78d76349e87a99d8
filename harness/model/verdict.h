// Verdict: what one oracle concluded about one scenario run.
//   valid          the property held, and there was evidence to judge it
//   invalid        the property was violated; `details` holds the proof
//   unknown        could not decide (no answer arrived, the oracle crashed)
//   not_applicable the scenario/target gives nothing to judge (e.g. the target
//                  declares no replay marker, the scenario sent no mismatch)
// `evidence` is ONE line a human reads in a summary table; `details` is JSON
// (the two differing answers, counts, event indices...).
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

struct Verdict {
  std::string oracle;
  VerdictStatus status = VerdictStatus::kUnknown;
  std::string evidence;
  nlohmann::json details = nlohmann::json::object();

  static Verdict Valid(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  static Verdict Invalid(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  static Verdict Unknown(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
  static Verdict NotApplicable(std::string oracle, std::string evidence, nlohmann::json details = nlohmann::json::object());
};

nlohmann::json VerdictToJson(const Verdict& verdict);
Result<Verdict> VerdictFromJson(const nlohmann::json& doc);

}  // namespace idemproof
