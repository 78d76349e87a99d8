// The deterministic simulation of the reference core (issue #7, part 4):
// the real ReferenceService (+ SideEffectRoutes) over the real SqliteStore,
// in-process, with a simulated clock, provider and crashes, its requests
// interleaved step by step in an order RapidCheck chooses (sim_plan.h), each
// run recorded as a History and judged by the built-in oracles
// (sim_history.h), a failing plan shrunk to the interleaving that shows the
// bug.
//
// RunPlan runs one plan: after its last op, requests still in flight run to
// their answers (lowest id first, marked "[drain]" in the trace), so the end
// state is quiescent; then the records and the ledger are probed and the
// history judged. The same plan gives the same trace, history and verdict
// (no timing, no randomness reaches an outcome).
//
// Simulate is the search (search/property_search.h) with the given seed;
// every plan run (trials and shrink attempts) is one interleaving explored.
//
// Thread-safety: calls may run concurrently on different threads (a thread's
// trials share its in-memory stores, one trial at a time; a file trial has
// its own file).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/flaw.h"
#include "model/history.h"
#include "sim/sim_history.h"
#include "sim/sim_plan.h"
#include "sim/step_scheduler.h"

namespace idemproof::sim {

struct SimConfig {
  ref::Flaw flaw = ref::Flaw::none;
  ref::Nanos lease = std::chrono::seconds(30);  // a wait op moves the clock lease + 1s
  int max_in_flight = 3;                         // a send beyond this is skipped
  // Where the store lives. shared_memory: one SQLite in-memory database per
  // thread and flaw (URI "file:...?mode=memory&cache=shared"), both of the
  // core's connections on it, emptied before each trial (every table,
  // sqlite_sequence included: as a new database) and kept across crashes:
  // the same SQL, constraints and transactions as on a file, at a fraction
  // of the cost (no crash ever falls inside a transaction, so file
  // durability is not what is under test). file: a real file per trial
  // (WAL), its connections reopened at every restart, as the server runs.
  enum class Medium { shared_memory, file };
  Medium medium = Medium::shared_memory;
  std::string work_dir;  // file medium: where; "" = /dev/shm, else the temp dir
};

struct TrialOutcome {
  std::vector<TraceLine> trace;
  History history;                    // what the oracles judged (empty when `error` stopped the run)
  std::vector<Violation> violations;  // the broken expectations (sim_history.h)
  std::string error;  // the simulation itself failed (store file, escaped exception); else ""
  bool violated() const { return !violations.empty(); }
};

TrialOutcome RunPlan(const SimPlan& plan, const SimConfig& config);

// The trace as text, one line per step ("  " indented, numbered).
std::string FormatTrace(const std::vector<TraceLine>& trace);

struct SimulateOptions {
  SimConfig config;
  std::uint64_t seed = 1;
  int trials = 2000;  // plans RapidCheck generates before deciding "no violation"
  int max_ops = 30;   // ops per plan (at most)
  // Called after every interleaving with the count so far (progress); may be empty.
  std::function<void(std::int64_t interleavings)> on_progress;
};

struct SimulateReport {
  std::uint64_t seed = 0;
  std::int64_t interleavings = 0;  // plans run: trials + shrink attempts
  std::int64_t trials = 0;         // plans generated before the first violation (or all)
  double elapsed_s = 0;
  double interleavings_per_s = 0;
  std::optional<double> to_first_violation_s;
  bool violation = false;
  SimPlan first_failure;
  SimPlan minimal;           // the shrunk plan
  TrialOutcome minimal_run;  // its trace and violations
  std::string error;         // the search could not run (RunPlan's error, RapidCheck's)
};

SimulateReport Simulate(const SimulateOptions& options);

// Whether the simulation's pool and ops can show `flaw` at all: none, the
// four of the issue (check-then-insert, unfenced-takeover, no-lease-expiry,
// no-intent) and the request-path flaws its oracles also catch
// (request-id-key, memory-store, volatile-replay, empty-replay). For any
// other flaw (batch, callbacks, inbox, TTL, PUT/DELETE, ...) a pass would
// say nothing.
bool SimulationCovers(ref::Flaw flaw);

}  // namespace idemproof::sim
