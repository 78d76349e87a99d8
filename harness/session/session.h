// Session: one `idemproof run`: every selected scenario against one target,
// recorded in a RunDirectory, judged by the oracles, summed up in RunResults.
//
// For each scenario, in order: a folder in the run directory with a copy of
// the scenario file; the scenario run (Interpreter); its history.jsonl written
// BEFORE any oracle looks at it; then the verdicts (or not_applicable "needs
// X" for every expectation when the target lacks what the scenario needs);
// then results.json rewritten, so a run stopped at any point leaves a
// consistent partial run directory.
//
// A session stops early, with `stop_reason` set, when the target cannot be
// reached or started (nothing more could be decided) or when interrupted.
//
// RecheckRunDirectory() is `idemproof check`: the oracles again over the
// recorded histories, offline, with the copies of the target and scenario
// files kept in the run directory.
//
// Thread-safety: one session at a time per thread; see interpreter.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/results.h"
#include "model/scenario.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/interpreter.h"
#include "session/run_directory.h"

namespace idemproof::session {

struct SessionOptions {
  std::uint64_t seed = 0;
  // The run's namespace (model/naming.h); "" = a fresh one. Recorded in
  // results.json either way. REQUIRES: "" or ValidateNamespace() ok.
  std::string run_namespace;
  std::optional<std::string> flaw;
  bool strict = false;  // --strict: recorded in results.json; deviations fail the run
  TemplateVars vars;  // build_dir, source_dir; run and run_dir are per scenario
  const std::atomic<bool>* cancel = nullptr;
  std::string tool_version;
  // `--shard K/N`: recorded in results.json ("shard").
  std::optional<ShardOfRun> shard;
  // Per scenario, its index in the whole bound list (a shard runs part of
  // it), so a shard sends the keys the unsharded run sends; empty: the
  // index in `scenarios`.
  std::vector<int> ordinals;
  runtime::BurstSender* last_byte_burst = nullptr;
  runtime::FaultRunner* faults = nullptr;
  // Called before each scenario (index, count, name) and after (its result).
  std::function<void(std::size_t, std::size_t, const Scenario&)> on_start;
  std::function<void(const ScenarioResult&)> on_done;
};

struct SessionOutcome {
  RunResults results;
  bool interrupted = false;
  // Why the session stopped before the last scenario (target unreachable...).
  std::string stop_reason;
  // The stop is the target file's fault (its tls: does not fit the target): exit 2.
  bool bad_config = false;
};

// `scenarios` are loaded and already checked against the target (no fit
// errors). The target file is copied into the run directory.
SessionOutcome RunSession(const TargetDescription& target, const std::vector<Scenario>& scenarios,
                          RunDirectory& dir, const SessionOptions& options);

// The row of a scenario the target cannot run: every expectation
// not_applicable "needs X, Y" (details {"needs": [...]}), as a run records it
// and as `lint --target` foresees it.
ScenarioResult NotApplicableResult(const Scenario& scenario, const std::vector<std::string>& needs);

// Re-runs the oracles over a run directory, read with ReadRunDirectory
// (session/run_contents.h); scenarios that were not judged (no history, or an
// error) keep their recorded result. Errors, each naming the file: kNotFound /
// kIoError / kInvalidArgument / kInvalidConfig when results.json, the target
// copy, a judged scenario's copy or its history is missing or unreadable.
Result<RunResults> RecheckRunDirectory(const std::string& path);

}  // namespace idemproof::session
