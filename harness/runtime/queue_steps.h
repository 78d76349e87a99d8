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
// Thread-safety: called from the interpreter's thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "model/history.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "model/template.h"

namespace idemproof::runtime {

// What the interpreter lends the queue steps.
struct QueueStepContext {
  // Appends an event at a steady-clock time (monotonic_ns()); returns its index.
  std::function<std::int64_t(HistoryEvent, std::int64_t)> append;
  // The template variables of a request with this key and symbolic biz.
  std::function<TemplateVars(const std::string& key, const std::string& biz_name)> vars_for;
  std::function<std::string(const std::string& biz_name)> biz_for;
  // The concrete message id of a symbolic one (unique per scenario run).
  std::function<std::string(const std::string& symbolic)> message_id;
  // The base URL of a target instance ("main" or spawned), or of a service
  // (`base:`); an error when there is none.
  std::function<Result<std::string>(const std::string& instance)> instance_url;
  std::function<Result<std::string>(const std::string& service)> service_url;
  const std::atomic<bool>* cancel = nullptr;
};

Status DeliverStep(const TargetDescription& target, const Step& step, int index, QueueStepContext& ctx);
Status PublishStep(const TargetDescription& target, const Step& step, int index, QueueStepContext& ctx);

}  // namespace idemproof::runtime
