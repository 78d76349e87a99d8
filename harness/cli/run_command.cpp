// `idemproof run [PATH...] --target FILE`: the scenarios against a target, one
// session (session/session.h), printed as a summary table, recorded in a run
// directory with its reports.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/command_support.h"
#include "cli/report_command.h"
#include "cli/summary_table.h"
#include "hunt/hunt.h"
#include "reports/design_review/ci_summary.h"
#include "model/console_text.h"
#include "model/results_json.h"
#include "model/naming.h"
#include "model/profile.h"
#include "model/target_commands.h"
#include "model/shard.h"
#include "model/yaml_reader.h"
#include "platform/interrupt.h"
#include "runtime/injector_faults.h"
#include "runtime/last_byte_burst.h"
#include "session/scenario_files.h"
#include "session/session.h"

namespace idemproof::cli {

namespace {

namespace fs = std::filesystem;

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

// --summary FILE (written) and $GITHUB_STEP_SUMMARY (appended to: the job's
// other steps write there too). False, having said why, when one fails.
bool WriteCiSummaries(const RunResults& results, const std::string& file) {
  const std::string summary = RenderCiSummary(results);
  bool ok = true;
  auto write = [&](const std::string& path, std::ios::openmode mode, const char* what) {
    std::ofstream out(path, std::ios::binary | mode);
    out << summary;
    out.flush();
    if (out) return;
    std::cerr << "idemproof: cannot write the " << what << " to '" << ConsoleSafe(path) << "'\n";
    ok = false;
  };
  if (!file.empty()) write(file, std::ios::trunc, "job summary (--summary)");
  if (const char* github = std::getenv("GITHUB_STEP_SUMMARY"); github != nullptr && *github != '\0')
    write(github, std::ios::app, "job summary ($GITHUB_STEP_SUMMARY)");
  return ok;
}

struct RunArgs {
  std::vector<std::string> paths;
  std::string target_file;
  std::string out_dir = "idemproof-runs";
  std::string junit_file;
  std::string json_file;
  std::string summary_file;  // --summary: the CI job summary (Markdown)
  std::optional<std::uint64_t> seed;
  std::string run_namespace;
  std::string filter;
  std::vector<std::string> actions;  // --action: only bindings (and scenarios) sending these
  std::string flaw;
  std::string profile;  // --profile: replaces the target file's profile:
  std::string build_dir;
  bool strict = false;  // --strict: deviations fail the run (exit 1)
  std::string shard;    // --shard K/N: only this part of the bound scenarios (model/shard.h)
  bool dry_run = false;  // --dry-run: say what would run (commands, rows) and start nothing
  std::string hunt = hunt::DefaultHuntBudget();  // --hunt: the hunt phase's budget after the suite; "0" = none
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
      std::cerr << "idemproof: " << ConsoleSafe(parsed.status().message()) << "\n";
      return kExitUsage;
    }
    shard = *parsed;
  }
  auto hunt_budget = hunt::ParseHuntBudget(args.hunt);
  if (!hunt_budget.ok()) {
    std::cerr << "idemproof: " << ConsoleSafe(hunt_budget.status().message())
              << (args.hunt == hunt::DefaultHuntBudget() && std::getenv("IDEMPROOF_HUNT") ? " ($IDEMPROOF_HUNT)" : "")
              << "\n";
    return kExitUsage;
  }
  auto target = LoadTargetFile(args.target_file, args.profile);
  if (!target.ok()) {
    std::cerr << ConsoleSafe(target.status().ToString()) << "\n";
    return kExitUsage;
  }
  // No path: the suite shipped with this executable (installed, or the checkout's).
  LoadedSuite suite = LoadScenarios(PathsOrSuite(args.paths), &*target);
  if (suite.errors > 0) {
    std::cerr << "idemproof: " << suite.errors << " error(s) in the scenario files; nothing ran\n";
    return kExitUsage;
  }
  for (const auto& a : args.actions) {
    if (target->FindAction(a) == nullptr) {
      std::vector<std::string> declared;
      for (const auto& [n, action] : target->actions) declared.push_back(n);
      std::cerr << ConsoleSafe("idemproof: --action '" + a + "' is not an action of target '" + target->name + "'" +
                               yaml::DidYouMean(a, declared))
                << "\n";
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
              << (args.filter.empty() ? "" : " --filter '" + ConsoleSafe(args.filter) + "'")
              << (args.actions.empty() ? "" : " --action") << "\n";
    return kExitUsage;
  }
  if (!args.flaw.empty() && (!target->start || target->start->flaw_args.empty())) {
    std::cerr << "idemproof: --flaw needs a target that declares start.flaw_args ("
              << ConsoleSafe(args.target_file) << " does not)\n";
    return kExitUsage;
  }

  if (!args.run_namespace.empty()) {
    Status valid = ValidateNamespace(args.run_namespace);
    if (!valid.ok()) {
      std::cerr << "idemproof: --namespace: " << ConsoleSafe(valid.message()) << "\n";
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
  // Nothing from the target file runs unseen: its commands are listed
  // before the first one starts (issue 43), and --dry-run stops here.
  const std::optional<std::string> flaw = args.flaw.empty() ? std::nullopt : std::optional<std::string>(args.flaw);
  if (args.dry_run) {
    std::cout << "idemproof run --dry-run: " << selected.size() << " scenario(s) against " << ConsoleSafe(target->name)
              << (flaw ? " with flaw " + ConsoleSafe(*flaw) : "") << "; nothing is started, no request sent\n";
    if (options.shard)
      std::cout << "shard " << shard->ToString() << ": " << selected.size() << " of " << options.shard->bound
                << " bound scenario(s)\n";
    const std::string commands = DeclaredCommandsNotice(*target, flaw);
    std::cout << (commands.empty() ? "idemproof: " + ConsoleSafe(target->file) +
                                         " declares no command (the target runs already at its base_url)\n"
                                   : commands);
    PrintRowPlan(PlanRows(selected, *target), std::cout);
    std::cout << (*hunt_budget ? "then a hunt of " + FormatDuration(**hunt_budget) + " (--hunt 0: none)\n"
                               : std::string("no hunt (--hunt 0)\n"));
    return kExitOk;
  }
  std::cerr << DeclaredCommandsNotice(*target, flaw) << std::flush;
  options.seed = args.seed.value_or(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32));
  // Fresh per run unless given: two runs against one long-lived target never share keys.
  options.run_namespace =
      args.run_namespace.empty() ? FreshNamespace(std::random_device{}()) : args.run_namespace;
  if (!args.flaw.empty()) options.flaw = args.flaw;
  options.strict = args.strict;
  options.cancel = &runtime::InterruptFlag();
  options.tool_version = PROJECT_VERSION;
  options.vars["build_dir"] = args.build_dir.empty() ? DefaultBuildDir()
                                                     : fs::absolute(args.build_dir).string();
  options.vars["source_dir"] = DataDir();
  runtime::InjectorFaults faults;
  runtime::LastByteBurst last_byte_burst;
  options.faults = &faults;
  options.last_byte_burst = &last_byte_burst;

  auto dir = session::RunDirectory::Create(args.out_dir, session::RunDirectory::NewRunId(options.seed));
  if (!dir.ok()) {
    std::cerr << "idemproof: " << ConsoleSafe(dir.status().message()) << "\n";
    return kExitUsage;
  }
  std::cout << "idemproof " << PROJECT_VERSION << ": " << selected.size() << " scenario(s) against "
            << ConsoleSafe(target->name) << (args.flaw.empty() ? "" : " with flaw " + ConsoleSafe(args.flaw)) << "\n"
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
    progress.Show("[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + ConsoleSafe(s.name) + " ...");
  };
  options.on_done = [&](const ScenarioResult&) { progress.Clear(); };

  session::SessionOutcome outcome = session::RunSession(*target, selected, *dir, options);
  progress.Clear();
  std::cout << "\n";
  cli::PrintSummaryTable(outcome.results, std::cout);
  // The hunt phase (harness/hunt/hunt.h): after a suite that ran to its end;
  // a sharded matrix hunts once, in shard 1.
  std::optional<hunt::HuntReport> hunted;
  if (*hunt_budget && !outcome.interrupted && outcome.stop_reason.empty() && (!shard || shard->index == 1)) {
    hunt::HuntOptions h;
    h.budget = **hunt_budget;
    h.seed = options.seed;
    h.run_namespace = options.run_namespace;
    h.flaw = options.flaw;
    h.strict = options.strict;
    h.vars = options.vars;
    h.cancel = options.cancel;
    h.faults = &faults;
    h.last_byte_burst = &last_byte_burst;
    h.run_dir = dir->path();
    h.target_file = args.target_file;
    h.on_progress = [&](const explore::ExploreProgress& p) {
      progress.Show("[hunt " + p.phase + "] run " + std::to_string(p.trial) +
                    (p.ops > 0 ? ", smallest failing workload " + std::to_string(p.ops) + " ops" : std::string()));
    };
    std::cout << "\nhunt: generated workloads over the whole target for " << FormatDuration(h.budget)
              << " (--hunt 0 skips, --hunt 10m for longer)" << std::endl;
    hunted = hunt::RunHunt(*target, h);
    progress.Clear();
    hunted->Print(std::cout);
  }
  if (hunted) {
    // The session wrote results.json without it: written again, whole, with the hunt.
    outcome.results.hunt = hunted->ToResults();
    if (Status st = WriteRunResults(outcome.results, dir->Absolute("results.json")); !st.ok())
      std::cerr << "idemproof: " << ConsoleSafe(st.message()) << "\n";
  }
  WriteOutputs(outcome.results, args.junit_file, args.json_file, &*dir);
  const bool summary_written = WriteCiSummaries(outcome.results, args.summary_file);
  std::cout << "\nrun directory: " << dir->path() << " (results.json, junit.xml, histories)\n";
  cli::WriteRunReports(dir->path(), std::cout, std::cerr);
  // The last lines name both results: the suite's table is far above by now.
  if (hunted)
    std::cout << "\nsuite: exit " << outcome.results.SuiteExitCode() << "; " << ConsoleSafe(outcome.results.hunt->Line())
              << "\nrun: exit "
              << (!summary_written && outcome.results.ExitCode() == 0 ? kExitUsage : outcome.results.ExitCode())
              << "\n";
  if (outcome.interrupted) {
    std::cerr << "idemproof: interrupted; targets stopped; partial run directory " << dir->path() << "\n";
    return kExitInterrupted;
  }
  if (!outcome.stop_reason.empty()) {
    std::cerr << "idemproof: " << ConsoleSafe(outcome.stop_reason) << "\n";
    return outcome.bad_config ? kExitUsage : kExitUndecided;
  }
  if (options.shard && selected.empty()) {
    std::cerr << "idemproof: shard " << shard->ToString() << " was dealt no scenario (" << options.shard->bound
              << " bound over " << shard->count << " shards): nothing was checked, exit 3\n";
  } else if (outcome.results.NothingTested()) {
    std::cerr << "idemproof: nothing was tested: no row judged " << ConsoleSafe(target->name)
              << " (see the not-applicable reasons above), exit 3"
              << (hunted ? " for the suite, " + std::to_string(outcome.results.ExitCode()) + " with the hunt" : "")
              << "\n";
  }
  // A summary CI was told to show and that is missing is no pass.
  if (!summary_written && outcome.results.ExitCode() == 0) return kExitUsage;
  return outcome.results.ExitCode();  // the hunt's combined in (RunResults::hunt)
}

}  // namespace

void AddRunCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "run scenarios against a target");
  cmd->add_option("paths", args->paths,
                  "scenario files or folders (folders named targets/ are skipped; default: the suite, "
                  "`idemproof --print-suite-dir`)");
  cmd->add_option("--target", args->target_file, "target description (YAML)")->required();
  cmd->add_option("--out", args->out_dir, "where run directories go")->capture_default_str();
  cmd->add_option("--junit", args->junit_file, "also write the JUnit XML here");
  cmd->add_option("--json", args->json_file, "also write results.json here");
  cmd->add_option("--summary", args->summary_file,
                  "also write the CI job summary (Markdown: verdicts per layer, violations with evidence and the "
                  "command that reproduces each) here; appended to $GITHUB_STEP_SUMMARY too when that is set");
  cmd->add_option("--seed", args->seed, "replay a run: the seed it printed");
  cmd->add_option("--namespace", args->run_namespace,
                  "replay a run's keys, biz ids and uuids exactly: the namespace it printed (default: a fresh one)");
  cmd->add_option("--filter", args->filter, "only scenarios whose name or path matches this glob");
  cmd->add_option("--action", args->actions,
                  "only the bindings (and scenarios) that send this action; repeatable");
  cmd->add_option("--flaw", args->flaw, "start the target with this flaw (its start.flaw_args)");
  cmd->add_flag("--strict", args->strict, "a deviation (a SHOULD missed) fails like a violation (exit 1)");
  cmd->add_option("--profile", args->profile,
                  "judge by these semantics (" + ProfileNames() + "; default: the target's profile:, else ietf)");
  cmd->add_option("--shard", args->shard,
                  "K/N: run only shard K of N of the bound scenarios (round robin by index; see merge)");
  cmd->add_flag("--dry-run", args->dry_run,
                "start nothing, send nothing: list the commands the target file would run and the rows (scenario x "
                "binding) the run would run or skip, then exit 0 (2 for a bad file)");
  cmd->add_option("--build-dir", args->build_dir,
                  "{{build_dir}} in target files (default: $IDEMPROOF_BUILD_DIR, else the build "
                  "folder holding this executable)");
  cmd->add_option("--hunt", args->hunt,
                  "after the suite, hunt with generated workloads over the whole target for this long (e.g. 30s, "
                  "10m; 0 = no hunt; default: $IDEMPROOF_HUNT, else 60s); same --seed, same workloads")
      ->capture_default_str();
  table.Add({cmd, [args] { return Run(*args); }});
}

}  // namespace idemproof::cli
