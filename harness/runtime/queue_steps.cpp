#include "runtime/queue_steps.h"

#include <thread>

#include "runtime/deliverer.h"
#include "runtime/http_client.h"
#include "runtime/redis_publisher.h"
#include "runtime/request_render.h"

namespace idemproof::runtime {

namespace {

nlohmann::json headers_json(const HttpHeaders& headers) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : headers) out[name] = value;
  return out;
}

HistoryEvent message_event(const Step& step, int index, const std::string& f, const std::string& process,
                           const std::string& id, QueueStepContext& ctx) {
  HistoryEvent e;
  e.process = process;
  e.f = f;
  e.action = step.name;
  e.key = id;
  e.key_name = step.message_id;
  e.biz = ctx.biz_for(step.biz);
  e.biz_name = step.biz;
  e.step = index;
  return e;
}

}  // namespace

Status DeliverStep(const TargetDescription& target, const Step& step, int index, QueueStepContext& ctx) {
  auto m = target.messages.find(step.name);
  if (m == target.messages.end() || !m->second.push)
    return Status(StatusCode::kUnsupported, "the target declares no push request for message " + step.name);
  const RequestTemplate& push = *m->second.push;
  const std::string id = ctx.message_id(step.message_id);
  const TemplateVars vars = ctx.vars_for(id, step.biz);
  const Duration timeout = step.timeout.value_or(target.request_timeout);

  DeliveryPlan plan;
  plan.copies = step.copies;
  plan.lose_ack = step.lose_ack;
  plan.max_rounds = step.max_attempts;
  plan.every = step.every;
  const std::vector<std::string> consumers = push.base.empty() ? step.consumers : std::vector<std::string>{push.base};
  for (const auto& consumer : consumers) {
    auto base = push.base.empty() ? ctx.instance_url(consumer) : ctx.service_url(push.base);
    if (!base.ok()) return base.status();
    auto request = RenderRequest(push, *base, vars, push.base.empty() ? target.headers : HeaderList{}, {}, timeout);
    if (!request.ok()) return request.status();
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
  observer.on_push = [&](const Push& p, const HttpRequest& r) {
    HistoryEvent e = message_event(step, index, "deliver", "deliverer-" + std::to_string(p.copy), id, ctx);
    e.value = {{"request", {{"method", r.method}, {"url", r.url}, {"headers", headers_json(r.headers)}, {"body", r.body}}},
               {"delivery", delivery_json(p)}};
    ctx.append(std::move(e), monotonic_ns());
  };
  observer.on_done = [&](const Push& p, const HttpExchange& x) {
    HistoryEvent e = message_event(step, index, "deliver", "deliverer-" + std::to_string(p.copy), id, ctx);
    e.type = x.outcome == HttpOutcome::kAnswered ? EventType::kOk
             : x.outcome == HttpOutcome::kNoAnswer ? EventType::kInfo
                                                    : EventType::kFail;
    e.value = {{"connection_reused", x.connection_reused}, {"delivery", delivery_json(p)}};
    if (x.outcome == HttpOutcome::kAnswered) {
      e.value["response"] = {{"status", x.status}, {"headers", headers_json(x.response_headers)}, {"body", x.response_body}};
    } else {
      e.value["error"] = x.error;
    }
    if (p.ack_lost) e.value["ack_lost"] = true;
    ctx.append(std::move(e), x.end_ns);
  };
  PushDeliverer deliverer(ctx.cancel);
  const DeliveryOutcome outcome = deliverer.Deliver(plan, observer);
  HistoryEvent note = message_event(step, index, "note", "harness", id, ctx);
  note.type = EventType::kInfo;
  note.value = {{"note", outcome.acked ? "delivered" : "not acknowledged"},
                {"rounds", outcome.rounds},
                {"pushes", outcome.pushes},
                {"acks_lost", outcome.acks_lost}};
  ctx.append(std::move(note), monotonic_ns());
  return Status::Ok();
}

Status PublishStep(const TargetDescription& target, const Step& step, int index, QueueStepContext& ctx) {
  auto m = target.messages.find(step.name);
  if (m == target.messages.end() || m->second.fields.empty() || !target.broker)
    return Status(StatusCode::kUnsupported, "the target declares no broker entry for message " + step.name);
  const BrokerDescription& broker = *target.broker;
  const std::string id = ctx.message_id(step.message_id);
  const TemplateVars vars = ctx.vars_for(id, step.biz);
  auto address = ExpandTemplate(broker.address, vars);
  if (!address.ok()) return address.status();
  auto stream = ExpandTemplate(broker.stream, vars);
  if (!stream.ok()) return stream.status();
  std::vector<std::pair<std::string, std::string>> fields;
  nlohmann::json entry = nlohmann::json::object();
  for (const auto& [name, value] : m->second.fields) {
    auto v = ExpandTemplate(value, vars);
    if (!v.ok()) return v.status();
    fields.emplace_back(name, *v);
    entry[name] = *v;
  }
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(step.timeout.value_or(target.request_timeout));

  std::string last_id;
  for (int copy = 0; copy < step.copies; ++copy) {
    HistoryEvent invoke = message_event(step, index, "publish", "publisher", id, ctx);
    invoke.value = {{"entry", entry}, {"stream", *stream}, {"copy", copy}};
    HistoryEvent done = invoke;
    ctx.append(std::move(invoke), monotonic_ns());
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
    ctx.append(std::move(done), monotonic_ns());
  }
  if (last_id.empty()) return Status::Ok();

  // The consumer works asynchronously: wait until its group has delivered
  // everything published and acknowledged it (the effect commits before the ack).
  const auto deadline = std::chrono::steady_clock::now() + broker.settle;
  StreamGroupState state;
  std::vector<std::string> pending_ids;
  std::string error;
  bool settled = false;
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
    if (settled || std::chrono::steady_clock::now() >= deadline) break;
    if (ctx.cancel != nullptr && ctx.cancel->load()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  HistoryEvent note = message_event(step, index, "note", "harness", id, ctx);
  note.type = EventType::kInfo;
  note.value = {{"note", settled ? "broker settled" : "broker did not settle"},
                {"group", {{"name", broker.group},
                           {"exists", state.exists},
                           {"pending", state.pending},
                           {"last_delivered_id", state.last_delivered_id}}},
                {"last_entry_id", last_id}};
  if (!pending_ids.empty()) note.value["group"]["pending_ids"] = pending_ids;
  if (!error.empty()) note.value["error"] = error;
  ctx.append(std::move(note), monotonic_ns());
  return Status::Ok();
}

}  // namespace idemproof::runtime
