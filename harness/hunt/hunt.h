// The hunt phase of `idemproof run` (issue 46, item 1): after the suite, a
// generated phase with a time budget draws random workloads from the whole
// target and judges each whole history with every oracle that needs no
// parameters. It is built on explore's public entry points alone
// (ParseExploreSpec, BindExploreSpec, Explore): the hunt writes an explore
// file over the target (every action needing no captured variable, four
// bound key/biz pairs, the target's hooks, causes, messages, batch
// jobs, a gateway fault that loses an answer and a reset of each tcp egress
// (the service's store)), and explore generates, runs with namespace
// isolation, shrinks the first failure and writes `repro.yaml`.
//
// Run directory: <run dir>/hunt/hunt.yaml (the generated explore file) and
// <run dir>/hunt/<explore run id>/ (explore.json, plans.jsonl, repro.yaml...).
//
// Also generated where the target allows: a client that gives up while the
// handler runs (send_abort: needs a slow_request variant or hook), a key
// reused on another action's route (any send of a pair another action used).
// Not generated: a second caller (send_caller's premise needs the other
// sends to go as the first caller; see HuntSpecYaml), other instances (the
// hunt spawns none), and the key-level oracles do not judge callbacks
// (deduplicated by their own event id).
//
// Outcome: a violation is exit 1; a hunt that could not run (the target
// offers nothing to generate, could not be started or reached) or judged no
// workload at all is exit 3 with its reason — never a silent pass. A
// workload that decided nothing (an answer lost to a fault) is counted and
// shown, not a failure: the hunt is a search, not a proof.
//
// Thread-safety: one RunHunt() at a time per process (explore's rule).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/duration.h"
#include "base/status.h"
#include "explore/explorer.h"
#include "model/results.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/interpreter.h"

namespace idemproof::hunt {

// The default budget of `idemproof run --hunt`.
inline constexpr char kDefaultBudget[] = "60s";
// The most workloads one hunt draws, whatever its budget (the count bound).
inline constexpr int kMostWorkloads = 100000;
// The longest workload (ops).
inline constexpr int kMaxOps = 10;

// `--hunt`'s default: $IDEMPROOF_HUNT when set and not empty (the project's
// tests set it to 0: the runs they start test something else), else
// kDefaultBudget.
std::string DefaultHuntBudget();

// `--hunt D`: a duration ("60s", "10m"; "0" = no hunt). nullopt for 0.
// Errors: kInvalidArgument naming the text.
Result<std::optional<Duration>> ParseHuntBudget(const std::string& text);

// The explore file the hunt generates for `target` (YAML the explore loader
// reads), and the oracles it names. Pure.
struct HuntSpecText {
  std::string yaml;
  std::vector<std::string> oracles;
};
HuntSpecText HuntSpecYaml(const TargetDescription& target);

struct HuntOptions {
  Duration budget = std::chrono::seconds(60);
  std::uint64_t seed = 0;
  std::string run_namespace;  // the run's; the hunt's keys live in its own sub-namespace per workload
  std::optional<std::string> flaw;
  bool strict = false;
  TemplateVars vars;
  const std::atomic<bool>* cancel = nullptr;
  runtime::BurstSender* last_byte_burst = nullptr;
  runtime::FaultRunner* faults = nullptr;
  std::string run_dir;      // the run's directory: the hunt writes under run_dir/hunt
  std::string target_file;  // for the repro command
  std::function<void(const explore::ExploreProgress&)> on_progress;
};

struct HuntReport {
  Duration budget{0};
  std::string spec_file;  // the generated explore file (absolute)
  std::vector<std::string> oracles;
  // Set when the hunt could not run at all (nothing to generate, a bad
  // generated file): exit 3 with this reason.
  std::string not_run;
  std::optional<explore::ExploreReport> explore;  // when it ran
  // From plans.jsonl: the workloads' ops (trials only), by op kind.
  int operations = 0;
  std::map<std::string, int> ops_by_kind;
  int faults_fired = 0;  // kill, restart, pause, fault, hook, cause, send_then_kill, kill_mid_work ops
  std::string repro_command;  // replays repro.yaml without a hunt of its own

  // 0 clean; 1 violation; 3 not run / undecided / target unreachable; 130 interrupted.
  int ExitCode() const;
  // What results.json records (RunResults::hunt), and its JSON.
  HuntResults ToResults() const;
  nlohmann::json ToJson() const;
  void Print(std::ostream& out) const;
};

// Runs the hunt against `target`. Never fails: what went wrong is in the
// report (not_run, or explore's stop_reason).
HuntReport RunHunt(const TargetDescription& target, const HuntOptions& options);

}  // namespace idemproof::hunt
