// RunReview: what a design-review report says about one run, worked out once
// from RunDirectoryContents and then only formatted by the HTML and Markdown
// renderers (so both always say the same thing).
//
//  - the seven layers of the domain (client, gateway / network, queue, side
//    effect, concurrency, batch, cluster), each held / broken / undecided / not tested,
//    with what the histories show: the duplicate sources exercised, the key
//    seen on the wire, the concurrency guard's answers, reconciliation after a
//    kill or restart; store and window as the target file declares them;
//  - per scenario: its worst verdict, one sentence on what broke, the
//    oracles' evidence (the differing answers side by side, record counts,
//    missing ranges), the history events to highlight on the timeline, and
//    the exact command that reproduces it;
//  - faults injected (zero flagged), metrics, burst arrival spreads.
//
// Every string here is raw (unescaped) text; escaping is the renderers' job.
//
// Thread-safety: plain values; ReviewRun is a pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/results.h"
#include "session/run_contents.h"
#include "model/scenario.h"
#include "model/target.h"
#include "model/verdict.h"

namespace idemproof {

enum class LayerState { kBroken, kUndecided, kHeld, kNotTested };
// "broken", "undecided", "held", "not tested".
const char* LayerStateName(LayerState state);

// A link from the layer table to a scenario's section.
struct EvidenceLink {
  std::string anchor;  // "s-3-double-submit" (HTML id / Markdown heading anchor)
  std::string label;   // the scenario name
  VerdictStatus outcome = VerdictStatus::kNotApplicable;
  bool error = false;  // the tool could not run it
};

struct LayerRow {
  Layer layer = Layer::kClient;
  std::string title;  // "client", "gateway / network", ...
  LayerState state = LayerState::kNotTested;
  int scenarios = 0;
  int held = 0, broken = 0, undecided = 0, not_applicable = 0;  // scenario outcomes
  std::vector<std::string> sources;     // duplicate sources exercised (scenario hunts + faults)
  std::string key_observed;
  std::string store_window;             // as declared by the target file
  std::string concurrency_guard;
  std::string reconciliation;
  std::vector<EvidenceLink> evidence;
};

// One HTTP answer (or its absence) from an oracle's evidence.
struct AnswerView {
  std::string role;        // the evidence's name for it: "first", "replay", "retry", ...
  std::int64_t index = -1; // history index of the request
  std::string process;
  std::string key;
  std::string outcome;     // "ok", "info", "fail", "open"
  std::optional<int> status;
  HeaderList headers;
  std::string body;
  std::string error;
};

// One violation an oracle reported.
struct ViolationView {
  std::string oracle;
  std::string problem;                 // one line
  std::vector<AnswerView> answers;     // shown side by side
  std::vector<std::string> differences;
  std::optional<std::int64_t> records; // record count, when the oracle counted
  std::string expected_records;        // "1", "0", "<= 1"
  std::vector<std::string> missing_ranges;
};

struct BurstSpreadView {
  int step = -1;
  int n = 0;
  std::string mode;                            // "last_byte" | "threads"
  std::optional<std::int64_t> harness_ns;      // last final write - first (last-byte bursts)
  std::optional<std::int64_t> target_ns;       // max - min arrival the target reported
  std::string arrival_header;                  // the header it came from ("" = none declared)
};

struct ScenarioReview {
  std::size_t index = 0;               // into results.scenarios
  const ScenarioResult* result = nullptr;
  std::string anchor;
  std::string layer_title;
  VerdictStatus outcome = VerdictStatus::kNotApplicable;
  std::string what_broke;              // one sentence; empty unless invalid
  std::vector<ViolationView> violations;  // first few per invalid verdict
  int violations_omitted = 0;
  std::set<std::int64_t> highlighted;  // history indices the evidence names
  std::string repro_command;
  // The spread each burst achieved, from the burst notes the runtime records
  // (f "note", value.burst: step, n, mode, harness_spread_us,
  // target_spread_us, arrival_header); a burst without a target-side spread
  // (no arrival header declared) still shows its harness side.
  std::vector<BurstSpreadView> burst_spreads;
};

struct FaultTotal {
  std::string name;
  std::int64_t injected = 0;
  std::vector<std::string> scenarios;  // which declared it
};

// How often one property's premise occurred over the run (Verdict::premise),
// over the scenarios that judged it (not_applicable verdicts left out).
struct PremiseTotal {
  std::string oracle;
  std::string what;                    // "overlapping duplicates"
  std::int64_t count = 0;              // summed over those scenarios
  int scenarios = 0;
  std::vector<std::string> unreached;  // scenarios where it never occurred
};

// Whether a family was exercised: some row ran and what its properties are
// about happened (FamilyRow::premises); ran, but no counted premise ever
// occurred (it proved nothing); or nothing ran (every row not applicable or
// not run: FamilyRow::lacking says why).
enum class FamilyExercise { kExercised, kPremiseUnreached, kNotExercised };
// "exercised", "ran, premise never occurred", "not exercised".
const char* FamilyExerciseName(FamilyExercise e);

// One family of the run: a scenario file, bound to each fitting action of the
// target (its rows "name[action,...]"), and what came of it per action.
struct FamilyRow {
  std::string family;        // the scenario's name before binding
  std::string layer_title;
  std::string hunts;
  // Target action -> the worst outcome over this family's rows bound to it
  // (a row counts for every action its binding names).
  std::map<std::string, VerdictStatus> by_action;
  // The worst outcome over rows bound to no action (target-wide: messages,
  // batch jobs, probes only); absent when there is none.
  std::optional<VerdictStatus> target_wide;
  // Nothing was exercised (every row not applicable or not run): what the
  // target lacks or why, from the rows' not_applicable evidence and errors,
  // each said once. Empty when something was exercised.
  std::vector<std::string> lacking;
  std::string anchor;        // the first broken row's section; "" when none broke
  FamilyExercise exercise = FamilyExercise::kNotExercised;
  // Each premise its judged verdicts counted, summed over its rows, in
  // oracle order: {"overlapping duplicates", 7}; uncounted ones left out.
  std::vector<std::pair<std::string, std::int64_t>> premises;
  // Rows bound to an action that were not applicable while others of the
  // family ran: "action: what the target lacks" (what lies between the files).
  std::vector<std::string> not_applicable_on;

  // "overlapping duplicates ×7, …" ("" when none): the premises column.
  std::string PremisesText() const;
  // `lacking`, then "not applicable on A: …; B: …" ("" when neither): the
  // column naming what the target lacks.
  std::string LackingText() const;
};

// Families against actions: which failure classes reached which action.
struct FamilyCoverage {
  std::vector<std::string> actions;     // the target's actions (by name), else those bound
  std::vector<FamilyRow> families;      // in layer order, then name
  bool any_target_wide = false;         // some family ran rows bound to no action
  std::vector<std::string> unexercised; // actions no family judged (held, broken or undecided)
};

// The first screen's matrix: layers down, properties across. A property is
// what one or more oracles judge; a cell is the worst of their verdicts over
// the layer's scenarios (violation > undecided > deviation > held > not
// applicable), with how many verdicts had that worst outcome and a link to
// the first scenario that had it.
struct MatrixProperty {
  std::string title;                 // "one record"
  std::vector<std::string> oracles;  // {"one_record"}
};
// one record, identical replay, mismatch rejected, in progress, lease
// recovery, effects once, ranges.
const std::vector<MatrixProperty>& MatrixProperties();

enum class CellState { kNone, kNotApplicable, kHeld, kDeviation, kUndecided, kBroken };
// "—", "n/a", "held", "deviation", "undecided", "broken".
const char* CellStateName(CellState state);

struct MatrixCell {
  CellState state = CellState::kNone;  // kNone: no verdict of the property in this layer
  int count = 0;                       // verdicts with that outcome
  std::string anchor;                  // the first scenario with it; "" for kNone
};

struct MatrixRow {
  std::string layer_title;
  LayerState state = LayerState::kNotTested;
  std::vector<MatrixCell> cells;  // one per MatrixProperties(), in order
};

struct RunReview {
  std::vector<LayerRow> layers;               // the seven, in domain order
  std::vector<MatrixRow> matrix;              // the seven, in domain order
  std::vector<ScenarioReview> scenarios;      // every scenario, in run order
  std::vector<FaultTotal> faults;             // by name
  std::vector<PremiseTotal> premises;         // by oracle name
  FamilyCoverage coverage;
  std::vector<std::string> warnings;          // scenario warnings + reading gaps
  Metrics metrics;                            // run total
  int exit_code = 0;
  std::string headline;                       // "Broken: client, concurrency" / "Held: ..."
};

// Works out the review. `contents` must outlive the result (it points into it).
RunReview ReviewRun(const RunDirectoryContents& contents);

// The shell command that reproduces one scenario of the run (same seed, same
// flaw, only this scenario), every argument shell-quoted.
std::string ReproCommand(const RunResults& results, const ScenarioResult& scenario);

// A verdict's premise in the report's words: "overlapping duplicates ×31",
// "overlapping duplicates: not counted", or "" for an oracle without one.
std::string PremiseText(const Verdict& verdict);
// The profile rule a verdict applied: "ietf/mismatch-status (SHOULD): a key
// reused with a different payload SHOULD be answered 422"; "" for none.
std::string RuleText(const Verdict& verdict);

// "s-<index>-<name as [a-z0-9-]>": stable, unique, safe in ids and file names.
std::string ScenarioAnchor(std::size_t index, const std::string& name);

// A scenario outcome in the report's words: "broken" (invalid), "held"
// (valid), "undecided" (unknown), "not applicable".
const char* OutcomeName(VerdictStatus outcome);

// An answer body for reading: JSON pretty-printed, anything else as is; cut
// to `max_chars` with a note saying how much was left out.
std::string DisplayBody(const std::string& body, std::size_t max_chars = 4000);

// Human duration of nanoseconds: "850 us", "12.5 ms", "3.20 s".
std::string FormatNanos(std::int64_t ns);

// One row of the report's metrics table, in the words every format prints,
// ready for the format's markup: fixed text as is, and what came from the
// run (scenario names, measured values, header names) passed through the
// renderer's `escape`.
struct MetricRow {
  std::string name;     // "duplicate rate"
  std::string value;    // "25.0 % (1 / 4)", "— (nothing to measure)"
  std::string meaning;  // what is counted
};

// The four metrics of the run, then a row per burst spread recorded (or one
// row saying none was).
std::vector<MetricRow> MetricRows(const RunReview& review,
                                  const std::function<std::string(const std::string&)>& escape);

// The hunt section's rows, in the same shape (model/results.h HuntResults):
// outcome, budget, workloads, operations by kind, faults fired, the
// workloads' outcomes, each op kind not generated and why, and for a
// violation the first failing workload, its shrink, the oracles it broke
// and repro.yaml. The replay command is the renderers' to show as code
// (hunt.failure->repro_command).
std::vector<MetricRow> HuntRows(const HuntResults& hunt, const std::function<std::string(const std::string&)>& escape);

}  // namespace idemproof
