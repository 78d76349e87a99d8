#include "model/finding.h"

#include <algorithm>

namespace idemproof {

namespace {

constexpr FindingRole kRoles[] = {FindingRole::kFirst,   FindingRole::kReplay,   FindingRole::kRetry,
                                  FindingRole::kDuplicate, FindingRole::kRequest, FindingRole::kFailure,
                                  FindingRole::kReplayOf, FindingRole::kExecutions, FindingRole::kOps};

bool IsOpRef(const nlohmann::json& j) { return j.is_object() && j.contains("index") && j["index"].is_number_integer(); }

std::string Text(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

const char* FindingRoleName(FindingRole role) {
  switch (role) {
    case FindingRole::kFirst: return "first";
    case FindingRole::kReplay: return "replay";
    case FindingRole::kRetry: return "retry";
    case FindingRole::kDuplicate: return "duplicate";
    case FindingRole::kRequest: return "request";
    case FindingRole::kFailure: return "failure";
    case FindingRole::kReplayOf: return "replay_of";
    case FindingRole::kExecutions: return "executions";
    case FindingRole::kOps: return "ops";
  }
  return "?";
}

bool FindingRoleHoldsSeveral(FindingRole role) {
  return role == FindingRole::kExecutions || role == FindingRole::kOps;
}

std::int64_t FindingOp::index() const { return IsOpRef(ref) ? ref["index"].get<std::int64_t>() : -1; }

OpRefView ReadOpRef(const nlohmann::json& ref) {
  OpRefView v;
  if (!ref.is_object()) return v;
  const auto text = [&](const char* name) {
    const auto it = ref.find(name);
    return it != ref.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  v.index = IsOpRef(ref) ? ref["index"].get<std::int64_t>() : -1;
  v.process = text("process");
  v.key = text("key");
  v.outcome = text("outcome");
  v.error = text("error");
  if (const auto it = ref.find("completion_index"); it != ref.end() && it->is_number_integer())
    v.completion_index = it->get<std::int64_t>();
  if (const auto it = ref.find("answer"); it != ref.end() && it->is_object()) v.answer = *it;
  return v;
}

Finding& Finding::With(FindingRole role, nlohmann::json ref) {
  if (IsOpRef(ref)) {
    ops.push_back({role, std::move(ref)});
  } else if (!ref.is_null()) {
    subject[FindingRoleName(role)] = std::move(ref);  // evidence, not an op of the history
  }
  return *this;
}

std::vector<const FindingOp*> Finding::OpsOf(FindingRole role) const {
  std::vector<const FindingOp*> out;
  for (const auto& op : ops)
    if (op.role == role) out.push_back(&op);
  return out;
}

Finding MakeFinding(std::string problem, nlohmann::json subject) {
  Finding f;
  f.problem = std::move(problem);
  if (subject.is_object()) f.subject = std::move(subject);
  return f;
}

Finding InRoleOrder(Finding f) {
  std::vector<FindingOp> ops;
  for (const FindingRole role : kRoles) {
    for (const FindingOp* op : f.OpsOf(role)) {
      ops.push_back(*op);
      if (!FindingRoleHoldsSeveral(role)) break;
    }
  }
  f.ops = std::move(ops);
  return f;
}

nlohmann::json FindingToJson(const Finding& f) {
  nlohmann::json j = f.subject.is_object() ? f.subject : nlohmann::json::object();
  j["problem"] = f.problem;
  if (!f.rule.empty()) j["rule"] = f.rule;
  for (const FindingRole role : kRoles) {
    const auto ops = f.OpsOf(role);
    if (ops.empty()) continue;
    if (FindingRoleHoldsSeveral(role)) {
      nlohmann::json list = nlohmann::json::array();
      for (const FindingOp* op : ops) list.push_back(op->ref);
      j[FindingRoleName(role)] = std::move(list);
    } else {
      j[FindingRoleName(role)] = ops.front()->ref;  // one op per single role
    }
  }
  if (!f.differences.empty()) j["differences"] = f.differences;
  if (f.records) j["records"] = *f.records;
  if (!f.expected.is_null()) j["expected"] = f.expected;
  if (!f.missing_ranges.empty()) j["missing_ranges"] = f.missing_ranges;
  for (const FindingValue& v : f.values) j["values"].push_back({{"label", v.label}, {"value", v.value}});
  return j;
}

Finding FindingFromJson(const nlohmann::json& doc) {
  Finding f;
  if (!doc.is_object()) return f;
  for (const auto& [name, value] : doc.items()) {
    if (name == "problem") {
      f.problem = Text(value);
    } else if (name == "rule" && value.is_string()) {
      f.rule = value.get<std::string>();
    } else if (name == "differences" && value.is_array()) {
      for (const auto& d : value) f.differences.push_back(Text(d));
    } else if (name == "records" && value.is_number_integer()) {
      f.records = value.get<std::int64_t>();
    } else if (name == "expected") {
      f.expected = value;
    } else if (name == "missing_ranges" && value.is_array()) {
      for (const auto& r : value) f.missing_ranges.push_back(Text(r));
    } else if (name == "values" && value.is_array() &&
               std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) {
                 return v.is_object() && v.contains("label") && v["label"].is_string() && v.contains("value");
               })) {
      for (const auto& v : value) f.values.push_back({v["label"].get<std::string>(), v["value"]});
    } else {
      f.subject[name] = value;
    }
  }
  // The ops, in role order; what is not an op stays in the subject.
  for (const FindingRole role : kRoles) {
    auto it = f.subject.find(FindingRoleName(role));
    if (it == f.subject.end()) continue;
    if (FindingRoleHoldsSeveral(role) && it->is_array() && !it->empty() &&
        std::all_of(it->begin(), it->end(), IsOpRef)) {
      for (const auto& op : *it) f.ops.push_back({role, op});
      f.subject.erase(it);
    } else if (!FindingRoleHoldsSeveral(role) && IsOpRef(*it)) {
      f.ops.push_back({role, *it});
      f.subject.erase(it);
    }
  }
  return f;
}

}  // namespace idemproof
