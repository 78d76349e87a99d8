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
  nlohmann::json details = {{"a", {{"label", la}, {"value", *va}}}, {"b", {{"label", lb}, {"value", *vb}}}};
  auto cut = [](const nlohmann::json& j) {
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return s.size() > 80 ? s.substr(0, 80) + "..." : s;
  };
  if (a == b) return Verdict::Valid(name, "probe '" + la + "' == probe '" + lb + "': " + cut(a), details);
  return Verdict::Invalid(name, "probe '" + la + "' = " + cut(a) + " but probe '" + lb + "' = " + cut(b), details);
}

}  // namespace idemproof::oracles
