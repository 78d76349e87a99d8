#include "explore/explore_spec.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "model/binding.h"
#include "model/capabilities.h"
#include "model/scenario_node.h"
#include "model/yaml_reader.h"

namespace idemproof::explore {

namespace {

// The scenario part of the file: the parsed document without its `explore:`
// block (the nodes keep the file's marks) and, when the file has no
// `steps:`, a placeholder step (the scenario loader requires one).
YAML::Node ScenarioPart(const yaml::Reader& r, const std::string& text, bool* has_steps) {
  YAML::Node root = r.Load(text);
  const YAML::Node& view = root;  // const lookups add no null entries
  *has_steps = root.IsMap() && view["steps"];
  if (!root.IsMap()) return root;  // the loader names what is wrong
  root.remove("explore");
  if (!*has_steps) root["steps"] = YAML::Load("[{wait: 0s}]");
  return root;
}

ExploreBlock ReadBlock(const yaml::Reader& r, const YAML::Node& node, const Scenario& scenario) {
  ExploreBlock b;
  b.mark = r.MarkOf(node);
  r.ExpectMap(node, "explore");
  r.CheckKeys(node,
              {"actions", "keys", "biz", "pairing", "ops", "hooks", "causes", "faults", "burst", "wait",
               "insert_at", "reruns", "confirm", "trials", "max_ops", "messages", "batch", "callers"},
              "explore");
  if (node["actions"]) {
    b.actions = r.StringList(node["actions"], "explore.actions");
    for (const auto& item : node["actions"]) {
      const std::string& a = item.Scalar();
      b.marks["action " + a] = r.MarkOf(item);
      if (a.empty() || a[0] != kParameterSigil) continue;
      bool declared = false;
      for (const auto& p : scenario.parameters) declared = declared || (p.name == a.substr(1) && !p.is_probe());
      if (!declared)
        r.Fail(item, "explore.actions: '" + a + "' names no action parameter declared under 'for_each'");
    }
  }
  if (node["keys"]) b.keys = r.StringList(node["keys"], "explore.keys");
  if (node["biz"]) b.biz = r.StringList(node["biz"], "explore.biz");
  if (b.keys.empty()) r.Fail(node["keys"], "explore.keys must not be empty");
  if (b.biz.empty()) r.Fail(node["biz"], "explore.biz must not be empty");
  for (const auto& k : b.keys) {
    if (k == kFreshKey) r.Fail(node["keys"], "explore.keys: 'fresh' regenerates the key on every request (a wrong client), not an explorable key");
  }
  if (node["pairing"]) {
    std::string p = r.String(node["pairing"], "explore.pairing");
    if (p == "bound") b.bound_pairing = true;
    else if (p == "free") b.bound_pairing = false;
    else r.Fail(node["pairing"], "explore.pairing must be 'bound' or 'free', found '" + p + "'");
  }
  if (b.bound_pairing && b.keys.size() != b.biz.size()) {
    r.Fail(node, "explore: pairing 'bound' needs as many keys as biz ids (" + std::to_string(b.keys.size()) +
                     " keys, " + std::to_string(b.biz.size()) + " biz)");
  }
  if (node["ops"]) {
    const YAML::Node ops = node["ops"];
    r.ExpectMap(ops, "explore.ops");
    r.CheckKeys(ops, OpKindNames(), "explore.ops");
    for (auto it = ops.begin(); it != ops.end(); ++it) {
      long long w = r.Int(it->second, "explore.ops." + it->first.Scalar());
      if (w < 0 || w > 1000) r.Fail(it->second, "an op weight is between 0 and 1000");
      b.weights[it->first.Scalar()] = static_cast<int>(w);
    }
  }
  if (node["hooks"]) {
    b.hooks = r.StringList(node["hooks"], "explore.hooks");
    for (const auto& item : node["hooks"]) b.marks["hook " + item.Scalar()] = r.MarkOf(item);
  }
  if (node["causes"]) {
    b.causes = r.StringList(node["causes"], "explore.causes");
    for (const auto& item : node["causes"]) {
      b.marks["cause " + item.Scalar()] = r.MarkOf(item);
      const CapabilityInfo* c = FindCapability(item.Scalar());
      if (c == nullptr || c->always || c->message)  // a message capability acts on a publish, not an action
        r.Fail(item, "explore.causes: '" + item.Scalar() + "' is not a capability a cause op can cause" +
                         yaml::DidYouMean(item.Scalar(), CapabilityNames()) + " (slow_request, retryable_failure)");
    }
  }
  if (node["faults"]) {
    b.faults = r.StringList(node["faults"], "explore.faults");
    for (const auto& f : b.faults) {
      if (!scenario.faults.count(f)) r.Fail(node["faults"], "explore.faults: '" + f + "' is not declared under 'faults'");
    }
  }
  if (node["callers"]) {
    b.callers = r.StringList(node["callers"], "explore.callers");
    b.marks["callers"] = r.MarkOf(node["callers"]);
    if (b.callers.empty()) r.Fail(node["callers"], "explore.callers must not be empty (omit it for sends without a caller)");
    for (const auto& item : node["callers"]) {
      const std::string& c = item.Scalar();
      if (c != "first" && c != "second")
        r.Fail(item, "explore.callers: '" + c + "' must be first or second (the target's declared callers)" +
                         yaml::DidYouMean(c, {"first", "second"}));
      if (std::count(b.callers.begin(), b.callers.end(), c) > 1)
        r.Fail(item, "explore.callers: '" + c + "' is listed twice");
    }
  }
  if (node["messages"]) {
    b.messages = r.StringList(node["messages"], "explore.messages");
    for (const auto& item : node["messages"]) b.marks["message " + item.Scalar()] = r.MarkOf(item);
    if (b.messages.empty()) r.Fail(node["messages"], "explore.messages must not be empty (omit it for no queue op)");
  }
  if (node["batch"]) {
    const YAML::Node batch = node["batch"];
    r.ExpectMap(batch, "explore.batch");
    r.CheckKeys(batch, {"jobs", "from", "to", "fail_after"}, "explore.batch");
    if (!batch["jobs"]) r.Fail(batch, "explore.batch needs 'jobs' (symbolic job names, e.g. [j1])");
    b.jobs = r.StringList(batch["jobs"], "explore.batch.jobs");
    if (b.jobs.empty()) r.Fail(batch["jobs"], "explore.batch.jobs must not be empty");
    auto row = [&](const char* key) {
      long long v = r.Int(batch[key], std::string("explore.batch.") + key);
      if (v < 0 || v > 100'000'000) r.Fail(batch[key], std::string("explore.batch.") + key + " must be between 0 and 100000000");
      return static_cast<std::int64_t>(v);
    };
    if (batch["from"]) b.batch_from = row("from");
    if (batch["to"]) b.batch_to = row("to");
    if (b.batch_to <= b.batch_from) r.Fail(batch, "explore.batch: 'to' must be greater than 'from'");
    if (batch["fail_after"]) b.batch_fail_after = row("fail_after");
  }
  if (node["burst"]) {
    const YAML::Node burst = node["burst"];
    r.ExpectMap(burst, "explore.burst");
    r.CheckKeys(burst, {"n", "mode"}, "explore.burst");
    if (burst["n"]) {
      long long n = r.Int(burst["n"], "explore.burst.n");
      if (n < 2 || n > 1000) r.Fail(burst["n"], "explore.burst.n must be between 2 and 1000");
      b.burst_n = static_cast<int>(n);
    }
    if (burst["mode"]) {
      std::string m = r.String(burst["mode"], "explore.burst.mode");
      if (m == "threads") b.burst_mode = BurstMode::kThreads;
      else if (m == "last_byte") b.burst_mode = BurstMode::kLastByte;
      else r.Fail(burst["mode"], "explore.burst.mode must be 'threads' or 'last_byte'");
    }
  }
  if (node["wait"]) b.wait = r.DurationOf(node["wait"], "explore.wait");
  auto positive = [&](const char* key, int lo, int hi, int& out) {
    if (!node[key]) return;
    long long v = r.Int(node[key], std::string("explore.") + key);
    if (v < lo || v > hi) {
      r.Fail(node[key], std::string("explore.") + key + " must be between " + std::to_string(lo) + " and " +
                            std::to_string(hi));
    }
    out = static_cast<int>(v);
  };
  positive("reruns", 1, 100, b.reruns);
  positive("confirm", 1, 1000, b.confirm);
  positive("trials", 1, 1000000, b.trials);
  positive("max_ops", 1, 100, b.max_ops);
  if (node["insert_at"]) {
    long long at = r.Int(node["insert_at"], "explore.insert_at");
    if (at < 0 || static_cast<std::size_t>(at) > scenario.steps.size()) {
      r.Fail(node["insert_at"], "explore.insert_at must be between 0 and the number of steps (" +
                                    std::to_string(scenario.steps.size()) + ")");
    }
    b.insert_at = static_cast<std::size_t>(at);
  }
  return b;
}

}  // namespace

Result<ExploreSpec> ParseExploreSpec(const std::string& yaml_text, const std::string& file,
                                     const ScenarioVocabulary& vocabulary) {
  bool has_steps = false;
  yaml::Reader r(file);
  YAML::Node scenario_root;
  try {
    scenario_root = ScenarioPart(r, yaml_text, &has_steps);
  } catch (const yaml::ConfigError& e) {
    return e.status;
  }
  auto scenario = ParseScenarioNode(scenario_root, file, vocabulary, /*parameters_used_elsewhere=*/true);
  if (!scenario.ok()) return scenario.status();
  ExploreSpec spec;
  spec.scenario = std::move(scenario).value();
  if (!has_steps) spec.scenario.steps.clear();
  try {
    YAML::Node root = r.Load(yaml_text);
    if (!root["explore"]) r.Fail(root, "an explore file needs an 'explore:' block");
    spec.explore = ReadBlock(r, root["explore"], spec.scenario);
    for (const auto& p : spec.scenario.parameters) {
      const auto& actions = spec.explore.actions;
      const auto& messages = spec.explore.messages;
      if (!spec.scenario.ReferencesParameter(p.name) &&
          std::find(actions.begin(), actions.end(), kParameterSigil + p.name) == actions.end() &&
          std::find(messages.begin(), messages.end(), kParameterSigil + p.name) == messages.end())
        r.FailAt(p.mark, "parameter '" + p.name + "' is never used as $" + p.name);
    }
  } catch (const yaml::ConfigError& e) {
    return e.status;
  }
  return spec;
}

std::vector<ExploreSpec> BindExploreSpec(const ExploreSpec& spec, const TargetDescription& target) {
  std::vector<ExploreSpec> out;
  for (Scenario& bound : BindScenario(spec.scenario, target)) {
    ExploreSpec s = spec;
    // explore.actions and explore.messages may name for_each parameters.
    for (auto* names : {&s.explore.actions, &s.explore.messages}) {
      for (auto& name : *names) {
        if (name.empty() || name[0] != kParameterSigil) continue;
        auto it = bound.binding.find(name.substr(1));
        if (it != bound.binding.end()) name = it->second;
      }
    }
    s.scenario = std::move(bound);
    out.push_back(std::move(s));
  }
  return out;
}

Result<ExploreSpec> LoadExploreSpec(const std::string& path, const ScenarioVocabulary& vocabulary) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseExploreSpec(text.str(), path, vocabulary);
}

}  // namespace idemproof::explore
