#include "session/session.h"

#include <csignal>
#include <filesystem>

#include "base/tls_options.h"
#include "model/binding.h"
#include "model/metrics.h"
#include "session/run_contents.h"
#include "oracles/oracle.h"
#include "runtime/fault_evidence.h"

namespace idemproof::session {

namespace fs = std::filesystem;
using runtime::FaultsFired;
using runtime::Interpreter;
using runtime::InterpreterOptionsOf;
using runtime::ScenarioRun;

namespace {

ScenarioResult NewResult(const Scenario& scenario) {
  ScenarioResult r;
  r.name = scenario.name;
  r.file = scenario.file;
  r.layer = LayerName(scenario.layer);
  r.hunts = scenario.hunts;
  r.bound_from = scenario.bound_from;
  r.binding = scenario.binding;
  return r;
}

// A bound scenario's folder: "double-submit.create_order" (its name's
// brackets are no file name characters).
std::string FolderName(const Scenario& scenario) {
  if (scenario.bound_from.empty()) return scenario.name;
  std::string folder = scenario.bound_from;
  for (const auto& p : scenario.parameters) folder += "." + scenario.binding.at(p.name);
  return folder;
}

void AddFaultWarnings(const Scenario& scenario, ScenarioResult& result) {
  for (const auto& [name, fault] : scenario.faults) {
    // One that may find nothing to act on is said by faults_fired instead.
    if (result.fault_counts[name] == 0 && fault.required) {
      result.warnings.push_back("fault " + name + " declared but injected 0 times");
    }
  }
}

// The services and egress the target file says to reach over https://
// without checking their certificate (an egress's upstream may be a
// service's {{services.NAME.url}}: https when that url is).
std::vector<std::string> UnverifiedPeers(const TargetDescription& target) {
  auto https = [](const std::string& url) { return url.rfind("https://", 0) == 0; };
  std::vector<std::string> out;
  for (const auto& [name, svc] : target.services)
    if (svc.tls.insecure && https(svc.url)) out.push_back("service " + name);
  for (const auto& [name, egress] : target.egress) {
    if (!egress.tls.insecure || egress.tcp) continue;
    bool over_tls = https(egress.upstream);
    for (const auto& [service, svc] : target.services)
      if (egress.upstream.rfind("{{services." + service + ".url}}", 0) == 0) over_tls = https(svc.url);
    if (over_tls) out.push_back("egress " + name);
  }
  return out;
}

}  // namespace

ScenarioResult NotApplicableResult(const Scenario& scenario, const std::vector<std::string>& needs) {
  ScenarioResult result = NewResult(scenario);
  std::string why = "needs ";
  for (std::size_t i = 0; i < needs.size(); ++i) why += (i ? ", " : "") + needs[i];
  for (const auto& spec : scenario.expect)
    result.verdicts.push_back(Verdict::NotApplicable(spec.name, why, VerdictDetails::OfNeeds(needs)));
  return result;
}

SessionOutcome RunSession(const TargetDescription& target, const std::vector<Scenario>& scenarios,
                          RunDirectory& dir, const SessionOptions& options) {
  SessionOutcome out;
  RunResults& results = out.results;
  results.run_id = dir.id();
  results.seed = options.seed;
  results.target_name = target.name;
  results.target_file = target.file;
  results.tls_unverified = target.tls.insecure && target.base_url.rfind("https://", 0) == 0;
  results.tls_unverified_peers = UnverifiedPeers(target);
  results.flaw = options.flaw.value_or("");
  results.profile = target.idempotency.profile;
  results.strict = options.strict;
  results.started = NowRfc3339();
  results.tool_version = options.tool_version;
  results.shard = options.shard;
  if (!target.file.empty()) dir.CopyIn(target.file, "target.yaml");

  Interpreter interpreter(target, InterpreterOptionsOf(options));
  results.run_namespace = interpreter.run_namespace();
  // Incomplete until the last write: a harness killed mid-run leaves
  // "finished": false and exit code 3, never a clean 0.
  results.complete = false;
  dir.WriteResults(results);
  const OracleRegistry& oracles = BuiltinOracles();

  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& scenario = scenarios[i];
    if (options.cancel != nullptr && options.cancel->load()) {
      out.interrupted = true;
      break;
    }
    if (options.on_start) options.on_start(i, scenarios.size(), scenario);
    ScenarioResult result = NewResult(scenario);
    auto folder = dir.AddScenarioFolder(FolderName(scenario));
    if (!folder.ok()) {
      result.error = folder.status().ToString();
      results.scenarios.push_back(result);
      out.stop_reason = result.error;
      break;
    }
    // The copy keeps the file name: a scenario's default name is its stem.
    if (!scenario.file.empty()) {
      dir.CopyIn(scenario.file, *folder + "/" + fs::path(scenario.file).filename().string());
    }

    std::vector<std::string> needs = CheckScenarioAgainstTarget(scenario, target).needs;
    for (auto& n : interpreter.NeedsOf(scenario)) needs.push_back(n);
    if (!needs.empty()) {
      result = NotApplicableResult(scenario, needs);
      results.scenarios.push_back(result);
      if (options.on_done) options.on_done(result);
      dir.WriteResults(results);
      continue;
    }

    const int ordinal = i < options.ordinals.size() ? options.ordinals[i] : static_cast<int>(i);
    ScenarioRun run = interpreter.Run(scenario, dir.Absolute(*folder), ordinal);
    result.history_file = *folder + "/history.jsonl";
    Status written = dir.WriteHistory(result.history_file, run.history);
    result.events = static_cast<std::int64_t>(run.history.size());
    result.elapsed_ms = run.elapsed_ms;
    result.fault_counts = run.fault_counts;
    if (!written.ok()) {
      result.error = written.ToString();
    } else if (run.interrupted) {
      out.interrupted = true;
      result.error = "interrupted";
    } else if (!run.error.ok()) {
      result.error = run.error.ToString();
      if (run.error.code() == StatusCode::kUnavailable && run.target_pids.empty()) {
        out.stop_reason = "the target could not be reached or started: " + run.error.message();
      } else if (IsTlsRefusal(run.error)) {
        // Every other scenario would meet the same handshake: a configuration error.
        out.stop_reason = run.error.message();
        out.bad_config = true;
      }
    } else {
      result.verdicts = oracles.CheckAll(scenario, target, run.history);
      if (auto fired = FaultsFired(scenario, run.history)) result.verdicts.push_back(*fired);
      result.metrics = ComputeMetrics(target, run.history);
      AddFaultWarnings(scenario, result);
    }
    results.scenarios.push_back(result);
    dir.WriteResults(results);
    if (options.on_done) options.on_done(result);
    if (out.interrupted || !out.stop_reason.empty()) break;
  }
  results.finished = NowRfc3339();
  results.complete = true;
  dir.WriteResults(results);
  return out;
}

Result<RunResults> RecheckRunDirectory(const std::string& path) {
  auto contents = ReadRunDirectory(path);
  if (!contents.ok()) return contents.status();
  // Judging against anything but the copy the run used would be a different check.
  if (!contents->target_copied) {
    return Status::NotFound(path + "/target.yaml: the run directory keeps no copy of the target file");
  }
  if (!contents->target) return contents->target_error;
  const TargetDescription& target = *contents->target;
  const OracleRegistry& oracles = BuiltinOracles();
  const ScenarioVocabulary vocabulary = oracles.Vocabulary();
  RunResults out = contents->results;
  for (std::size_t i = 0; i < out.scenarios.size(); ++i) {
    ScenarioResult& result = out.scenarios[i];
    if (result.history_file.empty() || !result.error.empty()) continue;  // nothing was judged
    auto scenario = LoadScenarioFile(contents->ScenarioCopyOf(i), vocabulary);
    if (!scenario.ok()) return scenario.status();
    if (!result.binding.empty()) {  // a bound row: bind the scenario copy again
      scenario = ApplyBinding(*scenario, result.binding);
      if (!scenario.ok()) return scenario.status();
    }
    if (auto error = contents->history_errors.find(i); error != contents->history_errors.end()) {
      return error->second;
    }
    const History& history = *contents->HistoryOf(i);
    result.verdicts = oracles.CheckAll(*scenario, target, history);
    if (auto fired = FaultsFired(*scenario, history)) result.verdicts.push_back(*fired);
    result.metrics = ComputeMetrics(target, history);
    result.events = static_cast<std::int64_t>(history.size());
  }
  return out;
}

}  // namespace idemproof::session
