// probe_equal: two labelled probe values are equal, minus volatile paths
// (the probes' declared ones plus the `volatile` parameter).
#include "oracles/oracle_support.h"
#include "model/history_events.h"

namespace idemproof::oracles {
namespace {
// The probe name behind a label (from the last ok probe event with it).
std::string ProbeNameOf(const History& h, const std::string& label) {
  std::string probe;
  for (const auto& e : h.events())
    if (e.f == event_f::kProbe && e.type == EventType::kOk && e.value.is_object() && e.value.value("label", "") == label)
      probe = e.value.value("probe", "");
  return probe;
}

std::string Cut(const nlohmann::json& j) {
  std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 80) + "..." : s;
}

// "$.items[0].qty" for the JSON pointer "/items/0/qty".
std::string PathText(const nlohmann::json::json_pointer& p) {
  std::string out = "$";
  std::string s = p.to_string();
  std::size_t at = 0;
  while (at < s.size()) {
    const std::size_t next = s.find('/', at + 1);
    std::string part = s.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += index || part == "-" ? "[" + part + "]" : "." + part;  // "-": past an array's end
    at = next == std::string::npos ? s.size() : next;
  }
  return out;
}

constexpr std::size_t kDifferencesListed = 10;

// Where `a` and `b` differ, one line each: "$.address: \"x\" != \"y\"".
std::vector<std::string> ValueDifferences(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<std::string> out;
  for (const auto& change : nlohmann::json::diff(a, b)) {
    if (out.size() == kDifferencesListed) break;
    const nlohmann::json::json_pointer at(change.value("path", std::string()));
    const std::string op = change.value("op", std::string());
    const std::string before = a.contains(at) ? Cut(a.at(at)) : "absent";
    const std::string after = op == "remove" ? "absent" : Cut(change.value("value", nlohmann::json()));
    out.push_back(PathText(at) + ": " + before + " != " + after);
  }
  return out;
}
}  // namespace

Verdict ProbeEqual(const OracleInput& in) {
  const std::string name = "probe_equal";
  std::string la = in.params.at("a").get<std::string>();
  std::string lb = in.params.at("b").get<std::string>();
  auto va = ProbeValue(in.history, la);
  auto vb = ProbeValue(in.history, lb);
  for (const auto& [label, v] : {std::pair{la, va}, std::pair{lb, vb}})
    if (!v) return Verdict::Unknown(name, "no probe value labelled '" + label + "' (the probe failed or did not run)");
  std::vector<JsonPath> vol;
  for (const auto& label : {la, lb}) {
    auto it = in.target.probes.find(ProbeNameOf(in.history, label));
    if (it != in.target.probes.end()) vol.insert(vol.end(), it->second.volatile_paths.begin(), it->second.volatile_paths.end());
  }
  if (in.params.contains("volatile")) {
    for (const auto& text : in.params["volatile"]) {
      auto p = JsonPath::Parse(text.get<std::string>());
      if (!p.ok()) return Verdict::Unknown(name, p.status().message());
      vol.push_back(*p);
    }
  }
  nlohmann::json a = WithoutPaths(*va, vol), b = WithoutPaths(*vb, vol);
  VerdictDetails details;
  details.probes.a = FindingValue{la, *va};
  details.probes.b = FindingValue{lb, *vb};
  if (a == b) return Verdict::Valid(name, "probe '" + la + "' == probe '" + lb + "': " + Cut(a), details);
  // The finding: no request; the two values as read, and their differences.
  Finding f = MakeFinding("probe '" + la + "' = " + Cut(a) + " but probe '" + lb + "' = " + Cut(b),
                          {{"a", la}, {"b", lb}});
  f.values = {{la, *va}, {lb, *vb}};
  f.differences = ValueDifferences(a, b);
  Violations violations;
  violations.Add(f);
  details.violations = violations.findings();
  return Verdict::Invalid(name, f.problem, details);
}

}  // namespace idemproof::oracles
