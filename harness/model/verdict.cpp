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
Verdict Verdict::Unknown(std::string o, std::string e, nlohmann::json d) {
  return Make(VerdictStatus::kUnknown, std::move(o), std::move(e), std::move(d));
}
Verdict Verdict::NotApplicable(std::string o, std::string e, nlohmann::json d) {
  return Make(VerdictStatus::kNotApplicable, std::move(o), std::move(e), std::move(d));
}

nlohmann::json VerdictToJson(const Verdict& v) {
  return {{"oracle", v.oracle},
          {"status", VerdictStatusName(v.status)},
          {"evidence", v.evidence},
          {"details", v.details}};
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
    v.details = doc.value("details", nlohmann::json::object());
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("verdict: ") + e.what());
  }
  return v;
}

}  // namespace idemproof
