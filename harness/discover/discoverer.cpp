#include "discover/discoverer.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/http_message.h"
#include "model/event_names.h"
#include "model/scenario.h"
#include "oracles/oracle.h"
#include "runtime/interpreter.h"
#include "session/run_directory.h"

namespace idemproof::discover {

namespace {

// Creates first (a put's or delete's resource comes from one), then pay,
// put, delete; callbacks and role-less actions are not keyed requests.
int RoleRank(const std::string& role) {
  static const std::vector<std::string> kOrder = {"create", "pay", "put", "delete"};
  auto it = std::find(kOrder.begin(), kOrder.end(), role);
  return it == kOrder.end() ? -1 : static_cast<int>(it - kOrder.begin());
}

bool HasJsonBody(const ActionDescription& a) { return a.request.json.has_value(); }

// The steps of one action, numbered n, and how many requests they send.
struct ActionSteps {
  std::vector<PlannedStep> steps;
  int requests = 0;
};

ActionSteps StepsFor(const TargetDescription& target, const ActionDescription& action, int n) {
  ActionSteps out;
  const std::string p = "d" + std::to_string(n);
  std::set<std::pair<std::string, std::string>> read;  // (action, biz) records reads
  auto send = [&](const std::string& name, std::optional<ProbeKind> kind, const std::string& key,
                  const std::string& biz, const std::string& extra) {
    std::string yaml = "  - send: " + name + "\n    key: " + key + "\n    biz: " + biz + "\n" + extra;
    out.steps.push_back({name, kind, yaml});
    ++out.requests;
    const ActionDescription* a = target.FindAction(name);
    if (a && a->records && read.insert({name, biz}).second) ++out.requests;
  };
  // A put or delete works on a create's resource: one per business id.
  auto setup = [&](const std::string& biz, const std::string& key) {
    if (!action.of.empty() && target.FindAction(action.of)) send(action.of, ProbeKind::kSetup, key, biz, "");
  };
  setup(p + "b1", p + "s1");
  send(action.name, ProbeKind::kFirst, p + "k1", p + "b1", "");
  send(action.name, ProbeKind::kReplay, p + "k1", p + "b1", "    after: 50ms\n");
  if (action.other_payload) {
    send(action.name, ProbeKind::kChanged, p + "k1", p + "b1", "    payload: other\n    after: 50ms\n");
  } else if (HasJsonBody(action)) {
    send(action.name, ProbeKind::kChanged, p + "k1", p + "b1", "    payload: value_changed\n    after: 50ms\n");
  }
  setup(p + "b2", p + "s2");
  send(action.name, ProbeKind::kKeyless, "none", p + "b2", "");
  // A slow first request, the way the target provides it (capabilities.h):
  // the action's variant `slow`, else the hook providing slow_request (then healed,
  // so the next action's probes are not slow: two hook requests more).
  const bool by_variant = action.variants.count("slow") > 0;
  const bool by_hook = !by_variant && target.HookFor("slow_request") != nullptr;  // the hook with that role (default name slow_business)
  if (by_variant || by_hook) {
    setup(p + "b3", p + "s3");
    out.steps.push_back({"", std::nullopt, "  - cause: slow_request\n    action: " + action.name + "\n"});
    send(action.name, ProbeKind::kSlowFirst, p + "k3", p + "b3", "    background: true\n");
    send(action.name, ProbeKind::kConcurrent, p + "k3", p + "b3", "    after: 300ms\n");
    out.steps.push_back({"", std::nullopt, "  - join\n"});
    if (by_hook) {
      out.steps.push_back({"", std::nullopt, "  - cause: heal\n"});
      out.requests += 1 + (target.HookFor("heal") ? 1 : 0);
    }
  }
  return out;
}

}  // namespace

ProbePlan PlanProbes(const TargetDescription& target) {
  ProbePlan plan;
  std::vector<const ActionDescription*> keyed;
  for (const auto& [name, action] : target.actions) {
    if (RoleRank(action.role) < 0) {
      plan.left_out.push_back(name + ": role " + (action.role.empty() ? "none" : action.role) +
                              " (not a keyed request: create, pay, put and delete are probed)");
    } else {
      keyed.push_back(&action);
    }
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const ActionDescription* a, const ActionDescription* b) {
    return RoleRank(a->role) < RoleRank(b->role);
  });
  plan.requests = target.HookFor("heal") ? 1 : 0;  // the runtime fires heal at the end
  int n = 0;
  for (const ActionDescription* action : keyed) {
    ActionSteps steps = StepsFor(target, *action, n + 1);
    if (plan.requests + steps.requests > kMostRequests) {
      plan.left_out.push_back(action->name + ": past the bound of " + std::to_string(kMostRequests) + " requests");
      continue;
    }
    ++n;
    plan.requests += steps.requests;
    plan.probed.push_back(action->name);
    for (PlannedStep& s : steps.steps) plan.steps.push_back(std::move(s));
  }
  return plan;
}

std::string ProbeScenarioYaml(const ProbePlan& plan) {
  std::string yaml =
      "# written by idemproof discover: a few harmless probes per keyed action\n"
      "name: discover\n"
      "layer: client\n"
      "hunts: the idempotency contract the target shows\n"
      "steps:\n";
  for (const PlannedStep& s : plan.steps) yaml += s.yaml;
  // Not judged: discover reads the answers itself; the loader asks for one.
  yaml += "expect: [identical_replay]\n";
  return yaml;
}

std::vector<ProbeAnswer> AnswersIn(const History& history, const ProbePlan& plan) {
  std::vector<ProbeAnswer> out;
  // The invoke of each request by index, to read what was sent.
  std::map<std::int64_t, const HistoryEvent*> open;
  std::map<std::string, const HistoryEvent*> invoke_of;  // process -> its last invoke
  for (const HistoryEvent& e : history.events()) {
    if (!e.is_request()) continue;
    if (e.type == EventType::kInvoke) {
      invoke_of[e.process] = &e;
      continue;
    }
    if (e.step < 0 || static_cast<std::size_t>(e.step) >= plan.steps.size()) continue;
    const PlannedStep& step = plan.steps[static_cast<std::size_t>(e.step)];
    if (!step.kind || step.action != e.action) continue;
    ProbeAnswer a;
    a.action = e.action;
    a.kind = *step.kind;
    a.key_name = e.key_name;
    a.payload = e.payload;
    const HistoryEvent* invoke = invoke_of.count(e.process) ? invoke_of[e.process] : nullptr;
    const nlohmann::json& request = invoke ? invoke->value.value("request", nlohmann::json::object())
                                           : e.value.value("request", nlohmann::json::object());
    a.request = request.value("method", "") + " " + OriginForm(request.value("url", ""));
    if (e.type == EventType::kOk && e.value.contains("response")) {
      const nlohmann::json& r = e.value["response"];
      a.status = r.value("status", 0);
      a.headers = HeadersFromJson(r.value("headers", nlohmann::json::array()));
      const nlohmann::json& body = r.value("body", nlohmann::json());
      a.body = body.is_string() ? body.get<std::string>() : (body.is_null() ? "" : body.dump());
    } else {
      a.error = e.value.value("error", std::string(EventTypeName(e.type)));
    }
    out.push_back(std::move(a));
  }
  return out;
}

int RequestsIn(const History& history) {
  int n = 0;
  for (const HistoryEvent& e : history.events()) {
    if (e.type != EventType::kInvoke) continue;
    if (e.is_request() || e.f == "probe" || e.f == "hook") ++n;
  }
  return n;
}

Result<Discovery> Discover(const TargetDescription& target, const DiscoverOptions& options) {
  Discovery d;
  d.plan = PlanProbes(target);
  if (d.plan.probed.empty()) return d;
  auto scenario = ParseScenario(ProbeScenarioYaml(d.plan), "<discover>", BuiltinOracles().Vocabulary());
  if (!scenario.ok()) return scenario.status();
  auto dir = session::RunDirectory::Create(options.out_root, session::RunDirectory::NewRunId(options.seed));
  if (!dir.ok()) return dir.status();
  d.run_dir = dir->path();
  if (!target.file.empty()) dir->CopyIn(target.file, "target.yaml");
  dir->WriteFile("discover.yaml", ProbeScenarioYaml(d.plan));
  auto folder = dir->AddScenarioFolder("discover");
  if (!folder.ok()) return folder.status();
  runtime::InterpreterOptions io;
  io.seed = options.seed;
  io.vars = options.vars;
  io.flaw = options.flaw;
  io.cancel = options.cancel;
  runtime::Interpreter interpreter(target, io);
  runtime::ScenarioRun run = interpreter.Run(*scenario, dir->Absolute(*folder), 0);
  dir->WriteHistory(*folder + "/history.jsonl", run.history);
  d.run_error = run.error;
  d.interrupted = run.interrupted;
  d.answers = AnswersIn(run.history, d.plan);
  d.requests_sent = RequestsIn(run.history);
  return d;
}

}  // namespace idemproof::discover
