#include "model/binding.h"

#include <algorithm>

#include "model/capabilities.h"
#include "model/role_hints.h"
#include "model/target/description.h"

namespace idemproof {
namespace {

using Assignment = std::map<std::string, std::string>;

void SubstituteJson(nlohmann::json& value, const Assignment& binding) {
  if (value.is_string()) {
    value = BoundName(value.get<std::string>(), binding);
  } else if (value.is_array() || value.is_object()) {
    for (auto& item : value) SubstituteJson(item, binding);
  }
}

bool Fits(const ScenarioParameter& p, const ActionDescription& a, const TargetDescription& target) {
  if (p.role == kAnyActionRole ? a.role.empty() : !a.HasRole(p.role)) return false;
  for (const auto& need : p.needs) {
    if (need == "calls" && target.DownstreamsOf(a.name).empty()) return false;
    if (need == "records" && !a.records) return false;
    if (need == "other_payload" && !a.other_payload) return false;
    if (need == "json_body" && !a.request.json) return false;
  }
  return true;
}

// Candidates of parameter `p`, given the earlier parameters' assignment.
std::vector<std::string> Candidates(const ScenarioParameter& p, const TargetDescription& target,
                                    const Assignment& so_far) {
  const std::string of = p.of.empty() ? "" : so_far.at(p.of);
  auto taken = [&](const std::string& name) {
    for (const auto& [param, value] : so_far)
      if (value == name) return true;
    return false;
  };
  std::vector<std::string> out;
  if (p.is_message()) {
    for (const auto& [name, message] : target.messages)
      if (!taken(name)) out.push_back(name);
  } else if (p.is_probe()) {
    for (const auto& [name, probe] : target.probes)
      if (probe.role == p.role && (of.empty() || probe.of == of) && !taken(name)) out.push_back(name);
  } else {
    for (const auto& [name, action] : target.actions)
      if (Fits(p, action, target) && (of.empty() || action.of == of) && !taken(name)) out.push_back(name);
  }
  return out;
}

void Enumerate(const Scenario& scenario, const TargetDescription& target, std::size_t i, Assignment& so_far,
               std::vector<Assignment>& out) {
  if (i == scenario.parameters.size()) {
    out.push_back(so_far);
    return;
  }
  const ScenarioParameter& p = scenario.parameters[i];
  for (const auto& name : Candidates(p, target, so_far)) {
    so_far[p.name] = name;
    Enumerate(scenario, target, i + 1, so_far, out);
    so_far.erase(p.name);
  }
}

Scenario Bound(const Scenario& scenario, const Assignment& binding) {
  Scenario s = scenario;
  s.binding = binding;
  s.bound_from = scenario.name;
  std::string values;
  for (const auto& p : scenario.parameters) values += (values.empty() ? "" : ",") + binding.at(p.name);
  s.name = scenario.name + "[" + values + "]";
  for (auto& step : s.steps) step.kind->Bind(step, binding);
  for (auto& spec : s.expect) SubstituteJson(spec.params, binding);
  return s;
}

// Fills every cause step's provision (capabilities.h); an unprovided one
// stays unresolved: CheckScenarioAgainstTarget names it as a need.
void ResolveCauses(Scenario& s, const TargetDescription& target) {
  for (auto& step : s.steps) step.kind->Resolve(step, target);
}

}  // namespace

std::string DescribeParameter(const ScenarioParameter& p) {
  if (p.is_message()) return "a message (target 'messages')";
  if (p.role == kAppliedRole) return "a probe with role applied of the $" + p.of + " message or callback";
  std::string out = std::string(p.is_probe() ? "a probe" : "an action") +
                    (p.role == kAnyActionRole ? std::string(" with a role") : " with role " + p.role);
  for (const auto& need : p.needs) {
    if (need == "records") out += " and a records probe";
    else if (need == "calls")
      out += " that calls an http egress downstream (target 'egress', named by the action's 'calls:' or a "
             "ledger probe with egress: of it)";
    else out += " and an " + need;
  }
  if (!p.of.empty()) out += " of the $" + p.of + " action";
  return out;
}

// A fault `on: store`: one scenario per tcp egress of the target, the fault
// on it. Empty when the scenario has no such fault or the target no tcp
// egress (then CheckScenarioAgainstTarget names the need).
static std::vector<Scenario> BindStores(const Scenario& scenario, const TargetDescription& target) {
  std::vector<std::string> stores;
  for (const auto& [name, egress] : target.egress)
    if (egress.tcp) stores.push_back(name);
  if (stores.empty() || std::none_of(scenario.faults.begin(), scenario.faults.end(),
                                     [](const auto& f) { return f.second.on == kStoreHop; }))
    return {};
  std::vector<Scenario> out;
  for (const auto& store : stores) {
    Scenario s = scenario;
    for (auto& [name, fault] : s.faults)
      if (fault.on == kStoreHop) fault.on = EgressHop(store);
    for (Scenario& bound : BindScenario(s, target)) {
      if (stores.size() > 1) bound.name += "@" + store;
      out.push_back(std::move(bound));
    }
  }
  return out;
}

// A fault `on: downstream` in a bound scenario: one scenario per http
// egress the actions it sends call, the fault on it; a kill-after-answer
// with no match gets the one of the action's ledger probe on that egress.
// Unchanged when none (CheckScenarioAgainstTarget names the need).
static std::vector<Scenario> BindDownstreams(Scenario bound, const TargetDescription& target) {
  if (std::none_of(bound.faults.begin(), bound.faults.end(),
                   [](const auto& f) { return f.second.on == kDownstreamHop; }))
    return {std::move(bound)};
  std::vector<std::pair<std::string, std::string>> hops;  // (action, downstream)
  for (const auto& action : bound.ActionsUsed())
    for (const auto& downstream : target.DownstreamsOf(action))
      if (std::none_of(hops.begin(), hops.end(), [&](const auto& h) { return h.second == downstream; }))
        hops.emplace_back(action, downstream);
  if (hops.empty()) return {std::move(bound)};
  std::vector<Scenario> out;
  for (const auto& [action, downstream] : hops) {
    Scenario s = bound;
    for (auto& [name, fault] : s.faults) {
      if (fault.on != kDownstreamHop) continue;
      fault.on = EgressHop(downstream);
      if (fault.kind != "kill-after-answer" || fault.params.contains("match")) continue;
      for (const auto& [probe_name, probe] : target.probes) {
        if (probe.role != "ledger" || probe.of != action || probe.egress != downstream) continue;
        if (nlohmann::json match = probe.match.AsFaultMatch(); !match.empty()) fault.params["match"] = match;
        break;
      }
    }
    if (hops.size() > 1) s.name += "@" + downstream;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Scenario> BindScenario(const Scenario& scenario, const TargetDescription& target) {
  if (auto stores = BindStores(scenario, target); !stores.empty()) return stores;
  if (scenario.parameters.empty()) {
    Scenario s = scenario;
    ResolveCauses(s, target);
    return {s};
  }
  std::vector<Assignment> assignments;
  Assignment so_far;
  Enumerate(scenario, target, 0, so_far, assignments);
  if (assignments.empty()) {
    // Name the parameters nothing of the target has the role (and needs)
    // for; when each has some, only their combination (`of:`) fails.
    Scenario unbound = scenario;
    std::string missing, all;
    for (const auto& p : scenario.parameters) {
      bool any = false;
      if (p.is_message()) {
        any = !target.messages.empty();
      } else if (p.is_probe()) {
        for (const auto& [name, probe] : target.probes) any = any || probe.role == p.role;
      } else {
        for (const auto& [name, action] : target.actions) any = any || Fits(p, action, target);
      }
      std::string described = DescribeParameter(p);
      // A file written before roles: its own action or probe may be the one.
      if (!any) {
        std::string hints;
        for (const auto& h : RoleHints(scenario, p, target)) hints += (hints.empty() ? "" : "; ") + h;
        if (!hints.empty()) described += " (" + hints + ")";
      }
      if (!any) missing += (missing.empty() ? "" : ", ") + described;
      all += (all.empty() ? "" : ", ") + described;
    }
    unbound.unmet.push_back(missing.empty() ? all + ", together" : missing);
    // ...and each capability no action of the target could get either way.
    for (const auto& step : scenario.steps) {
      std::string unprovided = step.kind->UnprovidedByAny(step, target);
      if (!unprovided.empty()) unbound.unmet.push_back(unprovided);
    }
    return {unbound};
  }
  std::vector<Scenario> out;
  for (const auto& a : assignments) {
    Scenario bound = Bound(scenario, a);
    ResolveCauses(bound, target);
    for (Scenario& s : BindDownstreams(std::move(bound), target)) out.push_back(std::move(s));
  }
  return out;
}

Result<Scenario> ApplyBinding(const Scenario& scenario, const std::map<std::string, std::string>& binding) {
  if (binding.size() != scenario.parameters.size())
    return Status::InvalidArgument("scenario '" + scenario.name + "' has " +
                                   std::to_string(scenario.parameters.size()) + " parameter(s), the binding gives " +
                                   std::to_string(binding.size()));
  for (const auto& p : scenario.parameters)
    if (!binding.count(p.name))
      return Status::InvalidArgument("scenario '" + scenario.name + "': the binding gives no value for $" + p.name);
  if (scenario.parameters.empty()) return scenario;
  return Bound(scenario, binding);
}

}  // namespace idemproof
