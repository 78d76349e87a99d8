// The queue steps of a scenario run: `deliver` (at-least-once HTTP push to
// consumer instances, see deliverer.h) and `publish` (entries added to the
// target's Redis stream, see redis_publisher.h), recorded in the history in
// the shapes the applied_once oracle reads (model/history.h):
//  - f "deliver", process "deliverer-N" (one per copy of a round), invoke
//      {"request": {...as send}, "delivery": {"message", "round", "copy",
//       "consumer"}}, then ok / info / fail exactly as a send's, with
//      "delivery" repeated and "ack_lost": true when the deliverer dropped
//      the consumer's 2xx (so the message was redelivered);
//  - f "publish", process "publisher", invoke {"entry": {field: value},
//      "stream"}, then ok {"entry_id"} or fail {"error"};
//  - after a publish step, f "note" {"note": "broker settled" | "broker did
//      not settle", "group": {...}}: the publish waits until the consumer
//      group has delivered every entry and none is pending (acked), or
//      broker.settle passed.
// Events carry action = the message name, key = the concrete message id,
// key_name = its symbolic name, biz / biz_name as sends.
//
// A deliver's `variant:` changes its push (messages.NAME.variants, recorded
// as "variant" on its events), a publish's (or one a cause step left
// pending for its message) its entry's fields; `background: true` delivers
// or publishes on a thread of the context's, joined by `join`.
//
// Thread-safety: called from the interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

Status DeliverStep(StepContext& ctx, const Step& step, int index);
Status PublishStep(StepContext& ctx, const Step& step, int index);

}  // namespace idemproof::runtime
