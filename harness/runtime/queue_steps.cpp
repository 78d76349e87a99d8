#include "runtime/queue_steps.h"

#include <algorithm>
#include <thread>

#include "clients/deliverer.h"
#include "clients/http_client.h"
#include "clients/redis_publisher.h"
#include "model/request_variant.h"
#include "runtime/request_render.h"

namespace idemproof::runtime {

namespace {

RequestSubject MessageSubject(StepContext& ctx, const QueueOptions& step, const std::string& id) {
  return {step.name, id, step.message_id, ctx.recorder().naming().Biz(step.biz), step.biz, ""};
}

// One deliver step, in the foreground or on a background thread.
Status DeliverNow(StepContext& ctx, const QueueOptions& step, int index) {
  const TargetDescription& target = ctx.target();
  auto m = target.messages.find(step.name);
  if (m == target.messages.end() || !m->second.push)
    return Status(StatusCode::kUnsupported, "the target declares no push request for message " + step.name);
  RequestTemplate push = *m->second.push;
  if (!step.variant.empty()) {
    auto v = m->second.variants.find(step.variant);
    if (v == m->second.variants.end())
      return Status(StatusCode::kUnsupported, "message " + step.name + " declares no variant " + step.variant);
    auto changed = ApplyVariant(push, v->second);
    if (!changed.ok()) return changed.status();
    push = std::move(changed).value();
  }
  const std::string id = ctx.recorder().naming().Message(step.message_id);
  const TemplateVars vars = ctx.VarsFor(id, step.biz, index);
  const RequestSubject subject = MessageSubject(ctx, step, id);
  const Duration timeout = step.timeout.value_or(target.request_timeout);

  DeliveryPlan plan;
  plan.copies = step.copies;
  plan.lose_ack = step.lose_ack;
  plan.max_rounds = step.max_attempts;
  plan.every = step.every;
  const std::vector<std::string> consumers = push.base.empty() ? step.consumers : std::vector<std::string>{push.base};
  for (const auto& consumer : consumers) {
    auto base = push.base.empty() ? ctx.instances().Url(consumer) : ctx.ServiceUrl(push.base);
    if (!base.ok()) return base.status();
    auto request = RenderRequest(push, *base, vars, push.base.empty() ? target.headers : HeaderList{}, {}, timeout);
    if (!request.ok()) return request.status();
    request->tls = target.tls;
    if (push.base.empty()) request->http_version = target.http.version;  // to the target itself
    plan.consumers.push_back(std::move(request).value());
    plan.consumer_names.push_back(consumer);
  }

  auto delivery_json = [&](const Push& p) {
    return nlohmann::json{{"message", step.name},
                          {"round", p.round},
                          {"copy", p.copy},
                          {"consumer", plan.consumer_names[p.consumer]}};
  };
  DeliveryObserver observer;
  auto invoke_of = [&](const Push& p, const OutgoingRequest& r) {
    HistoryEvent e = DeliverInvoke(subject, p.copy, RecordOf(r), delivery_json(p), index);
    if (!step.variant.empty()) e.value["variant"] = step.variant;
    return e;
  };
  observer.on_push = [&](const Push& p, const OutgoingRequest& r) {
    ctx.recorder().Append(invoke_of(p, r), monotonic_ns());
  };
  observer.on_done = [&](const Push& p, const HttpExchange& x) {
    const HistoryEvent invoke = invoke_of(p, x.request);
    ctx.recorder().Append(DeliverCompletion(invoke, RecordOf(x), p.ack_lost), x.end_ns);
  };
  PushDeliverer deliverer(ctx.options().cancel);
  const DeliveryOutcome outcome = deliverer.Deliver(plan, observer);
  ctx.recorder().Append(MessageNote(subject, index,
                         {{"note", outcome.acked ? "delivered" : "not acknowledged"},
                          {"rounds", outcome.rounds},
                          {"pushes", outcome.pushes},
                          {"acks_lost", outcome.acks_lost}}),
             monotonic_ns());
  return Status::Ok();
}

}  // namespace

Status DeliverStep(StepContext& ctx, const Step& queue_step, int index) {
  const QueueOptions& step = queue_step.Options<QueueOptions>();
  if (!step.background) return DeliverNow(ctx, step, index);
  // In flight while later steps run (a kill cuts it); `join` waits for it.
  ctx.RunInBackground([&ctx, step, index] {
    Status s = DeliverNow(ctx, step, index);
    if (!s.ok()) ctx.recorder().Note(index, "background deliver failed: " + s.ToString());
  });
  return Status::Ok();
}

namespace {

// One publish step with `variant` ("" = none), in the foreground or on a
// background thread.
Status PublishNow(StepContext& ctx, const QueueOptions& step, int index, const std::string& variant) {
  const TargetDescription& target = ctx.target();
  auto m = target.messages.find(step.name);
  if (m == target.messages.end() || m->second.fields.empty() || !target.broker)
    return Status(StatusCode::kUnsupported, "the target declares no broker entry for message " + step.name);
  // The variant's fields replace same-named ones or are appended.
  HeaderList entry_fields = m->second.fields;
  if (!variant.empty()) {
    auto v = m->second.variants.find(variant);
    if (v == m->second.variants.end() || v->second.fields.empty())
      return Status(StatusCode::kUnsupported, "message " + step.name + " declares no variant " + variant +
                                                  " with broker fields");
    for (const auto& [name, value] : v->second.fields) {
      auto same = std::find_if(entry_fields.begin(), entry_fields.end(), [&](const auto& f) { return f.first == name; });
      if (same != entry_fields.end()) same->second = value;
      else entry_fields.emplace_back(name, value);
    }
  }
  const BrokerDescription& broker = *target.broker;
  const std::string id = ctx.recorder().naming().Message(step.message_id);
  const TemplateVars vars = ctx.VarsFor(id, step.biz, index);
  const RequestSubject subject = MessageSubject(ctx, step, id);
  auto address = ExpandTemplate(broker.address, vars);
  if (!address.ok()) return address.status();
  auto stream = ExpandTemplate(broker.stream, vars);
  if (!stream.ok()) return stream.status();
  std::vector<std::pair<std::string, std::string>> fields;
  nlohmann::json entry = nlohmann::json::object();
  for (const auto& [name, value] : entry_fields) {
    auto v = ExpandTemplate(value, vars);
    if (!v.ok()) return v.status();
    fields.emplace_back(name, *v);
    entry[name] = *v;
  }
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(step.timeout.value_or(target.request_timeout));

  std::string last_id;
  for (int copy = 0; copy < step.copies; ++copy) {
    HistoryEvent invoke = PublishInvoke(subject, entry, *stream, copy, index);
    if (!variant.empty()) invoke.value["variant"] = variant;
    HistoryEvent done = invoke;
    ctx.recorder().Append(std::move(invoke), monotonic_ns());
    // A fresh connection per entry: a broker that went away is data, not a tool error.
    auto publisher = RedisPublisher::Connect(*address, timeout);
    Result<std::string> added = publisher.ok() ? publisher->Add(*stream, fields) : Result<std::string>(publisher.status());
    if (added.ok()) {
      done.type = EventType::kOk;
      done.value["entry_id"] = *added;
      last_id = *added;
    } else {
      done.type = EventType::kFail;
      done.value["error"] = added.status().message();
    }
    ctx.recorder().Append(std::move(done), monotonic_ns());
  }
  if (last_id.empty()) return Status::Ok();

  // The consumer works asynchronously: wait until its group has delivered
  // everything published and acknowledged it (the effect commits before the ack).
  const auto deadline = std::chrono::steady_clock::now() + broker.settle;
  StreamGroupState state;
  std::vector<std::string> pending_ids;
  std::string error;
  bool settled = false;
  bool noted_pending = false;
  // The broker's side of the publish, as a note: the consumer group's state.
  auto broker_note = [&](const std::string& text) {
    HistoryEvent note = MessageNote(subject, index, nlohmann::json::object());
    note.value = {{"note", text},
                  {"group", {{"name", broker.group},
                             {"exists", state.exists},
                             {"pending", state.pending},
                             {"last_delivered_id", state.last_delivered_id}}},
                  {"last_entry_id", last_id}};
    if (!pending_ids.empty()) note.value["group"]["pending_ids"] = pending_ids;
    return note;
  };
  while (true) {
    auto publisher = RedisPublisher::Connect(*address, timeout);
    auto group = publisher.ok() ? publisher->Group(*stream, broker.group) : Result<StreamGroupState>(publisher.status());
    if (group.ok()) {
      state = *group;
      error.clear();
      settled = state.exists && state.pending == 0 && !state.last_delivered_id.empty() &&
                StreamIdNotAfter(last_id, state.last_delivered_id);
      // Entries still unacknowledged: if their consumer dies now, the broker
      // must deliver them again (applied_once counts that redelivery).
      pending_ids.clear();
      if (state.pending > 0) {
        auto ids = publisher->PendingIds(*stream, broker.group);
        if (ids.ok()) pending_ids = *ids;
      }
    } else {
      error = group.status().message();
    }
    // In the background, later steps may kill the consumer mid-work: say
    // at once which entries it holds unacknowledged (applied_once counts
    // their redelivery after a kill; the settle note comes only after it).
    if (step.background && !noted_pending && !settled && !pending_ids.empty()) {
      noted_pending = true;
      ctx.recorder().Append(broker_note("broker: entries delivered, not yet acknowledged"), monotonic_ns());
    }
    if (settled || std::chrono::steady_clock::now() >= deadline) break;
    if (ctx.Cancelled()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  HistoryEvent note = broker_note(settled ? "broker settled" : "broker did not settle");
  if (!error.empty()) note.value["error"] = error;
  ctx.recorder().Append(std::move(note), monotonic_ns());
  return Status::Ok();
}

}  // namespace

// A variant a cause step left pending for the message (die_before_ack) is
// taken now, on the interpreter's thread, by this publish alone.
Status PublishStep(StepContext& ctx, const Step& queue_step, int index) {
  const QueueOptions& step = queue_step.Options<QueueOptions>();
  std::string variant = step.variant;
  const std::string pending = ctx.VariantFor(step.name, "", "default", "", nullptr);
  if (variant.empty()) variant = pending;
  if (!step.background) return PublishNow(ctx, step, index, variant);
  // In flight while later steps run (a kill cuts the consumer's work); `join` waits for it.
  ctx.RunInBackground([&ctx, step, index, variant] {
    Status s = PublishNow(ctx, step, index, variant);
    if (!s.ok()) ctx.recorder().Note(index, "background publish failed: " + s.ToString());
  });
  return Status::Ok();
}

}  // namespace idemproof::runtime
