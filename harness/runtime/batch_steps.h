// The batch steps of a scenario run: `run_batch`, `rerun` (`repeat` times)
// and `clean_run` send the target's batch.run (or batch.failing_run when the
// step has `fail_after`) with {{job}}, {{from}}, {{to}}, {{fail_after}} and
// the step's biz to the target's own URL, and after every run read the job's
// result (and markers): f batch and f batch_result events
// (model/history_events.h, model/batch_history.h). A `variant:` changes the
// run request (batch.variants, ApplyVariant); `background: true` runs it on
// a thread of the context's (joined by `join`), and a background run that
// got no answer (a kill cut it) reads no result.
//
// Thread-safety: called from the interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// Which batch step: run_batch, rerun (`repeat` times), clean_run.
enum class BatchRole { kRun, kRerun, kClean };
// kUnsupported: the target declares no batch section (or no failing_run for
// `fail_after`).
Status BatchStep(StepContext& ctx, const Step& step, int index, BatchRole role);

}  // namespace idemproof::runtime
