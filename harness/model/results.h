// Results of a run, as written to results.json in the run directory and read
// back by `idemproof check` and the report renderers (the JSON codec and the
// file: model/results_json.h).
//
// Exit code of a run (RunResults::ExitCode):
//   1 if any verdict is a violation (invalid, severity violation), or, under
//     `strict`, a deviation; otherwise
//   3 if any verdict is unknown or a scenario could not run (error set);
//   3 if the run never finished (complete false: a run directory whose
//     harness was killed before its last write);
//   3 if it is a shard that was dealt no scenario, or a merge of shards
//     that lacks a shard or a scenario (model/shard.h: never a pass);
//   3 if nothing was tested: no row has a verdict that judged the target
//     (every row not applicable or undecided). A shard is judged by its
//     merge, so a shard whose rows all happen to be not applicable passes;
//   0 otherwise (valid, not_applicable and, unless strict, deviations).
// (2, bad usage/config, is decided by the CLI before anything runs.)
// A run with a hunt phase (RunResults::hunt) combines both codes
// (CombineExitCodes): a violation (1) over interrupted (130) over
// undecided (3) over the suite's own code.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/history.h"
#include "model/metrics.h"
#include "model/shard.h"
#include "base/status.h"
#include "model/verdict.h"

namespace idemproof {

struct ScenarioResult {
  std::string name;
  std::string file;
  std::string layer;   // LayerName()
  std::string hunts;
  // A bound scenario's row (binding.h): the scenario's name before binding
  // and its binding, parameter -> action or probe ("scenario" and "binding"
  // in JSON, absent for unbound rows).
  std::string bound_from;
  std::map<std::string, std::string> binding;
  std::vector<Verdict> verdicts;
  std::map<std::string, std::int64_t> fault_counts;  // fault name -> times injected
  std::vector<std::string> warnings;  // e.g. "fault proxy-drop declared but injected 0 times"
  std::string error;    // non-empty: the tool could not run it (counts as undecided)
  std::int64_t events = 0;       // history size
  std::int64_t elapsed_ms = 0;
  std::string history_file;      // relative to the run directory, may be empty
  Metrics metrics;

  // Worst verdict: invalid > unknown (or error) > valid > not_applicable; a
  // deviation counts as invalid under `strict`, else as valid.
  VerdictStatus Outcome(bool strict = false) const;
  int Deviations() const;  // deviation verdicts
  // Some verdict judged the target: valid or invalid (a deviation too).
  bool Exercised() const;
  // For a not_applicable row, what the target lacks: its verdicts' "needs"
  // (joined), else the first verdict's evidence; "" for any other row.
  std::string NotApplicableReason() const;
};

// The hunt phase of a run (hunt/hunt.h): results.json "hunt". The first
// failing workload of a hunt that found a violation, and its shrink.
struct HuntFailure {
  std::string first_failure;  // the workload's ops, "; "-joined
  std::int64_t first_failure_ops = 0;
  std::int64_t to_first_failure_ms = 0;
  std::string minimal;  // the shrunk workload
  std::int64_t minimal_ops = 0;
  std::int64_t shrink_steps = 0;
  std::int64_t shrinking_ms = 0;
  std::int64_t reproduced = 0;  // of confirm_runs confirming runs of the minimal workload
  std::int64_t confirm_runs = 0;
  std::vector<std::pair<std::string, std::string>> invalid;  // oracle -> evidence
  std::string repro_file;     // repro.yaml (absolute)
  std::string repro_command;  // replays it without a hunt of its own
};

// An op kind the hunt did not generate, and why ("needs ...").
struct HuntExclusion {
  std::string op;
  std::string reason;
};

struct HuntResults {
  std::string budget;  // "1m"
  std::string spec_file;
  std::vector<std::string> oracles;
  int exit_code = 3;
  std::string outcome;  // "clean" | "violation" | "undecided" | "not_run"
  std::string reason;   // why it did not run (outcome not_run)
  std::string run_dir;
  std::uint64_t seed = 0;
  std::string run_namespace;  // "namespace"
  std::int64_t workloads = 0, runs = 0, passed = 0, undecided = 0, unexercised = 0, errors = 0;
  std::int64_t operations = 0;
  std::map<std::string, std::int64_t> ops_by_kind;
  std::int64_t faults_fired = 0;
  std::int64_t elapsed_ms = 0;
  bool time_budget_hit = false;
  std::string stop_reason;  // why the hunt stopped undecided
  std::vector<HuntExclusion> excluded;
  std::optional<HuntFailure> failure;

  // One line for the console's last lines and the reports: "hunt (1m):
  // VIOLATION in workload 12 of 40 (window), shrunk to 3 ops: replay with
  // ...", "hunt (1m): clean, 52 workload(s) judged of 60, 9 fault(s) fired".
  std::string Line() const;
};

// A violation (1) over interrupted (130) over undecided (3) over `suite`.
int CombineExitCodes(int suite, int hunt);

struct RunResults {
  std::string run_id;
  std::uint64_t seed = 0;
  std::string run_namespace;  // "namespace"; "" in run directories older than it
  std::string target_name;
  std::string target_file;
  // The target is https:// with tls: {insecure: true}: no certificate was
  // checked (results.json "target": {"tls_verification": "off"}; the reports say so).
  bool tls_unverified = false;
  // The services and egress ("service stub", "egress stub") reached over
  // https:// with tls: {insecure: true}: results.json "target":
  // {"tls_unverified": [...]}, and the reports name them.
  std::vector<std::string> tls_unverified_peers;
  std::string flaw;       // empty = none
  std::string profile = "ietf";  // the semantics profile judged by (model/profile.h)
  std::string started;    // RFC 3339 UTC
  std::string finished;   // RFC 3339 UTC; "" while the run goes on
  // False from a run's first write of results.json until its last: a run
  // that never got there (SIGKILL) reads back as incomplete.
  bool complete = true;
  std::string tool_version;
  // The on-disk format of the run directory's histories and evidence
  // (kHistoryFormat, model/history.h): "format" in JSON; absent = 1.
  int format = kHistoryFormat;
  bool strict = false;    // --strict: deviations fail the run ("strict" in JSON, only when set)
  std::vector<ScenarioResult> scenarios;
  // `run --shard K/N`: this run is one shard ("shard" in JSON, only when set).
  std::optional<ShardOfRun> shard;
  // `idemproof merge`: the shards this run was merged from ("merged_shards").
  std::optional<MergedShards> merged_shards;
  // The hunt phase after the suite ("hunt"; absent when it did not run).
  std::optional<HuntResults> hunt;

  // The run's: the suite's (SuiteExitCode) combined with the hunt's.
  int ExitCode() const;
  int SuiteExitCode() const;
  // No row judged the target (see ExitCode); false for a shard.
  bool NothingTested() const;
  // The not_applicable rows grouped by NotApplicableReason(), most first,
  // then by reason.
  std::vector<std::pair<std::string, int>> NotApplicableGroups() const;
  // True for a shard dealt nothing, or a merge missing a shard or a row.
  bool Incomplete() const;
  // One line for the console and the reports: "shard 2/4: 2 of 6 bound
  // scenario(s)", "merged shards 1, 2, 3, 4 of 4: 6 scenario(s)", or with
  // INCOMPLETE and what is missing; "" for a run that is neither.
  std::string ShardNote() const;
  // "TLS verification was off (...)" when tls_unverified or a peer went
  // unverified, else "": one sentence for every page, so none reads like a
  // run that checked.
  std::string TlsNote() const;
  // Sum over scenarios.
  Metrics TotalMetrics() const;
};

// Now as RFC 3339 UTC with milliseconds ("2024-05-01T12:00:00.123Z").
std::string NowRfc3339();

}  // namespace idemproof
