// The scenario steps the op kinds (harness/explore/ops/) expand to, their
// options filled from the op's fields: the step kinds (harness/steps/) know
// nothing of explore, so the ops fill the steps they are made of.
//
// Thread-safety: stateless.
#pragma once

#include <string>

#include "explore/op_spec.h"
#include "model/scenario.h"
#include "model/step_options.h"

namespace idemproof::explore {

// A `kind` step (send or burst) of the op's action, key and biz, nothing
// else set (a fault's send; a burst's n and mode are its caller's).
inline Step RequestStep(const char* kind, const Op& op) {
  Step step = MakeStep(kind);
  SendOptions& o = step.Options<SendOptions>();
  o.action = op.action;
  o.key = op.key;
  o.biz = op.biz;
  return step;
}

// The send a kill_mid_work or a send_past_lease cuts: in the background,
// wherever the balancer places it.
inline Step BackgroundSendStep(const Op& op) {
  Step step = RequestStep("send", op);
  SendOptions& o = step.Options<SendOptions>();
  o.instance = kBalancedInstance;
  o.background = true;
  return step;
}

// A cause of `capability` as the op resolved it (op.variant / op.hook on
// op.action); `first_only`: the variant changes the next request only.
inline Step CauseStep(const Op& op, const std::string& capability, bool first_only) {
  Step step = MakeStep("cause");
  CauseOptions& o = step.Options<CauseOptions>();
  o.capability = capability;
  o.first_only = first_only;
  o.action = op.action;
  o.resolved = true;
  o.variant = op.variant;
  o.hook = op.hook;
  return step;
}

// A wait of `duration`, or `wait: past_window` (resolved from the target's
// window when it runs; duration 0 as the loader reads it).
inline Step WaitStep(Duration duration, bool past_window = false) {
  Step step = MakeStep("wait");
  WaitOptions& o = step.Options<WaitOptions>();
  o.past_window = past_window;
  o.duration = past_window ? Duration::zero() : duration;
  return step;
}

// A deliver of message op.action, id op.key, op.copies at once.
inline Step DeliverStep(const Op& op) {
  Step step = MakeStep("deliver");
  QueueOptions& o = step.Options<QueueOptions>();
  o.name = op.action;
  o.message_id = op.key;
  o.biz = op.biz;
  o.copies = op.copies;
  return step;
}

// A `kind` step (run_batch or rerun) of job op.name over rows [from, to).
inline Step BatchStep(const char* kind, const Op& op) {
  Step step = MakeStep(kind);
  BatchOptions& o = step.Options<BatchOptions>();
  o.job = op.name;
  o.from = op.from;
  o.to = op.to;
  o.fail_after = op.fail_after;
  return step;
}

}  // namespace idemproof::explore
