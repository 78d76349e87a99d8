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

VerdictDetails VerdictDetails::OfFindings(std::vector<Finding> findings) {
  VerdictDetails d;
  d.violations = std::move(findings);
  return d;
}

VerdictDetails VerdictDetails::OfNeeds(std::vector<std::string> needs) {
  VerdictDetails d;
  d.lists.needs = std::move(needs);
  return d;
}

const std::vector<Finding>& VerdictDetails::Findings() const {
  static const std::vector<Finding> kNone;
  return violations ? *violations : kNone;
}

const char* Verdict::Label() const { return is_deviation() ? "deviation" : VerdictStatusName(status); }

Verdict Verdict::Counted(std::int64_t premise_count) && {
  premise.count = premise_count;
  return std::move(*this);
}

namespace {
Verdict Make(VerdictStatus st, std::string oracle, std::string evidence, VerdictDetails details) {
  Verdict v;
  v.oracle = std::move(oracle);
  v.status = st;
  v.evidence = std::move(evidence);
  v.details = std::move(details);
  return v;
}
}  // namespace

Verdict Verdict::Valid(std::string o, std::string e, VerdictDetails d) {
  return Make(VerdictStatus::kValid, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::Invalid(std::string o, std::string e, VerdictDetails d) {
  return Make(VerdictStatus::kInvalid, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::Deviation(std::string o, std::string e, VerdictDetails d) {
  Verdict v = Make(VerdictStatus::kInvalid, std::move(o), std::move(e), std::move(d));
  v.severity = Severity::kDeviation;
  return v;
}
Verdict Verdict::Unknown(std::string o, std::string e, VerdictDetails d) {
  return Make(VerdictStatus::kUnknown, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::NotApplicable(std::string o, std::string e, VerdictDetails d) {
  return Make(VerdictStatus::kNotApplicable, std::move(o), std::move(e), std::move(d));
}

}  // namespace idemproof
