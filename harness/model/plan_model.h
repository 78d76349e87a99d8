// PlanModel: what is known of a plan of steps so far, step by step: the
// state explore's preconditions (explore/op_spec.h) read. Each step kind says
// how a step changes it (StepKindSpec::Plan, model/step_kind.h); it lives in
// the model so that the step kinds (harness/steps/) need nothing of explore:
// explore depends on the steps, never the reverse.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

namespace idemproof {

struct PlanModel {
  bool up = true;
  bool managed = false;             // the target has a start command
  std::int64_t elapsed_ms = 0;      // estimated plan time so far
  std::int64_t budget_ms = -1;      // -1: no window declared
  std::set<std::pair<std::string, std::string>> used_keys;  // (key, biz) sent
  std::set<std::pair<std::string, std::string>> captured;   // (variable, biz) available
  // A hook fired and no request followed yet: the next request may fail on
  // purpose (e.g. a downstream 503), and a retryable failure releases its key.
  bool hook_pending = false;
  // Actions whose next request carries a pending variant (a cause op): that
  // request consumes it, and may then fail on purpose as after a hook.
  std::set<std::string> variant_pending;
  // (key, biz) first sent while a hook was pending: the key may have been
  // released, so another payload under it may rightly execute.
  std::set<std::pair<std::string, std::string>> maybe_released;
  bool paused = false;                 // the main instance is SIGSTOPped
  std::set<std::string> delivered;     // symbolic message ids pushed
  std::set<std::string> jobs_run;      // symbolic jobs run_batch started
  int background_sends = 0;            // send_background / send_past_lease ops so far
  // Jobs whose run a kill_mid_work cut off: a service that leases a job to
  // its run rightly refuses a rerun until that lease lapsed (wait_past_lease).
  std::set<std::string> jobs_cut;
  // wait_past_window ops so far (at most one: each costs the whole window).
  // It opens a new window, so the budget counts again from it.
  int past_window_waits = 0;
};

}  // namespace idemproof
