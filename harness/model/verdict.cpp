#include "model/verdict.h"

namespace idemproof {

const char* VerdictStatusName(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kValid: return "valid";
    case VerdictStatus::kInvalid: return "invalid";
    case VerdictStatus::kUnknown: return "unknown";
    case VerdictStatus::kNotApplicable: return "not_applicable";
  }
  return "unknown";
}

Result<VerdictStatus> ParseVerdictStatus(const std::string& text) {
  for (auto s : {VerdictStatus::kValid, VerdictStatus::kInvalid, VerdictStatus::kUnknown,
                 VerdictStatus::kNotApplicable}) {
    if (text == VerdictStatusName(s)) return s;
  }
  return Status::InvalidArgument("unknown verdict status '" + text + "'");
}

const char* SeverityName(Severity severity) {
  return severity == Severity::kDeviation ? "deviation" : "violation";
}

Result<Severity> ParseSeverity(const std::string& text) {
  if (text == "violation") return Severity::kViolation;
  if (text == "deviation") return Severity::kDeviation;
  return Status::InvalidArgument("unknown severity '" + text + "' (violation or deviation)");
}

const char* Verdict::Label() const { return is_deviation() ? "deviation" : VerdictStatusName(status); }

Verdict Verdict::Counted(std::int64_t premise_count) && {
  premise.count = premise_count;
  return std::move(*this);
}

namespace {
Verdict Make(VerdictStatus st, std::string oracle, std::string evidence, nlohmann::json details) {
  Verdict v;
  v.oracle = std::move(oracle);
  v.status = st;
  v.evidence = std::move(evidence);
  v.details = std::move(details);
  return v;
}
}  // namespace

Verdict Verdict::Valid(std::string o, std::string e, nlohmann::json d) {
  return Make(VerdictStatus::kValid, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::Invalid(std::string o, std::string e, nlohmann::json d) {
  return Make(VerdictStatus::kInvalid, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::Deviation(std::string o, std::string e, nlohmann::json d) {
  Verdict v = Make(VerdictStatus::kInvalid, std::move(o), std::move(e), std::move(d));
  v.severity = Severity::kDeviation;
  return v;
}
Verdict Verdict::Unknown(std::string o, std::string e, nlohmann::json d) {
  return Make(VerdictStatus::kUnknown, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::NotApplicable(std::string o, std::string e, nlohmann::json d) {
  return Make(VerdictStatus::kNotApplicable, std::move(o), std::move(e), std::move(d));
}

nlohmann::json VerdictToJson(const Verdict& v) {
  nlohmann::json out = {{"oracle", v.oracle},
                        {"status", VerdictStatusName(v.status)},
                        {"evidence", v.evidence},
                        {"details", v.details}};
  if (v.status == VerdictStatus::kInvalid) out["severity"] = SeverityName(v.severity);
  if (!v.rule.id.empty()) out["rule"] = {{"id", v.rule.id}, {"text", v.rule.text}, {"level", v.rule.level}};
  if (!v.premise.what.empty())
    out["premise"] = {{"what", v.premise.what},
                      {"count", v.premise.count ? nlohmann::json(*v.premise.count) : nlohmann::json(nullptr)}};
  return out;
}

Result<Verdict> VerdictFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("verdict: expected an object");
  Verdict v;
  try {
    v.oracle = doc.at("oracle").get<std::string>();
    auto st = ParseVerdictStatus(doc.at("status").get<std::string>());
    if (!st.ok()) return st.status();
    v.status = *st;
    v.evidence = doc.value("evidence", "");
    auto severity = ParseSeverity(doc.value("severity", "violation"));
    if (!severity.ok()) return severity.status();
    v.severity = *severity;
    v.details = doc.value("details", nlohmann::json::object());
    if (doc.contains("rule") && doc["rule"].is_object()) {
      const auto& r = doc["rule"];
      v.rule = {r.value("id", std::string()), r.value("text", std::string()), r.value("level", std::string())};
    }
    if (doc.contains("premise") && doc["premise"].is_object()) {
      const auto& p = doc["premise"];
      v.premise.what = p.value("what", std::string());
      if (p.contains("count") && p["count"].is_number_integer()) v.premise.count = p["count"].get<std::int64_t>();
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("verdict: ") + e.what());
  }
  return v;
}

}  // namespace idemproof
