// The four run metrics from the design article (seed 002, section 5),
// computed from histories:
//  - duplicate rate: keys sent more than once / keys sent (requests with a
//    key; "fresh" keys count as distinct keys).
//  - false-dedup rate: replay-marked answers whose (action, biz) has no record
//    behind it (records probe count 0) / all replay-marked answers. Only 2xx
//    and retryable answers count (a replayed 4xx validation failure has no
//    record by design; a replayed 503 claims work that never happened). Needs a
//    declared replay marker and records probes; answers without a records
//    probe are not counted in either number.
//  - swallowed-new rate (issue 33, the other false duplicate): first
//    requests of a key (per action and caller) answered as a replay / all
//    such first requests answered 2xx or retryable. A key's first request
//    has nothing to replay: a marked answer is a new request swallowed as a
//    replay of an older one (a body hash or a cut key merged two keys).
//    Only a first request that ran alone counts (operation.h RanAlone: no
//    other request of its key overlapped it, no proxy fault acted on it).
//    Needs a declared replay marker.
//  - window hit rate: retries inside the declared window that were recognised
//    / retries inside the window. A retry is a request whose key, action and
//    payload were already answered with a terminal answer (2xx, or a 4xx other
//    than in_progress / mismatch / missing_key); it is inside the window when
//    it was invoked at most `window` after that first terminal answer (no
//    declared window = unbounded). Recognised = replay-marked or answered
//    in_progress; without a declared marker, an answer equal to the first
//    (status + body minus volatile paths).
//  - rerun diff rows: row ids whose rows differ (missing, extra, doubled or
//    different minus the volatile paths) between a rerun job's last result
//    and the clean run's result of the same range: for every job that was
//    rerun, against the clean run whose `of` names it (else the first clean
//    run). Absent when no rerun job has a clean run to compare with (or the
//    target declares no batch section, or a result could not be read).
// A rate is absent (nullopt) when its denominator is 0.
//
// Thread-safety: pure functions; Metrics is a plain value.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "model/history.h"
#include "base/status.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

struct Metrics {
  std::int64_t keys_sent = 0;
  std::int64_t keys_sent_more_than_once = 0;
  std::int64_t replay_answers = 0;            // replay-marked answers with a records probe
  std::int64_t replay_answers_without_record = 0;
  std::int64_t new_key_answers = 0;            // first requests of a key answered 2xx/retryable (marker declared)
  std::int64_t new_key_answers_as_replay = 0;  // of those, replay-marked
  std::int64_t window_retries = 0;
  std::int64_t window_retries_recognised = 0;
  std::optional<std::int64_t> rerun_diff_rows;  // absent: no rerun compared with a clean run

  std::optional<double> duplicate_rate() const;
  std::optional<double> false_dedup_rate() const;
  std::optional<double> swallowed_new_rate() const;
  std::optional<double> window_hit_rate() const;

  // Adds the counts of `other` (rates are recomputed from the sums).
  void Add(const Metrics& other);
};

Metrics ComputeMetrics(const TargetDescription& target, const History& history);

// Counts and rates (rates null when undefined).
nlohmann::json MetricsToJson(const Metrics& metrics);
Result<Metrics> MetricsFromJson(const nlohmann::json& doc);

}  // namespace idemproof
