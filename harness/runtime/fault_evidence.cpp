#include "runtime/fault_evidence.h"
#include "model/history_events.h"

#include <map>

namespace idemproof::runtime {

std::optional<Verdict> FaultsFired(const Scenario& scenario, const History& history) {
  // The declared faults, and the ones `cause` steps armed (their events say "cause").
  std::map<std::string, std::string> judged;  // name -> kind
  for (const auto& [name, fault] : scenario.faults) judged[name] = fault.kind;
  for (const auto& e : history.events()) {
    if (e.process == event_process::kNemesis && e.f == event_f::kFault && e.value.contains("cause"))
      judged.emplace(e.value.value("fault", ""), "cause " + e.value.value("cause", ""));
  }
  if (judged.empty()) return std::nullopt;
  std::map<std::string, std::int64_t> injected;
  std::map<std::string, std::string> failed;
  for (const auto& e : history.events()) {
    if (e.process != event_process::kNemesis || e.f != event_f::kFault || e.type == EventType::kInvoke) continue;
    const std::string name = e.value.value("fault", "");
    const std::string phase = e.value.value("phase", "");
    if (e.type == EventType::kFail) {
      failed[name] = e.value.value("error", "failed");
      continue;
    }
    if (phase == "start") injected.emplace(name, 0);
    if (phase == "heal" && e.value.contains("injected") && e.value["injected"].is_number_integer())
      injected[name] += e.value["injected"].get<std::int64_t>();
  }
  nlohmann::json counts = nlohmann::json::object();
  std::string fired, problem;
  for (const auto& [name, kind] : judged) {
    auto it = injected.find(name);
    std::string why;
    if (failed.count(name)) {
      why = "fault " + name + " (" + kind + ") could not be started or healed: " + failed[name];
    } else if (it == injected.end()) {
      why = "fault " + name + " (" + kind + ") was never started";
    } else if (it->second == 0) {
      why = "fault " + name + " (" + kind + ") never fired: the scenario proves nothing about it";
    }
    counts[name] = it == injected.end() ? 0 : it->second;
    if (!why.empty()) {
      if (problem.empty()) problem = why;
    } else {
      fired += (fired.empty() ? "" : ", ") + name + " fired " + std::to_string(it->second) + "\u00d7";
    }
  }
  nlohmann::json details = {{"injected", counts}};
  if (!problem.empty()) return Verdict::Unknown(kFaultsFiredOracle, problem, details);
  return Verdict::Valid(kFaultsFiredOracle, fired, details);
}

}  // namespace idemproof::runtime
