#include "runtime/fault_evidence.h"
#include "model/history_events.h"

#include <map>
#include <set>
#include <vector>

namespace idemproof::runtime {

namespace {

// What an injector recorded each time it was picked (its "injected" events
// on the proxy lane): how often it did what it is for, how often not, why.
struct InjectorRecord {
  std::int64_t took = 0;
  std::int64_t missed = 0;
  std::string why;        // the first miss's reason
  std::int64_t index = -1;  // its history event
};

}  // namespace

std::optional<Verdict> FaultsFired(const Scenario& scenario, const History& history) {
  // The declared faults, and the ones `cause` steps armed (their events say "cause").
  std::map<std::string, std::string> judged;  // name -> kind
  std::set<std::string> optional;             // declared `required: false`
  for (const auto& [name, fault] : scenario.faults) {
    judged[name] = fault.kind;
    if (!fault.required) optional.insert(name);
  }
  for (const auto& e : history.events()) {
    if (e.process == event_process::kNemesis && e.f == event_f::kFault && e.value.contains("cause"))
      judged.emplace(e.value.value("fault", ""), "cause " + e.value.value("cause", ""));
  }
  if (judged.empty()) return std::nullopt;
  std::map<std::string, std::int64_t> requested;  // the injector's count of picks, at heal
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> injector_name;  // fault -> the name its injector's events carry
  std::map<std::string, InjectorRecord> records;     // by injector name
  for (const auto& e : history.events()) {
    if (e.process == event_process::kProxy && e.f == event_f::kFault && e.value.is_object() &&
        e.value.value("phase", "") == "injected") {
      InjectorRecord& r = records[e.value.value("name", "")];
      const auto missed = e.value.find("missed");
      if (missed != e.value.end() && missed->is_string() && !missed->get<std::string>().empty()) {
        if (r.missed++ == 0) {
          r.why = missed->get<std::string>();
          r.index = e.index;
        }
      } else {
        ++r.took;
      }
      continue;
    }
    if (e.process != event_process::kNemesis || e.f != event_f::kFault || e.type == EventType::kInvoke) continue;
    const std::string name = e.value.value("fault", "");
    const std::string phase = e.value.value("phase", "");
    if (e.type == EventType::kFail) {
      failed[name] = e.value.value("error", "failed");
      continue;
    }
    if (phase == "start") {
      requested.emplace(name, 0);
      if (e.value.contains("injector") && e.value["injector"].is_object() &&
          e.value["injector"].value("name", "") != "")
        injector_name[name] = e.value["injector"].value("name", "");
    }
    if (phase == "heal" && e.value.contains("injected") && e.value["injected"].is_number_integer())
      requested[name] += e.value["injected"].get<std::int64_t>();
  }
  std::map<std::string, std::int64_t> counts, asked;
  nlohmann::json misses = nlohmann::json::object();
  std::string fired, problem;
  std::vector<std::string> not_reached;  // optional faults that found nothing to act on
  int took_effect = 0;
  for (const auto& [name, kind] : judged) {
    auto it = requested.find(name);
    auto in = injector_name.find(name);
    const InjectorRecord rec = records[in == injector_name.end() ? name : in->second];
    const std::int64_t picked = it == requested.end() ? 0 : it->second;
    std::string why;
    if (failed.count(name)) {
      why = "fault " + name + " (" + kind + ") could not be started or healed: " + failed[name];
    } else if (it == requested.end()) {
      why = "fault " + name + " (" + kind + ") was never started";
    } else if (picked == 0 && rec.took + rec.missed == 0) {
      if (optional.count(name)) {
        not_reached.push_back(name);
        counts[name] = 0;
        asked[name] = 0;
        continue;
      }
      why = "fault " + name + " (" + kind + ") never fired: the scenario proves nothing about it";
    } else if (rec.took == 0 && rec.missed > 0) {
      // The injector's own record, not the request to fire, says what happened.
      why = "fault " + name + " (" + kind + ") was picked " + std::to_string(rec.missed) +
            "\u00d7 but never took effect: " + rec.why + " (proxy event #" + std::to_string(rec.index) +
            "): the scenario proves nothing about it";
    } else if (rec.took == 0) {
      why = "fault " + name + " (" + kind + ") was picked " + std::to_string(picked) +
            "\u00d7 but its injector recorded no firing: the scenario proves nothing about it";
    }
    counts[name] = rec.took;
    asked[name] = picked;
    if (rec.missed > 0) misses[name] = {{"count", rec.missed}, {"why", rec.why}, {"event", rec.index}};
    if (!why.empty()) {
      if (problem.empty()) problem = why;
    } else {
      ++took_effect;
      fired += (fired.empty() ? "" : ", ") + name + " fired " + std::to_string(rec.took) + "\u00d7" +
               (rec.missed > 0 ? " (" + std::to_string(rec.missed) + "\u00d7 without effect: " + rec.why + ")"
                               : std::string());
    }
  }
  VerdictDetails details;
  details.tallies.injected = counts;
  details.tallies.picked = asked;
  details.records.missed = misses;
  std::string unreached;
  for (const auto& name : not_reached) unreached += (unreached.empty() ? "" : ", ") + name;
  if (problem.empty() && took_effect == 0)
    problem = "no fault fired (" + unreached + ": required: false, none found anything to act on): the scenario "
              "proves nothing";
  if (!problem.empty()) return Verdict::Unknown(kFaultsFiredOracle, problem, details);
  if (!unreached.empty()) fired += "; not reached (required: false, nothing to act on): " + unreached;
  return Verdict::Valid(kFaultsFiredOracle, fired, details);
}

}  // namespace idemproof::runtime
