// VerdictDetails: the proof a verdict carries, typed. An oracle fills
// members; it never writes a JSON key. One codec (model/results_json.h,
// VerdictDetailsToJson / VerdictDetailsFromJson) turns them into the
// verdict's "details" object of results.json and back; nowhere else is a
// key spelled.
//
// Each kind of extra is a struct of optional members; a member left unset is
// absent from the JSON. Its JSON name is the member's name (the codec's table
// in results_json.cpp says so where they differ: DetailTexts::markers_note is
// "markers", DetailRecords::judged_rows is "judged", ...).
//
// To add a member (a new count of your oracle, say):
//   1. add `std::optional<std::int64_t> my_count;` to DetailCounts below,
//      with a one-line comment saying what it counts;
//   2. add its row `{"my_count", &DetailCounts::my_count}` to kCountFields
//      in model/results_json.cpp;
//   3. set it in the oracle: `d.counts.my_count = n;`.
// A member without its row fails to compile (a static_assert there: each
// kind holds members of one type only, so keep it so); the round-trip tests
// are tests/harness-model/verdict_details_test.cpp.
//
// Kinds:
//   violations  the findings (model/finding.h), in the order found
//   counts      integers: how many of something the oracle saw or judged
//   tallies     text -> count maps: answers by what they were ("422": 2)
//   texts       one line each: how the oracle judged, what it did not check
//   lists       lists of lines or ids (effect ids, request differences)
//   probes      labelled probe values compared (probe_equal's "a", "b")
//   records     structured evidence as the run gave it or the oracle built
//               it row by row: op references (oracles' OpJson), probe
//               values, per-key judgement rows, batch runs. JSON values
//               under typed names: their shape is the evidence's own.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/finding.h"

namespace idemproof {

struct DetailCounts {
  std::optional<std::int64_t> judged;     // occurrences of the premise judged
  std::optional<std::int64_t> undecided;  // occurrences without a decisive answer
  std::optional<std::int64_t> unprobed;   // occurrences no probe could check
  std::optional<std::int64_t> shared_keys;  // keys sent on two actions / by two callers
  std::optional<std::int64_t> keys;         // keys judged (identical_replay)
  std::optional<std::int64_t> replays_checked;
  std::optional<std::int64_t> replay_marked;  // answers marked as replays
  std::optional<std::int64_t> past_window;    // requests sent after the retry window
  std::optional<std::int64_t> overlapping_duplicates;
  std::optional<std::int64_t> in_progress_answers;
  std::optional<std::int64_t> honouring_clients;  // clients that waited as Retry-After said
  std::optional<std::int64_t> retryable_answers;
  std::optional<std::int64_t> executed_retries;
  std::optional<std::int64_t> retries_in_window;
  std::optional<std::int64_t> window_ns;          // the declared retry window
  std::optional<std::int64_t> window_executions;  // executions the window allows, when > 1
  std::optional<std::int64_t> repeated_deliveries;
  std::optional<std::int64_t> failed_during_store_outage;
  std::optional<std::int64_t> bytes_fingerprint_refusals;
  std::optional<std::int64_t> natural_key_refusals;
  std::optional<std::int64_t> keys_given_up;  // keys a client gave up on (answer_after_abort)
  // Side effects (applied_once, downstream_once, intent_reconciled).
  std::optional<std::int64_t> applied;   // counter after minus before
  std::optional<std::int64_t> counter;   // the counter probe's value after
  std::optional<std::int64_t> before;    // ... and before
  std::optional<std::int64_t> definite;  // worth of the acknowledged messages
  std::optional<std::int64_t> uncertain;  // worth of the unacknowledged ones
  std::optional<std::int64_t> deliveries;
  std::optional<std::int64_t> broker_redeliveries;
  std::optional<std::int64_t> effects;
  std::optional<std::int64_t> successes;
  std::optional<std::int64_t> struck_event;  // the history index of the struck call

  bool operator==(const DetailCounts&) const = default;
};

// Each map: what (a status, "no answer", a message id) -> how many.
struct DetailTallies {
  std::optional<std::map<std::string, std::int64_t>> answered;
  std::optional<std::map<std::string, std::int64_t>> auth_refused;
  std::optional<std::map<std::string, std::int64_t>> key_unheld;
  std::optional<std::map<std::string, std::int64_t>> refused;
  std::optional<std::map<std::string, std::int64_t>> set_aside;  // answers left out, by why
  std::optional<std::map<std::string, std::int64_t>> messages;   // message id -> deliveries
  std::optional<std::map<std::string, std::int64_t>> worth;      // message id -> its worth
  std::optional<std::map<std::string, std::int64_t>> injected;   // faults_fired: fault -> times it took effect
  std::optional<std::map<std::string, std::int64_t>> picked;     // fault -> times the scenario asked it to fire

  bool operator==(const DetailTallies&) const = default;
};

struct DetailTexts {
  std::optional<std::string> counts;        // applied_once: "applications" or "sums <path>"
  std::optional<std::string> retry_after;   // "required" | "recommended"
  std::optional<std::string> min;           // the least Retry-After, "1s"
  std::optional<std::string> refused_by_authentication;  // "401 x2"
  std::optional<std::string> downstream;    // the egress of the struck call
  std::optional<std::string> method;
  std::optional<std::string> path;
  std::optional<std::string> by;            // range_continuity: "totals"
  std::optional<std::string> job;
  std::optional<std::string> markers_note;      // "markers": why the markers were not checked
  std::optional<std::string> redone_rows_note;  // "redone_rows": why redone rows were not checked

  bool operator==(const DetailTexts&) const = default;
};

struct DetailLists {
  std::optional<std::vector<std::string>> needs;  // not_applicable: what the target lacks
  std::optional<std::vector<std::string>> request_differences;
  std::optional<std::vector<std::string>> not_the_other_caller;
  std::optional<std::vector<std::string>> effect_ids;
  std::optional<std::vector<std::string>> downstream_keys;  // the keys the service sent its downstream
  std::optional<std::vector<std::string>> undecided_lines;  // "undecided": why each was not decided

  bool operator==(const DetailLists&) const = default;
};

struct DetailRecords {
  std::optional<nlohmann::json> judged_rows;  // "judged": one row per key or business id
  std::optional<nlohmann::json> key_rows;     // "keys": one row per key (lease_recovery)
  std::optional<nlohmann::json> requests;     // op references
  std::optional<nlohmann::json> calls;        // egress calls
  std::optional<nlohmann::json> ledger;       // probe values as read
  std::optional<nlohmann::json> recorded;
  // range_continuity: batch runs and their comparisons.
  std::optional<nlohmann::json> markers;
  std::optional<nlohmann::json> redone_rows;
  std::optional<nlohmann::json> clean_totals;
  std::optional<nlohmann::json> after_rerun;
  std::optional<nlohmann::json> later_reruns;
  std::optional<nlohmann::json> failing_run;
  std::optional<nlohmann::json> reruns;
  std::optional<nlohmann::json> clean_run;
  std::optional<nlohmann::json> final_comparison;  // "final"
  // faults_fired: fault -> {"count", "why", "event"} of the firings without effect.
  std::optional<nlohmann::json> missed;

  bool operator==(const DetailRecords&) const = default;
};

// Probe values an oracle compares (probe_equal): {"label", "value"}.
struct DetailProbes {
  std::optional<FindingValue> a;
  std::optional<FindingValue> b;

  bool operator==(const DetailProbes&) const = default;
};

struct VerdictDetails {
  // "violations": unset when the oracle lists none (not even an empty list).
  std::optional<std::vector<Finding>> violations;
  DetailCounts counts;
  DetailTallies tallies;
  DetailTexts texts;
  DetailLists lists;
  DetailRecords records;
  DetailProbes probes;
  // Members of a results.json this version does not know (read back, never
  // written by an oracle): kept so a merge writes them out unchanged.
  nlohmann::json unknown = nlohmann::json::object();

  // Details holding `findings` alone / what a not-applicable target lacks alone.
  static VerdictDetails OfFindings(std::vector<Finding> findings);
  static VerdictDetails OfNeeds(std::vector<std::string> needs);
  // The findings, or none.
  const std::vector<Finding>& Findings() const;
  bool operator==(const VerdictDetails&) const = default;
};

}  // namespace idemproof
