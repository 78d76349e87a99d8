#include "explore/explore_command.h"

#include <unistd.h>

#include <filesystem>
#include <random>

#include "explore/explorer.h"
#include "model/console_text.h"
#include "model/naming.h"
#include "model/shard.h"
#include "model/target_commands.h"
#include "oracles/oracle.h"
#include "platform/interrupt.h"
#include "runtime/injector_faults.h"

namespace fs = std::filesystem;

namespace idemproof::explore {

namespace {

// One bound spec's exploration, printed; its exit code.
int ExploreOne(const ExploreSpec& spec, const TargetDescription& target, const ExploreArgs& a,
               const ExploreOptions& o, bool tty, std::ostream& out, std::ostream& err) {
  out << "idemproof explore: " << ConsoleSafe(spec.scenario.name) << " against " << ConsoleSafe(target.name)
      << (a.flaw.empty() ? "" : " with flaw " + ConsoleSafe(a.flaw)) << "\n"
      << "seed " << o.seed << ", namespace " << o.run_namespace << " (replay with --seed " << o.seed
      << " --namespace " << o.run_namespace << ")\n"
      << std::flush;
  auto report = Explore(spec, target, o);
  if (tty) out << "\r\033[K" << std::flush;
  if (!report.ok()) {
    err << ConsoleSafe(report.status().ToString()) << "\n";
    return 2;
  }
  out << "run directory " << report->run_dir << "\n";
  for (const auto& e : report->excluded)
    out << "  not in the alphabet: " << ConsoleSafe(e.op + " (" + e.reason + ")") << "\n";
  if (report->shard) {
    out << "shard " << report->shard->ToString() << ": " << report->trials_dealt << " of the " << report->trials_budget
        << " trials (i mod " << report->shard->count << " = " << report->shard->index - 1 << ")"
        << (report->trials_dealt == 0 ? ": EMPTY, no trial was dealt to this shard: nothing was tried, exit 3" : "")
        << "\n";
  }
  out << report->trials_run << " trial(s) run of " << report->trials_budget << ", " << report->runs
      << " scenario run(s) in all, " << report->undecided << " error(s), " << report->elapsed_ms << " ms\n"
      << "isolation " << report->isolation << ": the target started " << report->target_starts << " time(s), reused by "
      << report->target_reuses << " run(s)"
      << (report->jobs > 1 ? ", over " + std::to_string(report->jobs) + " workers" : std::string()) << "\n"
      << report->passed << " passed, " << report->undecided_trials << " undecided, " << report->unexercised_trials
      << " unexercised, " << (report->violation ? 1 : 0) << " violation(s)\n";
  if (report->time_budget_hit) out << "time budget reached: not every trial (or shrink) ran\n";
  if (report->violation) {
    out << "VIOLATION after " << report->trials_run << " trial(s) (" << report->to_first_failure_ms << " ms)\n";
    if (report->trials_discarded > 0) {
      out << "  " << report->trials_discarded
          << " later trial(s) had already run on other workers: not counted, as one worker would not have run them\n";
    }
    out
        << "  first failing plan (" << report->first_failure.ops.size()
        << " ops): " << ConsoleSafe(report->first_failure.ToString()) << "\n"
        << "  minimal plan (" << report->minimal.ops.size() << " ops, " << report->shrink_steps
        << " shrink steps, " << report->shrinking_ms << " ms): " << ConsoleSafe(report->minimal.ToString()) << "\n"
        << "  reproduced " << report->reproduced << "/" << report->confirm_runs << " confirming runs\n";
    if (report->confirm_runs > 0 && report->reproduced == 0) {
      // A race that failed once during shrinking: the first failing plan is the evidence.
      out << "  the minimal plan did not fail again: first-failure.yaml (in the run directory) is the plan that failed first\n";
    }
    for (const auto& v : report->invalid) out << "  invalid " << ConsoleSafe(v.oracle + ": " + v.evidence) << "\n";
    out << "repro: " << ConsoleSafe(report->repro_file) << "\n  " << ConsoleSafe(report->repro_command) << "\n";
  } else if (report->stop_reason.empty() && !report->interrupted && report->undecided_trials > 0) {
    out << "no violation, but " << report->undecided_trials
        << " trial(s) decided nothing (every oracle unknown): not a clean result\n";
  } else if (report->stop_reason.empty() && !report->interrupted && report->passed == 0) {
    out << "no violation, but no trial exercised any property (every premise unreached): not a clean result\n";
  } else if (report->stop_reason.empty() && !report->interrupted) {
    out << "no violation\n";
  }
  if (!report->stop_reason.empty()) err << "idemproof: " << ConsoleSafe(report->stop_reason) << "\n";
  if (report->interrupted) err << "idemproof: interrupted; partial run directory " << report->run_dir << "\n";
  return report->ExitCode();
}

}  // namespace

int RunExploreCommand(const ExploreArgs& a, const std::string& default_build_dir, const std::string& source_dir,
                      const std::function<std::unique_ptr<runtime::BurstSender>()>& new_last_byte_burst,
                      const std::function<std::unique_ptr<runtime::FaultRunner>()>& new_faults, std::ostream& out,
                      std::ostream& err) {
  auto target = LoadTargetFile(a.target_file, a.profile);
  if (!target.ok()) {
    err << ConsoleSafe(target.status().ToString()) << "\n";
    return 2;
  }
  ScenarioVocabulary vocabulary = BuiltinOracles().Vocabulary();
  vocabulary.fault_kinds = runtime::InjectorFaults().Kinds();  // a typo'd kind is an error, not a skip
  auto spec = LoadExploreSpec(a.spec_file, vocabulary);
  if (!spec.ok()) {
    err << ConsoleSafe(spec.status().ToString()) << "\n";
    return 2;
  }
  if (!a.flaw.empty() && (!target->start || target->start->flaw_args.empty())) {
    err << "idemproof: --flaw needs a target that declares start.flaw_args (" << ConsoleSafe(a.target_file)
        << " does not)\n";
    return 2;
  }
  if (!a.run_namespace.empty()) {
    Status valid = ValidateNamespace(a.run_namespace);
    if (!valid.ok()) {
      err << "idemproof: --namespace: " << valid.message() << "\n";
      return 2;
    }
  }
  ExploreOptions o;
  if (!a.shard.empty()) {
    auto shard = ParseShard(a.shard);
    if (!shard.ok()) {
      err << "idemproof: " << shard.status().message() << "\n";
      return 2;
    }
    o.shard = *shard;
  }
  o.seed = a.seed.value_or(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32));
  o.run_namespace = a.run_namespace.empty() ? FreshNamespace(std::random_device{}()) : a.run_namespace;
  o.trials = a.trials;
  o.max_ops = a.max_ops;
  o.reruns = a.reruns;
  o.confirm = a.confirm;
  for (const auto* v : {&a.trials, &a.max_ops, &a.reruns, &a.confirm}) {
    if (*v && **v < 1) {
      err << "idemproof: --trials, --max-ops, --reruns and --confirm take a positive number\n";
      return 2;
    }
  }
  if (a.jobs < 1) {
    err << "idemproof: --jobs takes a positive number\n";
    return 2;
  }
  if (!a.time_budget.empty()) {
    auto d = ParseDuration(a.time_budget);
    if (!d.ok()) {
      err << "idemproof: --time-budget: " << d.status().message() << "\n";
      return 2;
    }
    o.time_budget = *d;
  }
  if (!a.flaw.empty()) o.flaw = a.flaw;
  o.strict = a.strict;
  o.isolation = a.isolation == "process" ? runtime::Isolation::kProcess : runtime::Isolation::kNamespace;
  o.vars["build_dir"] = a.build_dir.empty() ? default_build_dir : fs::absolute(a.build_dir).string();
  o.vars["source_dir"] = source_dir;
  o.cancel = &runtime::InterruptFlag();
  std::unique_ptr<runtime::BurstSender> last_byte_burst = new_last_byte_burst ? new_last_byte_burst() : nullptr;
  std::unique_ptr<runtime::FaultRunner> faults = new_faults ? new_faults() : nullptr;
  o.last_byte_burst = last_byte_burst.get();
  o.faults = faults.get();
  o.jobs = a.jobs;
  o.new_last_byte_burst = new_last_byte_burst;
  o.new_faults = new_faults;
  o.out_root = a.out_dir;
  o.target_file = a.target_file;
  o.spec_file = a.spec_file;
  const bool tty = ::isatty(1) == 1;
  o.on_progress = [&](const ExploreProgress& p) {
    if (!tty) return;
    out << "\r\033[K[" << p.phase << "] run " << p.trial << " (budget " << p.trials << " trials)";
    if (p.ops > 0) out << ", smallest failing plan " << p.ops << " ops after " << p.shrinks << " shrinks";
    out << std::flush;
  };

  // Nothing from the target file runs unseen (issue 43).
  err << DeclaredCommandsNotice(*target, o.flaw) << std::flush;
  // The bind stage: one exploration per binding of the spec's parameters.
  int exit_code = 0;
  for (const ExploreSpec& bound : BindExploreSpec(*spec, *target)) {
    const int code = ExploreOne(bound, *target, a, o, tty, out, err);
    if (code == 2 || code == 130) return code;  // bad usage or interrupted: stop
    // The worst outcome wins: 1 (violation) over 3 (undecided) over 0.
    if (code == 1 || (code == 3 && exit_code == 0)) exit_code = code;
  }
  return exit_code;
}

}  // namespace idemproof::explore
