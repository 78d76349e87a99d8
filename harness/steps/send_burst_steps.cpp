// The request steps: `send: ACTION` (one request, or `repeat` sequential
// ones every `every`, `until: recovered`, in the background until a `join`,
// `then: kill`) and `burst: ACTION` (n requests released together, by the
// last-byte sender or threads). They share the request's options (key, biz,
// payload, caller, timeout, instance) and their check against the target.
//
// Execution: each request is an invoke event appended before it leaves, and
// its completion (model/history_events.h: f send | burst, process client-N |
// burst-N); every burst also leaves a note {"note": "burst spread", "burst":
// {...}}. While a fault routes the client (RequestRouting::Routed), every
// request takes a fresh connection. A request whose template needs a value no
// answer captured is not sent: a note says so (data, not an error). Sends run
// on the interpreter's thread; the background ones on threads the context
// joins.
#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "clients/h2_burst.h"
#include "model/capabilities.h"
#include "model/key_forms.h"
#include "model/request_variant.h"
#include "runtime/process_steps.h"
#include "runtime/request_forms.h"
#include "runtime/request_render.h"
#include "runtime/run_types.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

// The runtime this file drives (its clients, the step context).
using namespace runtime;


RequestSubject SubjectOf(StepContext& ctx, const SendOptions& step, const std::string& key, PayloadVariant payload) {
  return {step.action, key, step.key, ctx.recorder().naming().Biz(step.biz), step.biz, PayloadName(payload)};
}

// The target caller a step's `caller: first|second` names; nullptr for none
// (or one the target lacks: the bind stage made that scenario not applicable).
const CallerDescription* CallerFor(const TargetDescription& target, const SendOptions& step) {
  if (step.caller.empty()) return nullptr;
  const std::size_t i = CallerIndex(step.caller);
  return i < target.callers.size() ? &target.callers[i] : nullptr;
}

// The target's headers, with the step's caller's over those of the same name.
HeaderList HeadersFor(const TargetDescription& target, const SendOptions& step) {
  const CallerDescription* caller = CallerFor(target, step);
  return caller == nullptr ? target.headers : target.HeadersAs(caller->name);
}

// The request variant a request of `step` under concrete `key` carries: a
// cause step's pending one, or the one its attempt already carries (the
// same action, key, payload class and caller).
std::string VariantOf(StepContext& ctx, const SendOptions& step, const std::string& key, PayloadVariant payload,
                      bool* repeated) {
  const CallerDescription* caller = CallerFor(ctx.target(), step);
  return ctx.VariantFor(step.action, key, payload == PayloadVariant::kOther ? "other" : "default",
                        caller == nullptr ? "" : caller->name, repeated);
}

// The length of the step's keys: the target's declared longest for
// `key_form: max_length`, else 0 (the plain key).
std::size_t KeyLength(StepContext& ctx, const SendOptions& step) {
  if (step.key_malformed == "over_max_length") return ctx.target().idempotency.key_max_length + 1;
  return step.key_at_max_length ? ctx.target().idempotency.key_max_length : 0;
}

// One request of an action, and what a payload form rewrote in it; or,
// with `unsent` set, why it is not sent (a captured variable whose answer
// never came, a payload form with nothing it may change): noted, not an error.
struct RenderedAction {
  OutgoingRequest request;
  std::vector<std::string> rewrites;
  std::string unsent;
};

// The invoke of a rendered request, with the form's rewrites.
HistoryEvent InvokeOf(StepContext& ctx, const std::string& process, const char* f, const SendOptions& step,
                      const std::string& key, PayloadVariant payload, const RenderedAction& r, int index,
                      const std::string& variant) {
  HistoryEvent invoke =
      RequestInvoke(process, f, SubjectOf(ctx, step, key, payload), RecordOf(r.request), index, variant);
  if (payload != PayloadVariant::kDefault && payload != PayloadVariant::kOther) invoke.value["rewrites"] = r.rewrites;
  if (const CallerDescription* c = CallerFor(ctx.target(), step)) invoke.value["caller"] = c->name;
  return invoke;
}

// Whether `url` is the harness's own chaos proxy in front of main (an armed
// proxy fault), which speaks HTTP/1.1 whatever the target's `http:`.
bool ThroughHarnessProxy(StepContext& ctx, const std::string& url) {
  return ctx.routing().Routed() && url == ctx.routing().ClientBaseUrl();
}

// `variant`: the action's request variant to apply ("" = none); `payload`:
// the body template (other) or the form of the rendered default (payload.h).
Result<RenderedAction> RenderAction(StepContext& ctx, const ActionDescription& action, const std::string& key,
                                    const SendOptions& step, int index, const std::string& base, const std::string& variant,
                                    PayloadVariant payload) {
  const TargetDescription& target = ctx.target();
  HeaderList extra;
  // A malformed key (key_form: empty...) is sent even when it is empty.
  const bool sends_key = !key.empty() || !step.key_malformed.empty();
  if (sends_key && !target.idempotency.key_header.empty()) extra.emplace_back(target.idempotency.key_header, key);
  TemplateVars vars = ctx.VarsFor(key, step.biz, index);
  const Duration deadline = step.timeout.value_or(target.request_timeout);
  const std::string url = base.empty() ? ctx.routing().ClientBaseUrl() : base;
  RequestTemplate request = action.request;
  if (payload == PayloadVariant::kOther) {
    if (!action.other_payload)
      return Status(StatusCode::kUnsupported, "action " + action.name + " declares no other_payload");
    request.json = action.other_payload->json;
    request.body = action.other_payload->body;
    request.content_type = action.other_payload->content_type;
  }
  if (!variant.empty()) {
    auto v = action.variants.find(variant);
    if (v == action.variants.end())
      return Status(StatusCode::kUnsupported, "action " + action.name + " declares no variant " + variant);
    auto applied = ApplyVariant(request, v->second);
    if (!applied.ok())
      return Status(applied.status().code(), "action " + action.name + ": " + applied.status().message());
    request = std::move(applied).value();
  }
  // payload large starts from the action's own `large` variant, when it declares one.
  if (payload == PayloadVariant::kLarge && variant.empty()) {
    auto v = action.variants.find(kLargeVariant);
    if (v != action.variants.end()) {
      auto applied = ApplyVariant(request, v->second);
      if (!applied.ok())
        return Status(applied.status().code(), "action " + action.name + ": " + applied.status().message());
      request = std::move(applied).value();
    }
  }
  // A route spelling: judged only where the target declares how it treats
  // that spelling; every request of the family carries path_equivalence.query.
  if (IsSpellingForm(payload)) {
    const PathEquivalence& spellings = target.idempotency.path_equivalence;
    const std::string form = PayloadName(payload);
    if (payload != PayloadVariant::kSpelling && spellings.For(form) == PathEquivalence::Spelling::kUndeclared)
      return RenderedAction{{}, {}, "idempotency.path_equivalence." + PathEquivalence::KeyFor(form) +
                                        " is not declared: this spelling is not judged"};
    if (!spellings.query.empty()) {
      RequestVariant added;
      added.name = "path_equivalence.query";
      added.query = spellings.query;
      auto applied = ApplyVariant(request, added);
      if (!applied.ok())
        return Status(applied.status().code(), "action " + action.name + ": " + applied.status().message());
      request = std::move(applied).value();
    }
  }
  // Without a key, a body member or header that is just {{key}} is left out.
  if (!sends_key) request = WithoutKeyPlaceholders(request);
  auto rendered = Capped(RenderRequest(request, url, vars, HeadersFor(target, step), extra, deadline), target,
                         ctx.options().kept, ThroughHarnessProxy(ctx, url) ? Hop::kHarnessProxyOrService : Hop::kTarget);
  if (!rendered.ok()) {
    if (ctx.IsMissingCapture(rendered.status())) return RenderedAction{{}, {}, rendered.status().message()};
    return rendered.status();
  }
  RenderedAction out{std::move(rendered).value(), {}, {}};
  if (payload != PayloadVariant::kDefault && payload != PayloadVariant::kOther) {
    const std::string fresh = ctx.VarsFor(key, step.biz, index).at("uuid");
    auto rewrites = ApplyPayloadForm(out.request.message, payload, action.fingerprint_ignores, key, fresh);
    if (!rewrites.ok()) {
      out.unsent = std::string("payload ") + PayloadName(payload) + ": " + rewrites.status().message();
      return out;
    }
    out.rewrites = std::move(rewrites).value();
  }
  return out;
}

// One request of a send step, on `client`, recorded as `process`; the
// answer's status into `*status` (0 = no answer or not sent), the instance
// it went to into `*instance`.
Status SendOne(StepContext& ctx, HttpClient& client, const std::string& process, const SendOptions& step, int index,
               int* status = nullptr, std::string* instance = nullptr, std::string* retry_after = nullptr) {
  if (status != nullptr) *status = 0;
  if (retry_after != nullptr) retry_after->clear();
  const ActionDescription* action = ctx.target().FindAction(step.action);
  if (action == nullptr) return Status(StatusCode::kUnsupported, "unknown action " + step.action);
  const std::string key = ctx.recorder().KeyFor(step.key, KeyLength(ctx, step));
  auto placed = ctx.routing().Place(step.instance, key);
  if (!placed.ok()) return placed.status();
  if (instance != nullptr) *instance = placed->instance;
  // A cause step's variant goes to this action's next request and stays
  // with its attempt: every retry of the key repeats it.
  bool repeated = false;
  const std::string variant = VariantOf(ctx, step, key, step.payload, &repeated);
  // The key as sent: the named one, or its malformed form (the history keeps the named one).
  const std::string sent_key = step.key_malformed.empty() ? key : MalformedKey(step.key_malformed, key);
  auto rendered = RenderAction(ctx, *action, sent_key, step, index, placed->url, variant, step.payload);
  if (!rendered.ok()) return rendered.status();
  if (!rendered->unsent.empty()) {
    ctx.recorder().Note(index, "not sent: " + rendered->unsent);
    return Status::Ok();
  }
  const OutgoingRequest* request = &rendered->request;
  ctx.MarkSent(step.action, step.biz);
  HistoryEvent invoke = InvokeOf(ctx, process, event_f::kSend, step, key, step.payload, *rendered, index, variant);
  if (repeated) invoke.value["variant_repeated"] = true;
  if (!step.key_malformed.empty()) invoke.value["key_form"] = step.key_malformed;
  if (ctx.routing().RecordsInstances()) invoke.value["instance"] = placed->instance;
  if (step.every_retry_after) invoke.value["honours_retry_after"] = true;  // the retry_after oracle's progress check
  // The invoke goes in before the request leaves, so concurrent sends
  // interleave in the history as they did on the wire.
  ctx.recorder().Append(invoke, monotonic_ns());
  HttpExchange e;
  if (ctx.routing().Routed()) {
    // A fault may close the connection before any answer byte; on a reused
    // connection libcurl would then resend silently (an unasked duplicate).
    HttpClient fresh(ctx.options().cancel);
    e = fresh.send(*request);
  } else {
    e = client.send(*request);
  }
  ctx.recorder().Append(RequestCompletion(invoke, RecordOf(e)), e.end_ns);
  ctx.Capture(*action, step.biz, e);
  if (status != nullptr && e.outcome == HttpOutcome::kAnswered) *status = e.status;
  if (retry_after != nullptr && e.outcome == HttpOutcome::kAnswered)
    *retry_after = e.response_header("Retry-After").value_or("");
  return Status::Ok();
}

// The pause before a repeat: `every`, or with `every: retry_after` the last
// answer's Retry-After in delay-seconds (`every` when it gave none; at least
// 10ms, so `0` is a tight loop, not a busy one), never past the step's
// time limit (KeepSending's: the recovery bound plus one pause).
Duration PauseBefore(const StepContext& ctx, const SendOptions& step, const std::string& retry_after,
                     std::int64_t start_ns) {
  if (!step.every_retry_after) return step.every;
  Duration pause = step.every;
  std::string v = retry_after;
  while (!v.empty() && v.back() == ' ') v.pop_back();
  while (!v.empty() && v.front() == ' ') v.erase(v.begin());
  if (!v.empty() && v.size() <= 6 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    pause = std::max<Duration>(std::chrono::seconds(std::stoll(v)), std::chrono::milliseconds(10));
  const Duration left = ctx.target().idempotency.RecoveryBound() + step.every -
                        std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(monotonic_ns() - start_ns));
  return std::max(Duration::zero(), std::min(pause, left));
}

// `until: recovered`: whether send number `r` (0-based) still goes out.
// Bounded in count (repeat + bound/every + 1, at most 10000) and in time
// (the recovery bound plus one pause, since `start`).
bool KeepSending(const StepContext& ctx, const SendOptions& step, int r, int last_status, std::int64_t start_ns) {
  if (r < step.repeat) return true;
  if (!step.until_recovered || !ctx.target().idempotency.IsInProgress(last_status)) return false;
  const Duration bound = ctx.target().idempotency.RecoveryBound();
  const std::int64_t limit_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(bound + step.every).count();
  const std::int64_t cap = step.repeat + bound / step.every + 1;
  return r < std::min<std::int64_t>(cap, 10000) && monotonic_ns() - start_ns <= limit_ns;
}

// The spread the burst achieved: harness side as the sender measured it,
// target side from the declared arrival header of the answers.
// `sender`: the sender's own facts (mode, single-packet segments), merged in.
void NoteBurstSpread(StepContext& ctx, const SendOptions& step, int index, const std::vector<HttpExchange>& exchanges,
                     std::optional<std::int64_t> harness_ns, const nlohmann::json& sender = nlohmann::json::object()) {
  const std::string& arrival_header = ctx.target().arrival_header;
  std::vector<std::int64_t> arrivals;
  if (!arrival_header.empty()) {
    for (const auto& e : exchanges) {
      if (e.outcome != HttpOutcome::kAnswered) continue;
      auto v = e.response_header(arrival_header);
      if (!v) continue;
      try {
        std::size_t used = 0;
        const long long t = std::stoll(*v, &used);
        if (used == v->size()) arrivals.push_back(t);
      } catch (const std::exception&) {
        // not a number: the target's data, not ours to fix
      }
    }
  }
  nlohmann::json burst = {{"step", index},
                          {"n", step.n},
                          {"mode", step.mode == BurstMode::kLastByte ? "last_byte" : "threads"},
                          {"harness_spread_us", nullptr},
                          {"target_spread_us", nullptr},
                          {"arrivals_reported", arrivals.size()}};
  if (harness_ns) burst["harness_spread_us"] = static_cast<double>(*harness_ns) / 1000.0;
  if (arrivals.size() >= 2) {
    auto [lo, hi] = std::minmax_element(arrivals.begin(), arrivals.end());
    burst["target_spread_us"] = static_cast<double>(*hi - *lo) / 1000.0;
  }
  if (!arrival_header.empty()) burst["arrival_header"] = arrival_header;
  burst.update(sender);
  ctx.recorder().Append(NoteWith(index, {{"note", "burst spread"}, {"burst", burst}}), monotonic_ns());
}

// One send step: its requests in the foreground, or on a background thread.
Status SendNow(StepContext& ctx, const Step& send_step, int index) {
  const SendOptions& step = send_step.Options<SendOptions>();
  if (step.background) {
    const std::string process = event_process::Client(ctx.NextBackgroundProcess());
    ctx.RunInBackground([&ctx, step, index, process] {
      HttpClient client(ctx.options().cancel);
      const std::int64_t start_ns = monotonic_ns();
      int last = 0;
      std::string retry_after;
      for (int r = 0; KeepSending(ctx, step, r, last, start_ns); ++r) {
        if (r > 0 && !ctx.Sleep(PauseBefore(ctx, step, retry_after, start_ns))) break;
        Status s = SendOne(ctx, client, process, step, index, &last, nullptr, &retry_after);
        if (!s.ok()) {
          ctx.recorder().Note(index, "background send failed: " + s.ToString());
          break;
        }
      }
    });
    return Status::Ok();
  }
  const std::int64_t start_ns = monotonic_ns();
  int last = 0;
  std::string answered_by = "main";
  std::string retry_after;
  for (int r = 0; KeepSending(ctx, step, r, last, start_ns); ++r) {
    if (r > 0 && !ctx.Sleep(PauseBefore(ctx, step, retry_after, start_ns))) return Status::Ok();
    if (ctx.Cancelled()) return Status::Ok();
    Status s = SendOne(ctx, ctx.client(), event_process::Client(0), step, index, &last, &answered_by, &retry_after);
    if (!s.ok()) return s;
  }
  if (step.kill_after_answer) {
    // At once: whatever the target does after answering (storing the answer
    // late, acknowledging) is cut off, as a crash would cut it. The instance
    // killed is the one the request went to.
    if (last == 0) ctx.recorder().Note(index, "then: kill without an answer to the request (killed all the same)");
    return ControlTarget(ctx.env(), ctx.recorder(), ProcessOp::kKill, index, answered_by);
  }
  return Status::Ok();
}

// One burst step: n requests rendered, then released together.
Status BurstNow(StepContext& ctx, const Step& burst_step, int index) {
  const SendOptions& step = burst_step.Options<SendOptions>();
  const ActionDescription* action = ctx.target().FindAction(step.action);
  if (action == nullptr) return Status(StatusCode::kUnsupported, "unknown action " + step.action);
  // `http: 2`: a last-byte burst is a single-packet group on one HTTP/2
  // connection (h2c, or TLS with the requests' tls:, as rendered). Not
  // through the harness's own proxy (an armed fault): it speaks HTTP/1.1.
  const bool single_packet = step.mode == BurstMode::kLastByte && ctx.target().http.version == 2 &&
                             !ctx.routing().Routed();
  BurstSender* sender = step.mode == BurstMode::kLastByte ? ctx.options().last_byte_burst : ctx.threads_burst();
  if (sender == nullptr && !single_packet)
    return Status(StatusCode::kUnsupported, "no sender for a last-byte burst in this build");
  std::vector<OutgoingRequest> requests;
  std::vector<HistoryEvent> invokes;
  std::vector<std::string> keys;
  for (int i = 0; i < step.n; ++i) keys.push_back(ctx.recorder().KeyFor(step.key, KeyLength(ctx, step)));
  auto placed = ctx.routing().PlaceBurst(step.instance, keys);
  if (!placed.ok()) return placed.status();
  for (int i = 0; i < step.n; ++i) {
    const std::string& key = keys[static_cast<std::size_t>(i)];
    const RequestRouting::Placement& place = (*placed)[static_cast<std::size_t>(i)];
    const PayloadVariant payload = step.PayloadOf(i);
    // A pending variant goes to the first request and stays with its
    // attempt: the burst's other requests of that key repeat it.
    bool repeated = false;
    const std::string v = VariantOf(ctx, step, key, payload, &repeated);
    auto rendered = RenderAction(ctx, *action, key, step, index, place.url, v, payload);
    if (!rendered.ok()) return rendered.status();
    if (!rendered->unsent.empty()) {
      ctx.recorder().Note(index, "burst not sent: " + rendered->unsent);
      return Status::Ok();
    }
    invokes.push_back(InvokeOf(ctx, event_process::Burst(i), event_f::kBurst, step, key, payload, *rendered, index, v));
    if (repeated) invokes.back().value["variant_repeated"] = true;
    if (ctx.routing().RecordsInstances()) invokes.back().value["instance"] = place.instance;
    requests.push_back(std::move(rendered->request));
  }
  ctx.MarkSent(step.action, step.biz);
  const std::int64_t released = monotonic_ns();
  for (const auto& invoke : invokes) ctx.recorder().Append(invoke, released);
  std::vector<HttpExchange> exchanges;
  std::optional<std::int64_t> harness_ns;
  nlohmann::json facts = nlohmann::json::object();
  std::vector<nlohmann::json> h2_of;  // single-packet: per request, in request order
  if (single_packet) {
    H2BurstResult h2 = FireH2Burst(requests, H2BurstOptions{}, ctx.options().cancel);
    // Per request: its stream and the segment of the release its final frame went in.
    for (const H2StreamPlacement& p : h2.streams)
      h2_of.push_back({{"stream_id", p.stream_id}, {"segment", p.segment}});
    facts = {{"mode", "single_packet_h2"}, {"release_bytes", h2.release_bytes},
             {"release_writes", h2.release_writes}, {"segments", h2.segments}, {"mss", h2.mss}};
    if (h2.tls_records > 0) facts["tls_records"] = h2.tls_records;  // https://: the records sealed ahead
    exchanges = std::move(h2.exchanges);
    harness_ns = h2.release_ns;
  } else {
    exchanges = sender->Send(requests);
    harness_ns = sender->LastHarnessSpreadNs();
  }
  std::vector<std::size_t> order(exchanges.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return exchanges[a].end_ns < exchanges[b].end_ns; });
  for (std::size_t i : order) {
    HistoryEvent done = RequestCompletion(invokes[i], RecordOf(exchanges[i]));
    if (i < h2_of.size()) done.value["h2"] = h2_of[i];
    ctx.recorder().Append(done, exchanges[i].end_ns);
    ctx.Capture(*action, step.biz, exchanges[i]);
  }
  NoteBurstSpread(ctx, step, index, exchanges, harness_ns, facts);
  return Status::Ok();
}


// Whether a json body holds an array somewhere (payload large grows it).
bool HasArray(const std::optional<nlohmann::json>& json) {
  if (!json) return false;
  if (json->is_array()) return true;
  if (!json->is_object()) return false;
  for (const auto& [k, v] : json->items())
    if (HasArray(v)) return true;
  return false;
}

class RequestStepKind : public StepKind {
 public:
  bool sends_request() const override { return true; }

  StepOptions NewOptions() const override { return SendOptions{}; }

  // The request's options (CheckKeys let through only this kind's).
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    yaml::Reader& r = parser.reader();
    SendOptions& o = step.Options<SendOptions>();
    o.action = parser.NameOrReference(parser.RequiredValue(value, key, what, "an action name"), what, false);
    if (node["key"]) o.key = parser.Symbol(node["key"], what + ".key");
    if (node["biz"]) o.biz = parser.Symbol(node["biz"], what + ".biz");
    if (node["key_form"]) {
      const std::string form = r.String(node["key_form"], what + ".key_form");
      std::vector<std::string> forms = {"plain", "max_length"};
      if (!takes_payload_list()) forms.insert(forms.end(), MalformedKeyForms().begin(), MalformedKeyForms().end());
      if (std::find(forms.begin(), forms.end(), form) == forms.end()) {
        std::string listed;
        for (const auto& f : forms) listed += (listed.empty() ? "" : ", ") + f;
        r.Fail(node["key_form"], what + ".key_form must be one of " + listed + ", found '" + form + "'" +
                                     yaml::DidYouMean(form, forms));
      }
      if (form != "plain" && (o.key == kNoKey || o.key == kFreshKey))
        r.Fail(node["key_form"], what + ".key_form: " + form + " needs a named key (k1, k2...), not '" + o.key + "'");
      o.key_at_max_length = form == "max_length";
      if (IsMalformedKeyForm(form)) o.key_malformed = form;
    }
    if (node["payload"]) Payloads(parser, node["payload"], what + ".payload", o);
    if (node["caller"]) {
      o.caller = r.String(node["caller"], what + ".caller");
      if (o.caller != "first" && o.caller != "second")
        r.Fail(node["caller"], what + ".caller must be first or second (the target's declared callers), found '" +
                                   o.caller + "'" + yaml::DidYouMean(o.caller, {"first", "second"}));
    }
    if (node["repeat"]) o.repeat = parser.Repeat(node["repeat"], what + ".repeat");
    if (node["every"]) o.every = parser.Every(node["every"], what + ".every", &o.every_retry_after);
    if (node["until"]) {
      const std::string u = r.String(node["until"], what + ".until");
      if (u != "recovered") r.Fail(node["until"], what + ".until must be 'recovered', found '" + u + "'");
      if (o.every <= Duration::zero())
        r.Fail(node["until"], what + ".until needs a positive 'every' (the pause between retries)");
      o.until_recovered = true;
    }
    if (node["background"]) o.background = r.Bool(node["background"], what + ".background");
    if (node["then"]) {
      const std::string then = r.String(node["then"], what + ".then");
      if (then != "kill") r.Fail(node["then"], what + ".then must be 'kill', found '" + then + "'");
      if (node["repeat"] || node["until"] || node["background"])
        r.Fail(node["then"], what + ".then: kill goes with one foreground request (no repeat, until or background)");
      o.kill_after_answer = true;
    }
    if (node["timeout"]) o.timeout = r.Timeout(node["timeout"], what + ".timeout");
    if (node["instance"]) o.instance = parser.Instance(node["instance"], what, true);
    if (node["n"]) {
      long long n = r.Int(node["n"], what + ".n");
      if (n < 2 || n > 1000) r.Fail(node["n"], what + ".n must be between 2 and 1000");
      o.n = static_cast<int>(n);
    }
    if (node["mode"]) {
      std::string m = r.String(node["mode"], what + ".mode");
      if (m == "last_byte") o.mode = BurstMode::kLastByte;
      else if (m == "threads") o.mode = BurstMode::kThreads;
      else r.Fail(node["mode"], what + ".mode must be 'last_byte' or 'threads', found '" + m + "'" +
                                    yaml::DidYouMean(m, {"last_byte", "threads"}));
    }
  }

  // `payload: NAME` (model/payload.h); a burst may list several, cycled
  // over its requests.
  void Payloads(StepParser& parser, const YAML::Node& node, const std::string& what, SendOptions& o) const {
    yaml::Reader& r = parser.reader();
    auto one = [&](const YAML::Node& item, const std::string& item_what) {
      const std::string name = r.String(item, item_what);
      auto p = ParsePayloadName(name);
      if (!p) {
        std::string known;
        for (const auto& n : PayloadNames()) known += (known.empty() ? "" : ", ") + n;
        r.Fail(item, item_what + ": unknown payload '" + name + "'" + yaml::DidYouMean(name, PayloadNames()) +
                         "; known: " + known);
        return PayloadVariant::kDefault;
      }
      return *p;
    };
    if (!node.IsSequence()) {
      o.payload = one(node, what);
      return;
    }
    if (!takes_payload_list()) {
      r.Fail(node, what + ": only a burst takes a list of payloads");
      return;
    }
    if (node.size() == 0) r.Fail(node, what + " must not be an empty list");
    for (std::size_t i = 0; i < node.size(); ++i)
      o.payloads.push_back(one(node[i], what + "[" + std::to_string(i) + "]"));
    if (!o.payloads.empty()) o.payload = o.payloads.front();
  }
  // A `payload:` may be a list, cycled over its requests (burst).
  virtual bool takes_payload_list() const { return false; }

  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<SendOptions>().action};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    SendOptions& o = step.Options<SendOptions>();
    o.action = BoundName(o.action, binding);
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const TargetDescription& target = fit.target();
    const SendOptions& s = step.Options<SendOptions>();
    const ActionDescription* a = target.FindAction(s.action);
    // The IETF draft sets no longest key: one past it is judged only where the target declares one.
    if (s.key_malformed == "over_max_length" && !target.idempotency.key_max_length_declared)
      fit.AddNeed("a declared longest key (target 'idempotency.key_max_length') for key_form: over_max_length");
    // A malformed key is judged only where the target declares its answer to one.
    if (!s.key_malformed.empty() && !target.idempotency.invalid_key_declared)
      fit.AddNeed("a declared answer to a malformed key (target 'idempotency.invalid_key')");  // one cause for every form
    // The Structured Field syntax is the header's: a key in the body is JSON text.
    if (!s.key_malformed.empty() && MalformedKeyOracle(s.key_malformed) == "key_syntax_rejected" &&
        target.idempotency.key_header.empty())
      fit.AddNeed("a key header (target 'idempotency.key_header') for key_form: " + s.key_malformed);
    if (a == nullptr) {
      // As for hooks: a near miss is a typo; an action the target lacks
      // entirely (a shop without payments) is a capability it lacks.
      fit.CheckName(s.action, step.mark, "action", NamesOf(target.actions));
    } else {
      for (PayloadVariant p : s.AllPayloads()) {
        if (p == PayloadVariant::kOther && !a->other_payload) fit.AddNeed("other_payload for action '" + s.action + "'");
        if (NeedsJsonBody(p) && !a->request.json)
          fit.AddNeed("a JSON body for action '" + s.action + "' (payload " + PayloadName(p) + ")");
        if (p == PayloadVariant::kLarge && !a->variants.count(kLargeVariant) && !HasArray(a->request.json))
          fit.AddNeed("a JSON array in the body, or a 'large' variant, for action '" + s.action + "' (payload large)");
        if (IsSpellingForm(p) && !target.idempotency.path_equivalence.Declared())
          fit.AddNeed("idempotency.path_equivalence (how the target treats another spelling of a keyed route: "
                      "trailing_slash, case, query_order)");
        if (p == PayloadVariant::kIgnoredChanged && a->fingerprint_ignores.empty())
          fit.AddNeed("fingerprint_ignores for action '" + s.action + "' (payload ignored_changed)");
      }
    }
    if (s.kill_after_answer && !target.start) fit.AddNeed(fit.NeedsStart("step 'send' with then: kill"));
    if (!s.caller.empty() && target.callers.size() <= CallerIndex(s.caller))
      fit.AddNeed(std::string(s.caller == "second" ? "two callers" : "a caller") +
                  " (target 'callers') for caller: " + s.caller);
    // A spawned instance is started by the harness; the target's own are declared.
    if (!s.instance.empty() && s.instance != kOtherInstance && !TargetInstanceIndex(s.instance) && !target.start)
      fit.AddNeed("a start command (target 'start') for instance '" + s.instance + "'");
  }

  // The keys a send and a burst share, first the action.
  void WriteRequest(const SendOptions& s, YAML::Emitter& out) const {
    out << YAML::Key << name() << YAML::Value << s.action;
    out << YAML::Key << "key" << YAML::Value << s.key;
    if (s.key_at_max_length) out << YAML::Key << "key_form" << YAML::Value << "max_length";
    if (!s.key_malformed.empty()) out << YAML::Key << "key_form" << YAML::Value << s.key_malformed;
    out << YAML::Key << "biz" << YAML::Value << s.biz;
    if (!s.payloads.empty()) {
      out << YAML::Key << "payload" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (PayloadVariant p : s.payloads) out << PayloadName(p);
      out << YAML::EndSeq;
    } else if (s.payload != PayloadVariant::kDefault) {
      out << YAML::Key << "payload" << YAML::Value << PayloadName(s.payload);
    }
  }
  static void WriteCallerAndTimeout(const SendOptions& s, YAML::Emitter& out) {
    if (!s.caller.empty()) out << YAML::Key << "caller" << YAML::Value << s.caller;
    if (s.timeout) out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*s.timeout);
  }

  // Explore's model: a request that executes consumes a pending hook or variant.
  static void PlanRequest(const SendOptions& step, PlanModel& m, const ProvidedVariables& provides) {
    if (step.key != kNoKey) {
      // Only a request that executes consumes a pending hook: a key's first
      // use, or a retry of a key that may have been released. A replay
      // does not execute, so the hook then hits a later request.
      const std::pair<std::string, std::string> use(step.key, step.biz);
      const bool executes = !m.used_keys.count(use) || m.maybe_released.count(use);
      if (m.hook_pending && executes) {
        m.maybe_released.insert(use);
        m.hook_pending = false;
      }
      // A variant goes to the action's next request whether it executes or not.
      if (m.variant_pending.erase(step.action) > 0 && executes) m.maybe_released.insert(use);
      m.used_keys.insert(use);
    } else {
      m.variant_pending.erase(step.action);
    }
    auto it = provides.find(step.action);
    if (it != provides.end()) {
      for (const auto& var : it->second) m.captured.emplace(var, step.biz);
    }
  }
};

class SendStepKind final : public RequestStepKind {
 public:
  const char* name() const override { return "send"; }
  std::vector<std::string> options() const override {
    return {"key", "key_form", "biz", "payload", "after", "repeat", "every", "until", "background", "timeout", "label", "instance",
            "then", "caller"};
  }
  Status Write(const Step& step, YAML::Emitter& out) const override {
    const SendOptions& s = step.Options<SendOptions>();
    WriteRequest(s, out);
    if (s.repeat != 1) out << YAML::Key << "repeat" << YAML::Value << s.repeat;
    if (s.every_retry_after) {
      out << YAML::Key << "every" << YAML::Value << "retry_after";
    } else if (s.every.count() > 0) {
      out << YAML::Key << "every" << YAML::Value << FormatDuration(s.every);
    }
    if (s.until_recovered) out << YAML::Key << "until" << YAML::Value << "recovered";
    if (s.background) out << YAML::Key << "background" << YAML::Value << true;
    if (s.kill_after_answer) out << YAML::Key << "then" << YAML::Value << "kill";
    if (!s.instance.empty()) out << YAML::Key << "instance" << YAML::Value << s.instance;
    WriteCallerAndTimeout(s, out);
    return Status::Ok();
  }
  void Plan(const Step& s, PlanModel& m, const ProvidedVariables& provides) const override {
    const SendOptions& step = s.Options<SendOptions>();
    PlanRequest(step, m, provides);
    if (step.background) ++m.background_sends;
    AddPlanTime(m, step.background ? 10 : 30 * step.repeat);
    if (step.kill_after_answer) {
      m.up = false;
      m.paused = false;
      AddPlanTime(m, 50);
    }
  }
  // `then: kill` may end the instance that answered.
  StepEffect Effect(const Step& step) const override {
    StepEffect e;
    e.may_take_main_down = step.Options<SendOptions>().kill_after_answer;
    return e;
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return SendNow(ctx, step, index);
  }
};

class BurstStepKind final : public RequestStepKind {
 public:
  const char* name() const override { return "burst"; }
  std::vector<std::string> options() const override {
    return {"n", "key", "key_form", "biz", "payload", "mode", "after", "timeout", "label", "caller", "instance"};
  }
  bool takes_payload_list() const override { return true; }
  Status Write(const Step& step, YAML::Emitter& out) const override {
    const SendOptions& s = step.Options<SendOptions>();
    WriteRequest(s, out);
    out << YAML::Key << "n" << YAML::Value << s.n;
    out << YAML::Key << "mode" << YAML::Value << (s.mode == BurstMode::kThreads ? "threads" : "last_byte");
    WriteCallerAndTimeout(s, out);
    return Status::Ok();
  }
  void Plan(const Step& step, PlanModel& m, const ProvidedVariables& provides) const override {
    PlanRequest(step.Options<SendOptions>(), m, provides);
    AddPlanTime(m, 100);
  }
  void RuntimeNeeds(const Step& step, const Scenario&, const TargetDescription&,
                    const runtime::InterpreterOptions& options, std::vector<std::string>& needs) const override {
    if (step.Options<SendOptions>().mode == BurstMode::kLastByte && options.last_byte_burst == nullptr)
      needs.push_back("a last-byte synchronised burst sender (step at " + step.mark.ToString() + ")");
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return BurstNow(ctx, step, index);
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeSendStep() { return std::make_unique<SendStepKind>(); }
std::unique_ptr<StepKindSpec> MakeBurstStep() { return std::make_unique<BurstStepKind>(); }

}  // namespace idemproof::steps
