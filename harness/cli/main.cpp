// idemproof: the command line. Thin: parsing, loading, printing; the work is
// in the runtime (session, interpreter) and the model (loaders, oracles).
//
// Exit codes: 0 every verdict holds (deviations allowed unless --strict);
// 1 a violation (an invalid verdict of severity violation; a deviation too
// under --strict);
// 2 bad usage or configuration (nothing ran); 3 could not decide (target
// unreachable, no answer); 130 interrupted (SIGINT/SIGTERM).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cli/report_command.h"
#include "cli/summary_table.h"
#include "explore/explore_command.h"
#include "injectors/proxy_command.h"
#include "model/binding.h"
#include "model/console_text.h"
#include "model/naming.h"
#include "model/profile.h"
#include "model/results.h"
#include "model/scenario.h"
#include "model/shard.h"
#include "model/shard_merge.h"
#include "model/target.h"
#include "model/yaml_reader.h"
#include "oracles/oracle.h"
#include "reports/junit.h"
#include "runtime/injector_faults.h"
#include "runtime/interrupt.h"
#include "runtime/last_byte_burst.h"
#include "session/run_directory.h"
#include "session/scenario_files.h"
#include "session/session.h"
#include "sim/simulate_command.h"

namespace fs = std::filesystem;
using namespace idemproof;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitUndecided = 3;
constexpr int kExitInterrupted = 130;

// The build folder holding this executable: <build>/harness/cli/idemproof.
std::string default_build_dir() {
  if (const char* env = std::getenv("IDEMPROOF_BUILD_DIR"); env != nullptr && *env != '\0') {
    return fs::absolute(env).lexically_normal().string();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path().string();
  return exe.parent_path().parent_path().parent_path().string();
}

struct LoadedSuite {
  std::vector<Scenario> scenarios;
  int errors = 0;
};

// Loads every scenario file; prints each error as file:line:column: message.
LoadedSuite LoadScenarios(const std::vector<std::string>& paths, const TargetDescription* target) {
  LoadedSuite out;
  auto files = session::CollectScenarioFiles(paths);
  if (!files.ok()) {
    std::cerr << "idemproof: " << files.status().message() << "\n";
    ++out.errors;
    return out;
  }
  if (files->empty()) {
    std::cerr << "idemproof: no scenario files (*.yaml) under the given paths\n";
    ++out.errors;
    return out;
  }
  // A fault kind the injectors do not provide is a typo, never a skip.
  static const runtime::InjectorFaults injectors;
  ScenarioVocabulary vocabulary = BuiltinOracles().Vocabulary();
  vocabulary.fault_kinds = injectors.Kinds();
  for (const auto& file : *files) {
    auto scenario = LoadScenarioFile(file, vocabulary);
    if (!scenario.ok()) {
      std::cerr << ConsoleSafe(scenario.status().ToString()) << "\n";
      ++out.errors;
      continue;
    }
    // A fault block's options are the injector's: check them now, not mid-run.
    bool bad_fault = false;
    for (const auto& [name, fault] : scenario->faults) {
      Status valid = injectors.Validate(fault);
      if (!valid.ok()) {
        std::cerr << fault.mark.ToString() << ": " << valid.message() << "\n";
        ++out.errors;
        bad_fault = true;
      }
    }
    if (bad_fault) continue;
    if (target == nullptr) {
      out.scenarios.push_back(std::move(scenario).value());
      continue;
    }
    // The bind stage: one scenario per fitting action (or one unbound,
    // not_applicable with the reason), each checked against the target.
    for (Scenario& bound : BindScenario(*scenario, *target)) {
      ScenarioFit fit = CheckScenarioAgainstTarget(bound, *target);
      for (const auto& e : fit.errors) {
        std::cerr << ConsoleSafe(e.ToString()) << "\n";
        ++out.errors;
      }
      if (fit.errors.empty()) out.scenarios.push_back(std::move(bound));
    }
  }
  return out;
}

bool WriteOutputs(const RunResults& results, const std::string& junit_file,
                  const std::string& json_file, const session::RunDirectory* dir) {
  bool ok = true;
  auto write = [&](const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) {
      std::cerr << "idemproof: cannot write " << path << "\n";
      ok = false;
    }
  };
  const std::string junit = RenderJUnit(results);
  if (dir != nullptr) dir->WriteFile("junit.xml", junit);
  if (!junit_file.empty()) write(junit_file, junit);
  if (!json_file.empty()) {
    if (Status st = WriteRunResults(results, json_file); !st.ok()) {
      std::cerr << "idemproof: " << st.message() << "\n";
      ok = false;
    }
  }
  return ok;
}

// A progress line, rewritten in place; only when stdout is a terminal.
class ProgressLine {
 public:
  ProgressLine() : tty_(::isatty(1) == 1) {}
  void Show(const std::string& text) {
    if (!tty_) return;
    std::cout << "\r\033[K" << text << std::flush;
  }
  void Clear() {
    if (tty_) std::cout << "\r\033[K" << std::flush;
  }

 private:
  bool tty_;
};

struct RunArgs {
  std::vector<std::string> paths;
  std::string target_file;
  std::string out_dir = "idemproof-runs";
  std::string junit_file;
  std::string json_file;
  std::optional<std::uint64_t> seed;
  std::string run_namespace;
  std::string filter;
  std::vector<std::string> actions;  // --action: only bindings (and scenarios) sending these
  std::string flaw;
  std::string profile;  // --profile: replaces the target file's profile:
  std::string build_dir;
  bool strict = false;  // --strict: deviations fail the run (exit 1)
  std::string shard;    // --shard K/N: only this part of the bound scenarios (model/shard.h)
};

// True when `scenario` sends or is bound to one of `actions`.
bool NamesAction(const Scenario& scenario, const std::vector<std::string>& actions) {
  const std::vector<std::string> used = scenario.ActionsUsed();
  for (const auto& a : actions) {
    if (std::find(used.begin(), used.end(), a) != used.end()) return true;
    for (const auto& [param, name] : scenario.binding)
      if (name == a) return true;
  }
  return false;
}

int Run(const RunArgs& args) {
  std::optional<Shard> shard;
  if (!args.shard.empty()) {
    auto parsed = ParseShard(args.shard);
    if (!parsed.ok()) {
      std::cerr << "idemproof: " << parsed.status().message() << "\n";
      return kExitUsage;
    }
    shard = *parsed;
  }
  auto target = LoadTargetFile(args.target_file, args.profile);
  if (!target.ok()) {
    std::cerr << ConsoleSafe(target.status().ToString()) << "\n";
    return kExitUsage;
  }
  LoadedSuite suite = LoadScenarios(args.paths, &*target);
  if (suite.errors > 0) {
    std::cerr << "idemproof: " << suite.errors << " error(s) in the scenario files; nothing ran\n";
    return kExitUsage;
  }
  for (const auto& a : args.actions) {
    if (target->FindAction(a) == nullptr) {
      std::vector<std::string> declared;
      for (const auto& [n, action] : target->actions) declared.push_back(n);
      std::cerr << "idemproof: --action '" << a << "' is not an action of target '" << target->name << "'"
                << yaml::DidYouMean(a, declared) << "\n";
      return kExitUsage;
    }
  }
  std::vector<Scenario> selected;
  for (auto& s : suite.scenarios) {
    // A bound name's brackets read as a glob class: an exact name matches too.
    const bool named = args.filter.empty() || args.filter == s.name || session::GlobMatches(args.filter, s.name) ||
                       session::GlobMatches(args.filter, s.file) ||
                       (!s.bound_from.empty() && session::GlobMatches(args.filter, s.bound_from));
    if (named && (args.actions.empty() || NamesAction(s, args.actions))) selected.push_back(std::move(s));
  }
  if (selected.empty()) {
    std::cerr << "idemproof: no scenario matches"
              << (args.filter.empty() ? "" : " --filter '" + args.filter + "'")
              << (args.actions.empty() ? "" : " --action") << "\n";
    return kExitUsage;
  }
  if (!args.flaw.empty() && (!target->start || target->start->flaw_args.empty())) {
    std::cerr << "idemproof: --flaw needs a target that declares start.flaw_args ("
              << args.target_file << " does not)\n";
    return kExitUsage;
  }

  if (!args.run_namespace.empty()) {
    Status valid = ValidateNamespace(args.run_namespace);
    if (!valid.ok()) {
      std::cerr << "idemproof: --namespace: " << valid.message() << "\n";
      return kExitUsage;
    }
  }
  session::SessionOptions options;
  if (shard) {
    // Dealt from the whole bound list, so every shard of one matrix cuts the same list.
    std::vector<std::string> names;
    for (const auto& s : selected) names.push_back(s.name);
    options.shard = ShardOfRun{*shard, static_cast<int>(selected.size()), SuiteDigest(names)};
    std::vector<Scenario> dealt;
    for (std::size_t i = 0; i < selected.size(); ++i) {
      if (!shard->Holds(i)) continue;
      dealt.push_back(std::move(selected[i]));
      options.ordinals.push_back(static_cast<int>(i));
    }
    selected = std::move(dealt);
  }
  options.seed = args.seed.value_or(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32));
  // Fresh per run unless given: two runs against one long-lived target never share keys.
  options.run_namespace =
      args.run_namespace.empty() ? FreshNamespace(std::random_device{}()) : args.run_namespace;
  if (!args.flaw.empty()) options.flaw = args.flaw;
  options.strict = args.strict;
  options.cancel = &runtime::InterruptFlag();
  options.tool_version = PROJECT_VERSION;
  options.vars["build_dir"] = args.build_dir.empty() ? default_build_dir()
                                                     : fs::absolute(args.build_dir).string();
  options.vars["source_dir"] = IDEMPROOF_SOURCE_DIR;
  runtime::InjectorFaults faults;
  runtime::LastByteBurst last_byte_burst;
  options.faults = &faults;
  options.last_byte_burst = &last_byte_burst;

  auto dir = session::RunDirectory::Create(args.out_dir, session::RunDirectory::NewRunId(options.seed));
  if (!dir.ok()) {
    std::cerr << "idemproof: " << dir.status().message() << "\n";
    return kExitUsage;
  }
  std::cout << "idemproof " << PROJECT_VERSION << ": " << selected.size() << " scenario(s) against "
            << target->name << (args.flaw.empty() ? "" : " with flaw " + args.flaw) << "\n"
            << "seed " << options.seed << ", namespace " << options.run_namespace << " (replay with --seed "
            << options.seed << " --namespace " << options.run_namespace << ")\n"
            << "run directory " << dir->path() << "\n";
  if (options.shard) {
    std::cout << "shard " << shard->ToString() << ": " << selected.size() << " of " << options.shard->bound
              << " bound scenario(s), dealt round robin by their index in the bound list\n";
  }
  std::cout << std::flush;

  ProgressLine progress;
  options.on_start = [&](std::size_t i, std::size_t n, const Scenario& s) {
    progress.Show("[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + s.name + " ...");
  };
  options.on_done = [&](const ScenarioResult&) { progress.Clear(); };

  session::SessionOutcome outcome = session::RunSession(*target, selected, *dir, options);
  progress.Clear();
  std::cout << "\n";
  cli::PrintSummaryTable(outcome.results, std::cout);
  WriteOutputs(outcome.results, args.junit_file, args.json_file, &*dir);
  std::cout << "\nrun directory: " << dir->path() << " (results.json, junit.xml, histories)\n";
  cli::WriteRunReports(dir->path(), std::cout, std::cerr);
  if (outcome.interrupted) {
    std::cerr << "idemproof: interrupted; targets stopped; partial run directory " << dir->path() << "\n";
    return kExitInterrupted;
  }
  if (!outcome.stop_reason.empty()) {
    std::cerr << "idemproof: " << ConsoleSafe(outcome.stop_reason) << "\n";
    return kExitUndecided;
  }
  if (options.shard && selected.empty()) {
    std::cerr << "idemproof: shard " << shard->ToString() << " was dealt no scenario (" << options.shard->bound
              << " bound over " << shard->count << " shards): nothing was checked, exit 3\n";
  } else if (outcome.results.NothingTested()) {
    std::cerr << "idemproof: nothing was tested: no row judged " << target->name
              << " (see the not-applicable reasons above), exit 3\n";
  }
  return outcome.results.ExitCode();
}

struct MergeArgs {
  std::vector<std::string> run_dirs;
  std::string out_dir = "idemproof-runs";
  std::string junit_file;
  std::string json_file;
};

// `idemproof merge`: the shards' run folders into one run folder (results,
// JUnit, reports, and each scenario's folder copied, so `check` and `report`
// work on it as on a run's).
int Merge(const MergeArgs& args) {
  std::vector<ShardRun> shards;
  for (const auto& run_dir : args.run_dirs) {
    const fs::path results_file = fs::path(run_dir) / "results.json";
    if (!fs::exists(results_file)) {
      std::cerr << "idemproof merge: " << run_dir << ": no results.json"
                << (fs::exists(fs::path(run_dir) / "explore.json")
                        ? " (an explore run folder: explore shards are merged by reading their explore.json, "
                          "not by merge)"
                        : " (not a run folder of idemproof run --shard)")
                << "\n";
      return kExitUsage;
    }
    auto results = ReadRunResults(results_file.string());
    if (!results.ok()) {
      std::cerr << "idemproof merge: " << results.status().ToString() << "\n";
      return kExitUsage;
    }
    shards.push_back({run_dir, std::move(results).value()});
  }
  auto merge = MergeShardResults(shards);
  if (!merge.ok()) {
    std::cerr << "idemproof merge: " << merge.status().message() << "\n";
    return kExitUsage;
  }
  RunResults& merged = merge->results;
  auto dir = session::RunDirectory::Create(args.out_dir, session::RunDirectory::NewRunId(merged.seed) + "-merged");
  if (!dir.ok()) {
    std::cerr << "idemproof merge: " << dir.status().message() << "\n";
    return kExitUsage;
  }
  merged.run_id = dir->id();
  for (const auto& shard : shards) {
    const fs::path target_copy = fs::path(shard.dir) / "target.yaml";
    if (fs::exists(target_copy)) {
      dir->CopyIn(target_copy.string(), "target.yaml");
      break;
    }
  }
  for (std::size_t i = 0; i < merged.scenarios.size(); ++i) {
    ScenarioResult& row = merged.scenarios[i];
    if (row.history_file.empty()) continue;
    const fs::path history(row.history_file);
    auto folder = dir->AddScenarioFolder(history.begin()->string());
    std::error_code ec;
    if (folder.ok())
      fs::copy(fs::path(merge->row_dirs[i]) / *history.begin(), dir->Absolute(*folder),
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    if (!folder.ok() || ec) {
      std::cerr << "idemproof merge: cannot copy " << row.name << "'s folder from " << merge->row_dirs[i] << ": "
                << (ec ? ec.message() : folder.status().message()) << "\n";
      return kExitUsage;
    }
    row.history_file = (fs::path(*folder) / history.lexically_relative(*history.begin())).string();
  }
  if (Status written = dir->WriteResults(merged); !written.ok()) {
    std::cerr << "idemproof merge: " << written.message() << "\n";
    return kExitUsage;
  }
  std::cout << "idemproof merge: " << shards.size() << " shard folder(s) of " << merged.target_name << ", seed "
            << merged.seed << "\n\n";
  cli::PrintSummaryTable(merged, std::cout);
  WriteOutputs(merged, args.junit_file, args.json_file, &*dir);
  std::cout << "\nrun directory: " << dir->path() << " (results.json, junit.xml, histories)\n";
  cli::WriteRunReports(dir->path(), std::cout, std::cerr);
  if (merged.Incomplete()) std::cerr << "idemproof merge: " << merged.ShardNote() << "\n";
  return merged.ExitCode();
}

int Lint(const std::vector<std::string>& paths, const std::string& target_file) {
  std::optional<TargetDescription> target;
  if (!target_file.empty()) {
    auto t = LoadTargetFile(target_file);
    if (!t.ok()) {
      std::cerr << ConsoleSafe(t.status().ToString()) << "\n";
      return kExitUsage;
    }
    target = std::move(t).value();
  }
  LoadedSuite suite = LoadScenarios(paths, target ? &*target : nullptr);
  if (suite.errors > 0) {
    std::cerr << "idemproof: " << suite.errors << " error(s)\n";
    return kExitUsage;
  }
  std::cout << suite.scenarios.size() << " scenario(s) ok"
            << (target ? " against target " + target->name : "") << "\n";
  if (!target) return kExitOk;
  // What a run would say before any request: the rows the target cannot
  // run, grouped by what it lacks; a target that would test nothing is exit 3.
  RunResults foreseen;
  for (const auto& s : suite.scenarios) {
    const std::vector<std::string> needs = CheckScenarioAgainstTarget(s, *target).needs;
    ScenarioResult row = needs.empty() ? ScenarioResult{} : session::NotApplicableResult(s, needs);
    if (needs.empty()) row.verdicts.push_back(Verdict::Valid("bound", "runnable"));
    foreseen.scenarios.push_back(std::move(row));
  }
  if (const std::string note = foreseen.NotApplicableNote(); !note.empty()) std::cout << ConsoleSafe(note) << "\n";
  if (foreseen.NothingTested()) {
    std::cerr << "idemproof: target " << target->name << " would test nothing: every row is not applicable\n";
    return kExitUndecided;
  }
  return kExitOk;
}

int Check(const std::string& run_dir, const std::string& junit_file, const std::string& json_file, bool strict) {
  auto results = session::RecheckRunDirectory(run_dir);
  if (!results.ok()) {
    std::cerr << results.status().ToString() << "\n";
    return kExitUsage;
  }
  results->strict = strict;
  cli::PrintSummaryTable(*results, std::cout);
  WriteOutputs(*results, junit_file, json_file, nullptr);
  if (!results->complete)
    std::cerr << "idemproof: " << run_dir << " is from a run that never finished (results.json says "
              << "\"finished\": false): what it holds is partial\n";
  return results->ExitCode();
}

// `idemproof explore` (harness/explore/): generated plans, shrunk to a repro.
int Explore(const explore::ExploreArgs& args) {
  return explore::RunExploreCommand(
      args, default_build_dir(), IDEMPROOF_SOURCE_DIR,
      [] { return std::unique_ptr<runtime::BurstSender>(std::make_unique<runtime::LastByteBurst>()); },
      [] { return std::unique_ptr<runtime::FaultRunner>(std::make_unique<runtime::InjectorFaults>()); }, std::cout,
      std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"idemproof: prove, or disprove, that an HTTP service is idempotent"};
  app.set_version_flag("--version", std::string("idemproof ") + PROJECT_VERSION);
  app.require_subcommand(1);

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run scenarios against a target");
  run_cmd->add_option("paths", run.paths, "scenario files or folders (folders named targets/ are skipped)")
      ->required();
  run_cmd->add_option("--target", run.target_file, "target description (YAML)")->required();
  run_cmd->add_option("--out", run.out_dir, "where run directories go")->capture_default_str();
  run_cmd->add_option("--junit", run.junit_file, "also write the JUnit XML here");
  run_cmd->add_option("--json", run.json_file, "also write results.json here");
  run_cmd->add_option("--seed", run.seed, "replay a run: the seed it printed");
  run_cmd->add_option("--namespace", run.run_namespace,
                      "replay a run's keys, biz ids and uuids exactly: the namespace it printed (default: a fresh one)");
  run_cmd->add_option("--filter", run.filter, "only scenarios whose name or path matches this glob");
  run_cmd->add_option("--action", run.actions,
                      "only the bindings (and scenarios) that send this action; repeatable");
  run_cmd->add_option("--flaw", run.flaw, "start the target with this flaw (its start.flaw_args)");
  run_cmd->add_flag("--strict", run.strict, "a deviation (a SHOULD missed) fails like a violation (exit 1)");
  run_cmd->add_option("--profile", run.profile,
                      "judge by these semantics (" + ProfileNames() + "; default: the target's profile:, else ietf)");
  run_cmd->add_option("--shard", run.shard,
                      "K/N: run only shard K of N of the bound scenarios (round robin by index; see merge)");
  run_cmd->add_option("--build-dir", run.build_dir,
                      "{{build_dir}} in target files (default: $IDEMPROOF_BUILD_DIR, else the build "
                      "folder holding this executable)");

  std::vector<std::string> lint_paths;
  std::string lint_target;
  auto* lint_cmd = app.add_subcommand("lint", "validate scenario files (and their fit to a target)");
  lint_cmd->add_option("paths", lint_paths, "scenario files or folders")->required();
  lint_cmd->add_option("--target", lint_target, "also check the scenarios against this target file");

  std::string check_dir, check_junit, check_json;
  bool check_strict = false;
  auto* check_cmd = app.add_subcommand("check", "re-run the oracles over a run directory, offline");
  check_cmd->add_option("run_dir", check_dir, "a run directory (e.g. idemproof-runs/latest)")->required();
  check_cmd->add_option("--junit", check_junit, "write the JUnit XML here");
  check_cmd->add_option("--json", check_json, "write the results JSON here");
  check_cmd->add_flag("--strict", check_strict, "a deviation (a SHOULD missed) fails like a violation (exit 1)");

  MergeArgs merge;
  auto* merge_cmd = app.add_subcommand("merge", "merge the run folders of `run --shard K/N` into one run folder");
  merge_cmd->add_option("run_dirs", merge.run_dirs, "the shards' run folders")->required();
  merge_cmd->add_option("--out", merge.out_dir, "where the merged run folder goes")->capture_default_str();
  merge_cmd->add_option("--junit", merge.junit_file, "also write the JUnit XML here");
  merge_cmd->add_option("--json", merge.json_file, "also write results.json here");

  explore::ExploreArgs explore_args;
  auto* explore_cmd = app.add_subcommand(
      "explore", "generate interleavings from a scenario's explore: block; shrink a failure to a YAML repro");
  explore::AddExploreOptions(*explore_cmd, explore_args);

  cli::ReportArgs report;
  auto* report_cmd = app.add_subcommand("report", "render a report of a run directory, offline");
  cli::AddReportOptions(*report_cmd, report);

  sim::SimulateCommand simulate(app);  // harness/sim/

  injectors::ProxyCommandOptions proxy;
  auto* proxy_cmd = app.add_subcommand(
      "proxy", "run the chaos proxy alone in front of a running target (until Ctrl-C)");
  injectors::add_proxy_options(*proxy_cmd, proxy);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  // `proxy` waits for SIGINT/SIGTERM itself (sigwait); everything else gets
  // the interrupt watcher. No thread exists before this point.
  if (*proxy_cmd) return injectors::run_proxy_command(proxy, std::cout, std::cerr);
  runtime::InstallInterruptHandling(std::chrono::seconds(20));
  if (*report_cmd) return cli::RunReportCommand(report, std::cout, std::cerr);
  if (*run_cmd) return Run(run);
  if (*lint_cmd) return Lint(lint_paths, lint_target);
  if (*check_cmd) return Check(check_dir, check_junit, check_json, check_strict);
  if (*merge_cmd) return Merge(merge);
  if (*explore_cmd) return Explore(explore_args);
  if (simulate.chosen()) return simulate.Run(std::cout, std::cerr);
  return kExitUsage;
}
