// Explorer: `idemproof explore`. Generates plans from an ExploreSpec's
// alphabet with RapidCheck (search/property_search.h: the seed, trials as
// max_success, sizes up to max_ops), runs each as
// a scenario with the runtime's Interpreter (one target process per trial
// when the target file has a start command, and always a fresh key/biz
// namespace), judges it with every oracle the spec names, and on the first
// invalid verdict lets RapidCheck shrink the plan by rerunning smaller ones.
//
// Flaky failures (races): once a violation was seen, each shrink candidate
// is tried up to `reruns` times and counts as failing when any try fails;
// the minimal plan is then run `confirm` more times and its reproduction
// rate reported.
//
// Run directory (under out_root, named like `idemproof run`'s):
//   explore.json        the report below, as JSON
//   plans.jsonl         every plan evaluated, in order: phase, plan, outcome
//   repro.yaml          the minimal failing plan as a scenario file
//                       (`idemproof run repro.yaml --target T [--flaw F]`)
//   repro-history.jsonl its history (the last failing run of it)
//   first-failure.yaml  the plan that failed first, before shrinking
//   target.yaml, spec.yaml copies; trials/ only while running (passing
//   trials' folders are removed, failing ones kept until superseded)
//
// Thread-safety: one Explore() at a time per process (RapidCheck's search
// runs on the calling thread; --jobs workers run plans drawn beforehand).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "explore/alphabet.h"
#include "explore/explore_spec.h"
#include "explore/plan.h"
#include "base/duration.h"
#include "base/status.h"
#include "model/shard.h"
#include "model/target.h"
#include "model/template.h"
#include "model/verdict.h"
#include "runtime/interpreter.h"

namespace idemproof::explore {

struct ExploreProgress {
  std::string phase;  // "trials", "shrinking", "confirming"
  int trial = 0;      // trials run so far (all phases)
  int trials = 0;     // the trial budget
  int shrinks = 0;    // accepted shrink steps
  std::size_t ops = 0;  // ops of the current smallest failing plan (0: none yet)
};

struct ExploreOptions {
  std::uint64_t seed = 0;
  std::string run_namespace;  // model/naming.h; "" = a fresh one

  std::optional<int> trials;   // default: the spec's explore.trials
  std::optional<int> max_ops;  // default: the spec's explore.max_ops
  std::optional<int> reruns;   // default: the spec's explore.reruns
  std::optional<int> confirm;  // default: the spec's explore.confirm
  std::optional<Duration> time_budget;  // absent: none
  // `--shard K/N`: only the trials i with i mod N = K - 1 (model/shard.h);
  // each trial's plan depends on the seed and i alone (TrialPlanGen).
  std::optional<Shard> shard;
  std::optional<std::string> flaw;
  bool strict = false;  // --strict: a deviation verdict fails a trial too
  TemplateVars vars;  // build_dir, source_dir
  const std::atomic<bool>* cancel = nullptr;
  runtime::BurstSender* last_byte_burst = nullptr;
  runtime::FaultRunner* faults = nullptr;
  // `--jobs N`: N trial workers, each with its own Interpreter (so its own
  // target, services and egress proxies) and its own fault runner and
  // last-byte sender, made by these for workers 2..N (worker 1 uses the two
  // above). The first failing trial is the lowest-numbered failing one, as
  // with one worker; shrinking and confirming run on worker 1 alone.
  // REQUIRES: jobs >= 1; with jobs > 1, a factory for each of the two that
  // is set.
  int jobs = 1;
  std::function<std::unique_ptr<runtime::FaultRunner>()> new_faults;
  std::function<std::unique_ptr<runtime::BurstSender>()> new_last_byte_burst;
  // kNamespace: trials reuse a running target (runtime/interpreter.h says
  // which plans may), in the run directory's targets/ folder.
  runtime::Isolation isolation = runtime::Isolation::kNamespace;
  std::string out_root = "idemproof-runs";
  std::string target_file;  // copied into the run directory when set
  std::string spec_file;    // idem
  std::function<void(const ExploreProgress&)> on_progress;
};

struct ExploreReport {
  std::string run_dir;
  std::uint64_t seed = 0;
  std::string run_namespace;
  int trials_budget = 0;
  int max_ops = 0;
  std::optional<Shard> shard;  // --shard: "shard" in explore.json with the trials dealt
  int trials_dealt = 0;      // the trials of the budget this shard (or the whole run) may run
  int trials_run = 0;        // trials before the first violation (or all)
  int runs = 0;              // every scenario run, shrinking and confirming included
  int undecided = 0;         // runs the tool could not complete (an error; not a verdict)
  int passed = 0;            // trials with a valid verdict and none invalid
  // Trials that decided nothing: an error, or no oracle valid or invalid
  // (every verdict unknown / not_applicable). Never counted as passed.
  int undecided_trials = 0;
  // Trials whose plan exercised no property: every verdict was unknown
  // because its premise was never reached (a single send has no replay to
  // compare) or not_applicable. Neither passed nor undecided.
  int unexercised_trials = 0;
  bool violation = false;
  Plan first_failure;
  Plan minimal;
  std::size_t minimal_steps = 0;  // steps of repro.yaml (fixed steps included)
  int shrink_steps = 0;      // accepted shrinks
  std::vector<Verdict> invalid;  // the minimal plan's invalid verdicts (last failing run)
  int reproduced = 0;        // confirming runs that failed again...
  int confirm_runs = 0;      // ...out of these
  std::string repro_file;    // absolute path of repro.yaml
  std::string repro_command;
  std::vector<std::pair<int, std::vector<Op>>> alphabet;
  std::vector<ExcludedOp> excluded;
  bool time_budget_hit = false;
  bool interrupted = false;
  std::string stop_reason;   // the target could not be started/reached, or RapidCheck gave up
  std::string isolation = "process";
  int jobs = 1;            // trial workers
  // Trials past the first failing one that parallel workers had already run
  // (their outcomes are not counted: the report is the one-worker report).
  int trials_discarded = 0;
  int target_starts = 0;   // trials (and reruns) that started their own target and services
  int target_reuses = 0;   // trials that reused a running one (namespace isolation)
  std::int64_t elapsed_ms = 0;
  std::int64_t to_first_failure_ms = 0;
  std::int64_t shrinking_ms = 0;

  // 1 violation; 130 interrupted; 3 undecided (stop_reason, every run an
  // error, any undecided trial: a clean claim needs every trial judged, or
  // no trial that exercised anything, or no trial run at all, as a shard
  // dealt none); 0 none.
  int ExitCode() const;
  nlohmann::json ToJson() const;
};

// Runs the exploration. Errors (nothing ran): kInvalidConfig when the spec
// does not fit the target or no send op can run; kIoError when the run
// directory cannot be written.
Result<ExploreReport> Explore(const ExploreSpec& spec, const TargetDescription& target,
                              const ExploreOptions& options);

}  // namespace idemproof::explore
