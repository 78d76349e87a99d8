// ExploreSpec: what `idemproof explore` hunts with. It is a scenario file
// (name, layer, hunts, faults, steps, expect: loaded by the model's strict
// scenario loader, errors with file:line:column) plus an `explore:` block
// describing the alphabet generated plans are drawn from:
//
//   explore:
//     actions: [$create]            # default: every action that needs no captured variable;
//                                   # a "$PARAM" names a for_each parameter (bound per binding)
//     keys: [k1, k2]                # symbolic keys ("none" = no key header)
//     biz: [b1, b2]
//     pairing: bound                # bound: keys[i] goes with biz[i]; free: any pair
//     ops: {send: 10, send_other: 2, send_equivalent: 3, send_changed: 2, send_background: 0, burst: 2, wait: 2, wait_past_lease: 1,
//           kill: 1, restart: 1, hook: 1, cause: 1, fault: 1, pause: 1, resume: 2,
//           deliver: 10, redeliver: 3, run_batch: 5, rerun: 5,
//           kill_mid_work: 0, send_past_lease: 0}   # weights; 0 leaves an op out
//     hooks: [die_before_ack]       # default: every target hook but `heal`
//     causes: [retryable_failure]   # capabilities the cause op causes (model/capabilities.h),
//                                   # by a variant of an explore action or a hook;
//                                   # default: every one the target provides
//     callers: [first, second]      # the target's callers a send may go as (caller_scope);
//                                   # default: none (sends carry no caller's headers)
//     faults: [drop]                # declared faults a send may go through
//     messages: [credit]            # target messages deliver/redeliver push (ids: the keys pool);
//                                   # a "$PARAM" names a for_each parameter of role message
//     batch: {jobs: [j1], from: 0, to: 100, fail_after: 60}   # run_batch/rerun jobs
//     burst: {n: 8, mode: threads}
//     wait: 100ms                   # the short wait
//     insert_at: 3                  # generated ops go before steps[3]; default: after all steps
//     reruns: 1                     # tries per shrink candidate (races: > 1)
//     confirm: 5                    # reruns of the minimal plan for its reproduction rate
//     trials: 100                   # default trial budget (--trials overrides)
//     max_ops: 8                    # longest generated plan (--max-ops overrides)
//
// `steps:` may be omitted in an explore file (then every generated op is the
// whole plan); given, its steps before `insert_at` run first and the rest
// after the generated ops (a fixed prologue/epilogue, e.g. probes that
// probe_equal compares). Such files are not suite scenarios: keep them out
// of folders `idemproof run` walks (the suite's loader rejects `explore:`).
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "model/vocabulary.h"

namespace idemproof::explore {

struct ExploreBlock {
  std::vector<std::string> actions;  // empty: the default (see above)
  std::vector<std::string> keys{"k1", "k2"};
  std::vector<std::string> biz{"b1", "b2"};
  bool bound_pairing = true;
  std::map<std::string, int> weights;  // op kind name -> weight, overriding the defaults
  std::optional<std::vector<std::string>> hooks;
  std::optional<std::vector<std::string>> causes;
  // Where the named items were written, for errors found against the target:
  // "action NAME", "hook NAME", "cause NAME", "message NAME".
  std::map<std::string, SourceMark> marks;
  std::vector<std::string> faults;
  // "first" / "second": the target's declared callers sends go as, each
  // send drawn as one of them; empty: no caller (the target's own headers).
  std::vector<std::string> callers;
  std::vector<std::string> messages;  // none: no deliver/redeliver op
  // Batch jobs run_batch/rerun use (none: no batch op); rows [from, to),
  // run_batch also drawn with fail_after when set.
  std::vector<std::string> jobs;
  std::int64_t batch_from = 0;
  std::int64_t batch_to = 100;
  std::optional<std::int64_t> batch_fail_after;
  int burst_n = 8;
  BurstMode burst_mode = BurstMode::kThreads;
  Duration wait = std::chrono::milliseconds(100);
  std::optional<std::size_t> insert_at;
  int reruns = 1;
  int confirm = 5;
  int trials = 100;
  int max_ops = 8;
  SourceMark mark;
};

struct ExploreSpec {
  Scenario scenario;   // steps = the fixed steps (may be empty)
  ExploreBlock explore;
  std::size_t insert_at() const {
    return explore.insert_at ? *explore.insert_at : scenario.steps.size();
  }
};

// The op kind names accepted under `explore.ops` (the registry's, defined in
// ops/builtin_ops.cpp beside it: the parser needs the names, not the specs).
const std::vector<std::string>& OpKindNames();

// The bind stage for explore files (model/binding.h): one spec per binding
// of its `for_each:` parameters to `target`, its steps, expectations and
// explore.actions naming actions literally. Never empty: a spec without
// parameters comes back as it is; when nothing fits, one spec whose
// scenario has `unmet` set (nothing to explore: not applicable).
std::vector<ExploreSpec> BindExploreSpec(const ExploreSpec& spec, const TargetDescription& target);

// Loads an explore file. Errors are kInvalidConfig with file:line:column.
Result<ExploreSpec> LoadExploreSpec(const std::string& path, const ScenarioVocabulary& vocabulary);
Result<ExploreSpec> ParseExploreSpec(const std::string& yaml, const std::string& file,
                                     const ScenarioVocabulary& vocabulary);

}  // namespace idemproof::explore
