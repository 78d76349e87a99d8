#include "explore/explorer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "explore/scenario_writer.h"
#include "model/results.h"
#include "oracles/oracle.h"
#include "session/run_directory.h"
#include "search/property_search.h"
#include "model/results_json.h"

namespace fs = std::filesystem;

namespace idemproof::explore {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

struct TrialResult {
  int ordinal = 0;
  bool skipped = false;      // nothing to run: no op and no fixed step
  bool interrupted = false;
  bool violated = false;
  bool undecided = false;
  bool unexercised = false;  // no premise reached (Verdict::PremiseNotReached)
  Status error;
  std::vector<Verdict> verdicts;
  History history;
  std::string dir;
  std::size_t steps = 0;
  std::int64_t elapsed_ms = 0;  // the trial's run and checks, for plans.jsonl
};

class Exploration {
 public:
  // `workers`: one Interpreter per trial worker; the first also shrinks.
  // REQUIRES: !workers.empty()
  Exploration(const ExploreSpec& spec, const TargetDescription& target, const ExploreOptions& options,
              std::vector<runtime::Interpreter*> workers, const Alphabet& alphabet, session::RunDirectory& dir)
      : spec_(spec), target_(target), options_(options), workers_(std::move(workers)), interpreter_(*workers_.front()),
        alphabet_(alphabet), dir_(dir) {
    report_.run_dir = dir.path();
    report_.seed = options.seed;
    report_.run_namespace = interpreter_.run_namespace();
    report_.jobs = static_cast<int>(workers_.size());
    report_.trials_budget = options.trials.value_or(spec.explore.trials);
    report_.max_ops = options.max_ops.value_or(spec.explore.max_ops);
    reruns_ = options.reruns.value_or(spec.explore.reruns);
    confirm_ = options.confirm.value_or(spec.explore.confirm);
    report_.alphabet = alphabet.groups();
    report_.excluded = alphabet.excluded();
  }

  ExploreReport Run() {
    start_ = Clock::now();
    plans_log_.open(dir_.Absolute("plans.jsonl"), std::ios::trunc);
    // One search per trial, over that trial's plan alone (TrialPlanGen), so
    // a shard draws the plans the unsharded run draws; the first failing
    // trial's search shrinks it, and no trial runs after it.
    const Shard shard = options_.shard.value_or(Shard{});
    report_.shard = options_.shard;
    report_.trials_dealt = static_cast<int>(shard.ItemsOf(static_cast<std::size_t>(report_.trials_budget)));
    search::SearchSummary result;
    result.outcome = search::SearchOutcome::kPassed;
    if (workers_.size() > 1) {
      result = RunTrialsInParallel(shard);
    } else {
      for (int trial = 0; trial < report_.trials_budget && !report_.violation && !Stopped(); ++trial) {
        if (!shard.Holds(static_cast<std::size_t>(trial))) continue;
        result = SearchTrial(trial);
        if (result.outcome == search::SearchOutcome::kGaveUp || result.outcome == search::SearchOutcome::kError) break;
      }
    }
    if (result.outcome == search::SearchOutcome::kGaveUp && report_.stop_reason.empty()) {
      report_.stop_reason = "RapidCheck gave up: " + result.message;
    } else if (result.outcome == search::SearchOutcome::kError && report_.stop_reason.empty()) {
      report_.stop_reason = "RapidCheck error: " + result.message;
    }
    if (report_.violation) {
      report_.shrinking_ms = MsSince(start_) - report_.to_first_failure_ms;
      Confirm();
      WriteRepro();
    }
    report_.elapsed_ms = MsSince(start_);
    report_.isolation = runtime::IsolationName(options_.isolation);
    for (const runtime::Interpreter* worker : workers_) {
      report_.target_starts += worker->environment_starts();
      report_.target_reuses += worker->environment_reuses();
    }
    CleanTrials();
    dir_.WriteFile("explore.json", report_.ToJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return report_;
  }

 private:
  // No op and no fixed step (RapidCheck shrinks to this): not a trial.
  bool NothingToRun(const Plan& plan) const { return plan.ops.empty() && spec_.scenario.steps.empty(); }

  // One trial's search: its plan (TrialPlanGen), and on a failure RapidCheck
  // shrinks it by rerunning smaller plans through Evaluate().
  search::SearchSummary SearchTrial(int trial) {
    search::SearchParams params;
    params.name = spec_.scenario.name;
    params.seed = options_.seed;
    params.max_success = 1;
    params.max_size = std::max(1, report_.max_ops - 1);
    return search::SearchProperty<Plan>(
        TrialPlanGen(alphabet_, report_.max_ops, options_.seed, trial),
        [this](const Plan& plan) { return Evaluate(plan); }, params,
        [this](const search::SearchProgress&) { Progress(); });
  }

  // --jobs N: the dealt trials' plans are drawn here first (RapidCheck's
  // generators stay on this thread), then N workers take trials in order,
  // each on its own Interpreter. A failure at trial i stops the taking of
  // trials past i; those below i still run, so the first failing trial is the
  // lowest-numbered failing one, as with one worker. Its search is then run
  // on the first worker: RapidCheck runs the failing plan again and shrinks it.
  search::SearchSummary RunTrialsInParallel(const Shard& shard) {
    std::vector<int> dealt;
    for (int trial = 0; trial < report_.trials_budget; ++trial) {
      if (shard.Holds(static_cast<std::size_t>(trial))) dealt.push_back(trial);
    }
    std::vector<Plan> plans;
    plans.reserve(dealt.size());
    for (int trial : dealt) {
      plans.push_back(TrialPlanGen(alphabet_, report_.max_ops, options_.seed, trial)(rc::Random(), 0).value());
    }
    std::vector<std::optional<TrialResult>> outcomes(dealt.size());
    std::size_t next = 0;
    std::size_t first_failing = dealt.size();  // an index into dealt; size() = none yet
    std::mutex mu;
    auto work = [&](runtime::Interpreter& interpreter) {
      for (;;) {
        std::size_t k = 0;
        {
          std::lock_guard lock(mu);
          if (next >= dealt.size() || next > first_failing || Stopped()) return;
          k = next++;
        }
        const int ordinal = dealt[k] + 1;
        TrialResult t;
        t.ordinal = ordinal;
        if (NothingToRun(plans[k])) {
          t.skipped = true;
        } else {
          try {
            t = RunTrial(plans[k], interpreter, ordinal);
          } catch (const std::exception& e) {
            t.undecided = true;
            t.error = Status::Internal(std::string("trial worker: ") + e.what());
          }
        }
        std::lock_guard lock(mu);
        if (!t.skipped) {
          Account(t);
          Log("trials", plans[k], t);
        }
        if (t.violated && k < first_failing) first_failing = k;
        outcomes[k] = std::move(t);
        Progress();
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers_.size(); ++w) threads.emplace_back(work, std::ref(*workers_[w]));
    work(interpreter_);
    for (auto& thread : threads) thread.join();

    // The one-worker report: the trials up to the first failing one.
    for (std::size_t k = 0; k < outcomes.size(); ++k) {
      if (!outcomes[k] || outcomes[k]->skipped) continue;
      TrialResult& t = *outcomes[k];
      if (k > first_failing) {
        ++report_.trials_discarded;
        RemoveDir(t.dir);
        continue;
      }
      CountTrial(t);
      if (!t.violated) RemoveDir(t.dir);
    }
    ordinal_ = report_.trials_budget;  // shrinking runs are numbered after every trial
    search::SearchSummary result;
    result.outcome = search::SearchOutcome::kPassed;
    if (first_failing == dealt.size()) return result;
    TrialResult& failed = *outcomes[first_failing];
    RecordFailure(plans[first_failing], failed);
    root_pending_ = true;
    return Stopped() ? result : SearchTrial(dealt[first_failing]);
  }

  bool Stopped() {
    if (options_.cancel != nullptr && options_.cancel->load()) report_.interrupted = true;
    if (options_.time_budget && Clock::now() - start_ > *options_.time_budget) report_.time_budget_hit = true;
    return report_.interrupted || report_.time_budget_hit || !report_.stop_reason.empty();
  }

  // The property: a plan fails when a run of it has an invalid verdict (the
  // evidence is returned). Nothing runs once stopped (budget, interrupt,
  // target down): the remaining cases pass unexamined and the report says why.
  std::optional<std::string> Evaluate(const Plan& plan) {
    // --jobs: the first call of the shrinking search is the failing plan again.
    const bool root = std::exchange(root_pending_, false);
    if (Stopped()) return std::nullopt;
    if (NothingToRun(plan)) return std::nullopt;
    const bool shrinking = report_.violation;
    const int attempts = shrinking ? reruns_ : 1;
    for (int i = 0; i < attempts && !Stopped(); ++i) {
      TrialResult t = RunCounted(plan);
      Log(shrinking ? "shrinking" : "trials", plan, t);
      if (!shrinking) CountTrial(t);
      if (!t.violated) {
        RemoveDir(t.dir);
        continue;
      }
      if (!report_.violation) {
        RecordFailure(plan, t);
      } else {
        if (!root) ++report_.shrink_steps;
        RecordSmaller(plan, t);
      }
      Progress();
      std::string evidence;
      for (const auto& v : report_.invalid) evidence += v.oracle + ": " + v.evidence + "\n";
      return evidence;
    }
    return std::nullopt;
  }

  // A trial (not a shrink candidate) in the passed / undecided / unexercised tallies.
  void CountTrial(const TrialResult& t) {
    ++report_.trials_run;
    if (t.undecided) {
      ++report_.undecided_trials;
    } else if (t.unexercised) {
      ++report_.unexercised_trials;
    } else if (!t.violated) {
      ++report_.passed;
    }
  }

  // The first failing plan, which is also the smallest so far.
  void RecordFailure(const Plan& plan, TrialResult& t) {
    report_.violation = true;
    report_.first_failure = plan;
    report_.to_first_failure_ms = MsSince(start_);
    first_failure_steps_ = ToScenario(spec_, plan, spec_.scenario.name);
    RecordSmaller(plan, t);
  }

  void RecordSmaller(const Plan& plan, TrialResult& t) {
    if (!last_failure_dir_.empty() && last_failure_dir_ != t.dir) RemoveDir(last_failure_dir_);
    last_failure_dir_ = t.dir;
    report_.minimal = plan;
    report_.minimal_steps = t.steps;
    report_.invalid.clear();
    for (const auto& v : t.verdicts) {
      if (v.status == VerdictStatus::kInvalid) report_.invalid.push_back(v);
    }
    last_history_ = std::move(t.history);
  }

  // A run on the first worker, numbered in turn and counted.
  TrialResult RunCounted(const Plan& plan) {
    TrialResult t = RunTrial(plan, interpreter_, ++ordinal_);
    Account(t);
    Progress();
    return t;
  }

  // What every scenario run adds to the report, whoever ran it.
  void Account(const TrialResult& t) {
    ++report_.runs;
    if (t.interrupted) report_.interrupted = true;
    if (t.error.ok()) return;
    ++report_.undecided;
    if (t.error.code() == StatusCode::kUnavailable && report_.stop_reason.empty()) {
      report_.stop_reason = "the target could not be started or reached: " + t.error.message();
    }
  }

  // Runs the plan as a scenario and judges it. Touches nothing shared: the
  // --jobs workers call it at once, each with its own interpreter.
  TrialResult RunTrial(const Plan& plan, runtime::Interpreter& interpreter, int ordinal) const {
    const Clock::time_point started = Clock::now();
    TrialResult t;
    t.ordinal = ordinal;
    std::ostringstream name;
    name << "trials/t" << std::setw(5) << std::setfill('0') << ordinal;
    t.dir = dir_.Absolute(name.str());
    std::error_code ec;
    fs::create_directories(t.dir, ec);
    const Scenario scenario = ToScenario(spec_, plan, spec_.scenario.name);
    t.steps = scenario.steps.size();
    interpreter.ResetKeptBudget();
    runtime::ScenarioRun run = interpreter.Run(scenario, t.dir, ordinal);
    t.history = std::move(run.history);
    t.interrupted = run.interrupted;
    if (!run.error.ok()) {
      t.undecided = true;
      t.error = run.error;
      t.elapsed_ms = MsSince(started);
      return t;
    }
    t.verdicts = BuiltinOracles().CheckAll(scenario, target_, t.history);
    t.elapsed_ms = MsSince(started);
    bool judged = false, undecided_verdict = false;
    for (const auto& v : t.verdicts) {
      // A deviation (a SHOULD) fails a trial only under --strict.
      if (v.is_violation() || (v.is_deviation() && options_.strict)) t.violated = true;
      if (v.status == VerdictStatus::kValid) judged = true;
      if (v.status == VerdictStatus::kUnknown && !v.PremiseNotReached()) undecided_verdict = true;
    }
    // Unknown throughout is not a pass: the trial proved nothing. A plan
    // that never reached any premise is unexercised, not undecided.
    if (!t.violated && !judged) (undecided_verdict ? t.undecided : t.unexercised) = true;
    if (t.violated) t.history.WriteJsonl(t.dir + "/history.jsonl");
    return t;
  }

  void Confirm() {
    for (int i = 0; i < confirm_ && !Stopped(); ++i) {
      TrialResult t = RunCounted(report_.minimal);
      Log("confirming", report_.minimal, t);
      ++report_.confirm_runs;
      if (t.violated) {
        ++report_.reproduced;
        last_history_ = std::move(t.history);
      }
      RemoveDir(t.dir);
    }
  }

  void WriteRepro() {
    std::ostringstream command;
    command << "idemproof run " << dir_.Absolute("repro.yaml") << " --target "
            << (options_.target_file.empty() ? "TARGET" : fs::absolute(options_.target_file).string());
    if (options_.flaw) command << " --flaw " << *options_.flaw;
    report_.repro_command = command.str();
    std::ostringstream comment;
    comment << "Minimal failing plan found by `idemproof explore` (seed " << report_.seed << ")\n"
            << "from " << spec_.scenario.file << (options_.flaw ? " against flaw " + *options_.flaw : "") << ".\n"
            << "ops: " << report_.minimal.ToString() << "\n"
            << "reproduced " << report_.reproduced << "/" << report_.confirm_runs << " confirming runs\n"
            << "replay: " << report_.repro_command;
    Scenario minimal = ToScenario(spec_, report_.minimal, spec_.scenario.name + "-repro");
    auto yaml = WriteScenarioYaml(minimal, comment.str());
    if (!yaml.ok()) {
      report_.stop_reason = "could not write the repro: " + yaml.status().ToString();
      return;
    }
    dir_.WriteFile("repro.yaml", *yaml);
    report_.repro_file = dir_.Absolute("repro.yaml");
    dir_.WriteHistory("repro-history.jsonl", last_history_);
    first_failure_steps_.name = spec_.scenario.name + "-first-failure";
    auto first = WriteScenarioYaml(first_failure_steps_, "The first failing plan, before shrinking: " +
                                                             report_.first_failure.ToString());
    if (first.ok()) dir_.WriteFile("first-failure.yaml", *first);
  }

  void Log(const char* phase, const Plan& plan, const TrialResult& t) {
    nlohmann::json line = {{"run", t.ordinal}, {"phase", phase}, {"ops", plan.ops.size()}, {"plan", plan.ToString()}};
    line["elapsed_ms"] = t.elapsed_ms;
    line["outcome"] = !t.error.ok() ? "error" : t.violated ? "invalid" : t.undecided ? "undecided" : t.unexercised ? "unexercised" : "ok";
    if (!t.error.ok()) line["error"] = t.error.ToString();
    for (const auto& v : t.verdicts) {
      if (v.status == VerdictStatus::kInvalid) line["invalid"].push_back(v.oracle);
    }
    plans_log_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  }

  void Progress() {
    if (!options_.on_progress) return;
    ExploreProgress p;
    p.phase = report_.violation ? "shrinking" : "trials";
    p.trial = report_.runs;
    p.trials = report_.trials_budget;
    p.shrinks = report_.shrink_steps;
    p.ops = report_.violation ? report_.minimal.ops.size() : 0;
    options_.on_progress(p);
  }

  void RemoveDir(const std::string& path) {
    std::error_code ec;
    fs::remove_all(path, ec);
  }

  void CleanTrials() { RemoveDir(dir_.Absolute("trials")); }

  const ExploreSpec& spec_;
  const TargetDescription& target_;
  const ExploreOptions& options_;
  std::vector<runtime::Interpreter*> workers_;
  runtime::Interpreter& interpreter_;  // the first worker
  const Alphabet& alphabet_;
  session::RunDirectory& dir_;
  ExploreReport report_;
  int reruns_ = 1;
  int confirm_ = 1;
  int ordinal_ = 0;
  bool root_pending_ = false;  // --jobs: the next Evaluate() reruns the first failing plan
  Clock::time_point start_;
  std::ofstream plans_log_;
  std::string last_failure_dir_;
  History last_history_;
  Scenario first_failure_steps_;
};

// --jobs N starts N targets (and N of each service) at once: each needs a
// port of its own, so a fixed one is refused rather than fought over.
Status WorkersFit(const TargetDescription& target, int jobs) {
  if (jobs <= 1) return Status();
  auto fixed = [](const StartCommand& start) { return !start.free_port && start.port_from_stdout.empty(); };
  auto refuse = [&](const std::string& whose, const SourceMark& mark) {
    return Status::InvalidConfig("--jobs " + std::to_string(jobs) + " starts " + std::to_string(jobs) +
                                     " copies at once, so each needs a port of its own: declare start.free_port: "
                                     "true or start.port_from_stdout (" + whose + " port is fixed)",
                                 mark);
  };
  if (target.start && fixed(*target.start)) return refuse("the target's", target.start->mark);
  for (const auto& [name, service] : target.services) {
    if (fixed(service.start)) return refuse("service " + name + "'s", service.mark);
  }
  return Status();
}

nlohmann::json PlanJson(const Plan& plan) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : plan.ops) ops.push_back(op.ToString());
  return ops;
}

}  // namespace

int ExploreReport::ExitCode() const {
  if (violation) return 1;
  if (interrupted) return 130;
  if (!stop_reason.empty() || (runs > 0 && undecided == runs) || undecided_trials > 0) return 3;
  if (trials_run > 0 && passed == 0) return 3;  // nothing was ever exercised
  if (trials_run == 0) return 3;                 // nothing was tried (a shard dealt no trial)
  return 0;
}

nlohmann::json ExploreReport::ToJson() const {
  nlohmann::json j;
  j["run_dir"] = run_dir;
  j["seed"] = seed;
  j["namespace"] = run_namespace;
  j["trials_budget"] = trials_budget;
  if (shard) j["shard"] = {{"index", shard->index}, {"count", shard->count}, {"trials", trials_dealt}};
  j["max_ops"] = max_ops;
  j["trials_run"] = trials_run;
  j["runs"] = runs;
  j["undecided"] = undecided;
  j["passed"] = passed;
  j["undecided_trials"] = undecided_trials;
  j["unexercised_trials"] = unexercised_trials;
  j["violation"] = violation;
  j["exit_code"] = ExitCode();
  if (violation) {
    j["first_failure"] = PlanJson(first_failure);
    j["minimal"] = PlanJson(minimal);
    j["minimal_ops"] = minimal.ops.size();
    j["minimal_steps"] = minimal_steps;
    j["shrink_steps"] = shrink_steps;
    j["invalid"] = nlohmann::json::array();
    for (const auto& v : invalid) j["invalid"].push_back(VerdictToJson(v));
    j["reproduced"] = reproduced;
    j["confirm_runs"] = confirm_runs;
    j["repro_file"] = repro_file;
    j["repro_command"] = repro_command;
  }
  nlohmann::json alphabet_json = nlohmann::json::array();
  for (const auto& [w, ops] : alphabet) {
    alphabet_json.push_back({{"kind", ops.front().kind->name()}, {"weight", w}, {"ops", ops.size()}});
  }
  j["alphabet"] = alphabet_json;
  j["excluded"] = nlohmann::json::array();
  for (const auto& e : excluded) j["excluded"].push_back({{"op", e.op}, {"reason", e.reason}});
  j["time_budget_hit"] = time_budget_hit;
  j["interrupted"] = interrupted;
  if (!stop_reason.empty()) j["stop_reason"] = stop_reason;
  j["isolation"] = isolation;
  j["jobs"] = jobs;
  if (trials_discarded > 0) j["trials_discarded"] = trials_discarded;
  j["target_starts"] = target_starts;
  j["target_reuses"] = target_reuses;
  j["elapsed_ms"] = elapsed_ms;
  j["to_first_failure_ms"] = to_first_failure_ms;
  j["shrinking_ms"] = shrinking_ms;
  return j;
}

Result<ExploreReport> Explore(const ExploreSpec& spec, const TargetDescription& target,
                              const ExploreOptions& options) {
  ScenarioFit fit = CheckScenarioAgainstTarget(spec.scenario, target);
  if (!fit.errors.empty()) return fit.errors.front();
  if (!fit.needs.empty()) {
    return Status::InvalidConfig("the target lacks what the spec needs: " + fit.needs.front(), spec.scenario.mark);
  }
  if (options.jobs < 1) return Status::InvalidArgument("--jobs takes a positive number");
  if (Status fit_workers = WorkersFit(target, options.jobs); !fit_workers.ok()) return fit_workers;
  if (options.jobs > 1 && ((options.faults && !options.new_faults) ||
                           (options.last_byte_burst && !options.new_last_byte_burst))) {
    return Status::InvalidArgument("--jobs: no fault runner or burst sender for the further workers");
  }
  runtime::InterpreterOptions interpreter_options = runtime::InterpreterOptionsOf(options);
  interpreter_options.isolation = options.isolation;
  runtime::Interpreter interpreter(target, interpreter_options);
  auto alphabet = Alphabet::Build(spec, target, interpreter);
  if (!alphabet.ok()) return alphabet.status();
  auto dir = session::RunDirectory::Create(options.out_root, session::RunDirectory::NewRunId(options.seed));
  if (!dir.ok()) return dir.status();
  if (!options.target_file.empty()) dir->CopyIn(options.target_file, "target.yaml");
  if (!options.spec_file.empty()) dir->CopyIn(options.spec_file, "spec.yaml");
  interpreter.KeepProcessesIn(dir->Absolute("targets"));
  // Workers 2..N: their own fault runner, burst sender and processes, the
  // same namespace (trial i's names depend on the namespace and i alone).
  std::vector<std::unique_ptr<runtime::FaultRunner>> worker_faults;
  std::vector<std::unique_ptr<runtime::BurstSender>> worker_bursts;
  std::vector<std::unique_ptr<runtime::Interpreter>> further;
  std::vector<runtime::Interpreter*> workers{&interpreter};
  for (int w = 2; w <= options.jobs; ++w) {
    runtime::InterpreterOptions o = interpreter_options;
    o.run_namespace = interpreter.run_namespace();
    // Worker 1 has neither (a test, a build without injectors): nor has any.
    worker_faults.push_back(options.faults ? options.new_faults() : nullptr);
    worker_bursts.push_back(options.last_byte_burst ? options.new_last_byte_burst() : nullptr);
    o.faults = worker_faults.back().get();
    o.last_byte_burst = worker_bursts.back().get();
    further.push_back(std::make_unique<runtime::Interpreter>(target, o));
    further.back()->KeepProcessesIn(dir->Absolute("targets-w" + std::to_string(w)));
    workers.push_back(further.back().get());
  }
  Exploration exploration(spec, target, options, workers, *alphabet, *dir);
  return exploration.Run();
}

}  // namespace idemproof::explore
