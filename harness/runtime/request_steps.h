// The request steps of a scenario run: `send` (with `repeat`/`every`, or in
// the background until a `join`) and `burst` (n requests released together,
// by the last-byte sender or curl multi). Each request is an invoke event
// appended before it leaves, and its completion (model/history_events.h:
// f send | burst, process client-N | burst-N); every burst also leaves a
// note {"note": "burst spread", "burst": {...}}. While a fault routes the
// client (RequestRouting::Routed), every request takes a fresh connection.
// A request whose template needs a value no answer captured is not sent: a
// note says so (data, not an error).
//
// Thread-safety: interpreter's thread; the background sends they start run
// on threads the context joins.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

Status SendStep(StepContext& ctx, const Step& step, int index);
Status BurstStep(StepContext& ctx, const Step& step, int index);

}  // namespace idemproof::runtime
