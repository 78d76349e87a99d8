// The queue steps: `deliver: MESSAGE` pushes a declared message to consumer
// instances over HTTP at least once (`copies`, `lose_ack`, `max_attempts`,
// `every`, `to:`); `publish: MESSAGE` adds `copies` entries to the target's
// broker (a Redis stream) and waits until consumed. They share the message
// options (message id, biz, copies, timeout, variant, background) and the
// message check: a deliver's variant changes the push, a publish's the
// entry's fields (messages.NAME.variants.V.fields).
//
// Execution: `deliver` (at-least-once HTTP push to consumer instances, see
// deliverer.h) and `publish` (entries added to the target's Redis stream,
// see redis_publisher.h), recorded in the history in
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
#include <algorithm>
#include <thread>

#include "clients/deliverer.h"
#include "clients/http_client.h"
#include "clients/redis_publisher.h"
#include "model/request_variant.h"
#include "runtime/request_render.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

// The runtime this file drives (its clients, the step context).
using namespace runtime;

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
    auto base = push.base.empty() ? ctx.env().instances().Url(consumer) : ctx.env().ServiceUrl(push.base);
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

Status Deliver(StepContext& ctx, const Step& queue_step, int index) {
  const QueueOptions& step = queue_step.Options<QueueOptions>();
  if (!step.background) return DeliverNow(ctx, step, index);
  // In flight while later steps run (a kill cuts it); `join` waits for it.
  ctx.RunInBackground([&ctx, step, index] {
    Status s = DeliverNow(ctx, step, index);
    if (!s.ok()) ctx.recorder().Note(index, "background deliver failed: " + s.ToString());
  });
  return Status::Ok();
}

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

// A variant a cause step left pending for the message (die_before_ack) is
// taken now, on the interpreter's thread, by this publish alone.
Status Publish(StepContext& ctx, const Step& queue_step, int index) {
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

class QueueStepKind final : public StepKind {
 public:
  explicit QueueStepKind(bool deliver) : deliver_(deliver) {}
  const char* name() const override { return deliver_ ? "deliver" : "publish"; }
  std::vector<std::string> options() const override {
    if (deliver_)
      return {"message", "biz",     "copies",     "lose_ack", "every", "max_attempts", "to",
              "timeout", "variant", "background", "after",    "label"};
    return {"message", "biz", "copies", "timeout", "variant", "background", "after", "label"};
  }
  StepOptions NewOptions() const override { return QueueOptions{}; }

  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    QueueOptions& st = step.Options<QueueOptions>();
    st.name = parser.MessageOrReference(parser.RequiredValue(value, key, what, "a message name"), what);
    yaml::Reader& r = parser.reader();
    if (node["variant"]) st.variant = parser.Symbol(node["variant"], what + ".variant");
    if (node["message"]) st.message_id = parser.Symbol(node["message"], what + ".message");
    auto count = [&](const char* k, long long lo, long long hi) {
      long long n = r.Int(node[k], what + "." + k);
      if (n < lo || n > hi)
        r.Fail(node[k], what + "." + k + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
      return static_cast<int>(n);
    };
    if (node["copies"]) st.copies = count("copies", 1, 100);
    if (node["lose_ack"]) st.lose_ack = count("lose_ack", 0, 100);
    if (node["max_attempts"]) st.max_attempts = count("max_attempts", 1, 1000);
    if (node["to"]) {
      st.consumers = r.StringList(node["to"], what + ".to");
      if (st.consumers.empty()) r.Fail(node["to"], what + ".to must name at least one instance");
      for (const auto& item : node["to"]) parser.KnownInstance(item, item.Scalar(), what + ".to");
    }
    if (node["biz"]) st.biz = parser.Symbol(node["biz"], what + ".biz");
    // (`every: retry_after` reads as its 1s stand-in here: a deliver honours no Retry-After.)
    bool retry_after = false;
    if (node["every"]) st.every = parser.Every(node["every"], what + ".every", &retry_after);
    if (node["background"]) st.background = r.Bool(node["background"], what + ".background");
    if (node["timeout"]) st.timeout = r.Timeout(node["timeout"], what + ".timeout");
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const TargetDescription& target = fit.target();
    const QueueOptions& s = step.Options<QueueOptions>();
    auto m = target.messages.find(s.name);
    if (m == target.messages.end()) {
      const std::string close = yaml::ClosestWord(s.name, NamesOf(target.messages));
      if (!close.empty()) {
        fit.AddError(Status::InvalidConfig("message '" + s.name + "' is not declared by target '" + target.name +
                                               "' (did you mean '" + close + "'?)",
                                           step.mark));
      } else {
        fit.AddNeed("message '" + s.name + "' (target 'messages')");
      }
    } else if (deliver_ && !m->second.push) {
      fit.AddNeed("a push request for message '" + s.name + "' (messages." + s.name + ".push)");
    } else if (deliver_ && !s.variant.empty() && !m->second.variants.count(s.variant)) {
      fit.AddNeed("a variant '" + s.variant + "' of message '" + s.name + "' (messages." + s.name + ".variants)");
    } else if (!deliver_ && m->second.fields.empty()) {
      fit.AddNeed("broker fields for message '" + s.name + "' (messages." + s.name + ".fields)");
    } else if (!deliver_ && !s.variant.empty() &&
               (!m->second.variants.count(s.variant) || m->second.variants.at(s.variant).fields.empty())) {
      fit.AddNeed("a variant '" + s.variant + "' of message '" + s.name + "' that changes its broker entry (messages." +
                  s.name + ".variants." + s.variant + ".fields)");
    }
    if (!deliver_ && !target.broker) fit.AddNeed("a broker (target 'broker') for step 'publish'");
    if (deliver_) {
      for (const auto& instance : s.consumers)
        if (!TargetInstanceIndex(instance) && !target.start)
          fit.AddNeed("a start command (target 'start') for consumer instance '" + instance + "'");
    }
  }

  // Unbound (no message fits): a publish names what else it lacks.
  std::string UnprovidedByAny(const Step&, const TargetDescription& target) const override {
    return !deliver_ && !target.broker ? "a broker (target 'broker') for step 'publish'" : "";
  }

  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<QueueOptions>().name};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    QueueOptions& o = step.Options<QueueOptions>();
    o.name = BoundName(o.name, binding);
  }

  Status Write(const Step& step, YAML::Emitter& out) const override {
    const QueueOptions& s = step.Options<QueueOptions>();
    if (!deliver_)
      return Status(StatusCode::kUnsupported, std::string("cannot write step kind ") + name() + " as YAML yet");
    out << YAML::Key << name() << YAML::Value << s.name;
    out << YAML::Key << "message" << YAML::Value << s.message_id;
    out << YAML::Key << "biz" << YAML::Value << s.biz;
    if (s.copies != 1) out << YAML::Key << "copies" << YAML::Value << s.copies;
    if (s.lose_ack != 0) out << YAML::Key << "lose_ack" << YAML::Value << s.lose_ack;
    if (s.every.count() > 0) out << YAML::Key << "every" << YAML::Value << FormatDuration(s.every);
    if (s.max_attempts != 10) out << YAML::Key << "max_attempts" << YAML::Value << s.max_attempts;
    if (s.consumers != std::vector<std::string>{"main"}) out << YAML::Key << "to" << YAML::Value << YAML::Flow << s.consumers;
    if (s.timeout) out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*s.timeout);
    if (!s.variant.empty()) out << YAML::Key << "variant" << YAML::Value << s.variant;
    if (s.background) out << YAML::Key << "background" << YAML::Value << true;
    return Status::Ok();
  }

  void Plan(const Step& step, PlanModel& m, const ProvidedVariables&) const override {
    if (deliver_) {
      m.delivered.insert(step.Options<QueueOptions>().message_id);
      AddPlanTime(m, 50);
    } else {
      AddPlanTime(m, 10);
    }
  }

  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return deliver_ ? Deliver(ctx, step, index) : Publish(ctx, step, index);
  }

 private:
  const bool deliver_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeDeliverStep() { return std::make_unique<QueueStepKind>(true); }
std::unique_ptr<StepKindSpec> MakePublishStep() { return std::make_unique<QueueStepKind>(false); }

}  // namespace idemproof::steps
