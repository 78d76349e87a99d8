#include "idemproof/ref/side_effect_routes.h"

#include <thread>

#include <nlohmann/json.hpp>


#include "idemproof/ref/fingerprint.h"
#include "idemproof/ref/idempotency_key.h"
#include "base/problem.h"
#include "idemproof/ref/random_token.h"
#include "base/query_string.h"
#include "idemproof/ref/chaos_control.h"

namespace idemproof::ref {
namespace {

using nlohmann::json;
constexpr const char* kRoutePayments = "/payments";

HttpResponse retry_later(int status, std::string_view name, std::string_view title,
                         const std::string& detail) {
  auto r = problem_response(status, name, title, detail);
  r.set_header("Retry-After", "1");
  return r;
}

HttpResponse method_not_allowed(const std::string& allow) {
  auto r = problem_response(405, "method-not-allowed", "Method not allowed", "allowed: " + allow);
  r.set_header("Allow", allow);
  return r;
}

std::optional<std::string> string_field(const json& j, const char* f) {
  if (!j.is_object() || !j.contains(f) || !j[f].is_string()) return std::nullopt;
  auto s = j[f].get<std::string>();
  if (s.empty() || s.size() > 255) return std::nullopt;
  return s;
}

std::optional<std::int64_t> positive_field(const json& j, const char* f) {
  if (!j.is_object() || !j.contains(f) || !j[f].is_number_integer()) return std::nullopt;
  if (j[f].is_number_unsigned() && j[f].get<std::uint64_t>() > 1'000'000'000'000'000ULL) {
    return std::nullopt;
  }
  const auto n = j[f].get<std::int64_t>();
  if (n < 1 || n > 1'000'000'000'000'000) return std::nullopt;
  return n;
}

}  // namespace

SideEffectRoutes::SideEffectRoutes(ServiceConfig config, Store& store, EffectStore& effects,
                                   const Clock& clock, PaymentProvider* provider)
    : config_(std::move(config)),
      store_(store),
      effects_(effects),
      clock_(clock),
      provider_(provider) {}

std::optional<HttpResponse> SideEffectRoutes::route(const HttpRequest& request,
                                                    std::string_view rel, const std::string& path,
                                                    const std::string& query) {
  const std::string& m = request.method;
  if (rel == "/payments") {
    if (m == "POST") return create_payment(request, path);
    if (m == "GET") return list_payments(query);
    return method_not_allowed("GET, POST");
  }
  if (rel == "/callbacks/payment") {
    if (m == "POST") return callback(request);
    if (m == "GET") {
      const auto biz = query_parameter(query, "biz_no");
      if (!biz) return problem_response(400, "missing-parameter", "Missing parameter", "biz_no");
      return json_response(200, effects_.callback_state(*biz));
    }
    return method_not_allowed("GET, POST");
  }
  if (rel == "/inbox") {
    if (m == "POST") return inbox(request, query);
    return method_not_allowed("POST");
  }
  if (rel == "/inbox/_chaos") {
    if (m == "POST") return inbox_chaos(request);
    return method_not_allowed("POST");
  }
  if (rel == "/accounts") {
    if (m != "GET") return method_not_allowed("GET");
    const auto account = query_parameter(query, "account");
    if (!account) return problem_response(400, "missing-parameter", "Missing parameter", "account");
    return json_response(200, effects_.account(*account));
  }
  return std::nullopt;
}

HttpResponse SideEffectRoutes::create_payment(const HttpRequest& request, const std::string& path) {
  const auto raw = request.header(config_.key_header);
  if (!raw) {
    return problem_response(400, "missing-key", "Idempotency key missing",
                            "this operation requires the " + config_.key_header + " header");
  }
  const auto key = parse_idempotency_key(*raw);
  if (!key) {
    return problem_response(400, "invalid-key", "Invalid idempotency key",
                            "the key must be a token or an sf-string of 1 to 255 characters");
  }
  const json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) {
    return problem_response(400, "malformed-json", "Malformed JSON",
                            "the request body is not a JSON document");
  }
  const auto biz_no = string_field(body, "biz_no");
  const auto amount = positive_field(body, "amount");

  const TimePoint now = clock_.now();
  const RequestScope scope{"POST", kRoutePayments, *key};
  const Lease lease{random_token(), config_.flaw == Flaw::no_lease_expiry
                                        ? TimePoint::max()
                                        : saturating_add(now, config_.lease)};
  const std::string fingerprint = request_fingerprint("POST", path, body.dump());
  const ClaimOutcome outcome = store_.claim(ClaimRequest{scope, fingerprint, lease, now});
  switch (outcome.kind) {
    case ClaimKind::mismatch:
      return problem_response(422, "fingerprint-mismatch", "Idempotency key reused",
                              "this key was used with another request payload");
    case ClaimKind::in_progress:
      return retry_later(409, "request-in-progress", "Request in progress",
                         "a request with this key is still being processed");
    case ClaimKind::completed: {
      const StoredResponse& s = *outcome.existing->response;
      HttpResponse r;
      r.status = s.status;
      r.body = s.body;
      if (!s.content_type.empty()) r.set_header("Content-Type", s.content_type);
      if (!s.location.empty()) r.set_header("Location", s.location);
      r.set_header(config_.replay_header, "true");
      return r;
    }
    case ClaimKind::claimed:
    case ClaimKind::took_over:
      break;
  }

  // Terminal answers are stored with the key, fenced by our lease.
  auto finish = [&](HttpResponse r) {
    const TimePoint done = clock_.now();
    const StoredResponse stored{r.status, r.header("Content-Type").value_or(""),
                                r.header("Location").value_or(""), r.body};
    const bool committed = store_.transact([&](StoreTransaction& tx) {
      return tx.complete(scope, lease.owner, stored, done,
                         saturating_add(done, config_.effective_dedup_ttl()),
                         config_.flaw == Flaw::unfenced_takeover ? Fencing::none
                                                                 : Fencing::by_owner);
    });
    if (!committed) {
      return retry_later(409, "lease-lost", "Lease lost",
                         "this execution outlived its lease; retry to get the result");
    }
    return r;
  };
  auto unavailable = [&](const std::string& why) {
    HttpResponse r = retry_later(503, "provider-unavailable", "Payment provider unavailable", why);
    // The flaw: the provider's failure stored as the key's final answer.
    if (config_.has_flaw(Flaw::cache_retryable, scope.route_template)) return finish(std::move(r));
    store_.release(scope, lease.owner);  // retryable: nothing stored
    return r;
  };

  if (!biz_no || !amount) {
    return finish(problem_response(400, "invalid-payment", "Invalid payment",
                                   "expected {\"biz_no\": non-empty string, \"amount\": integer >= 1}"));
  }
  if (provider_ == nullptr) return unavailable("no --payment-provider configured");

  if (config_.flaw == Flaw::no_intent) {
    // The flaw: no intent, so no stable id to give the provider and nothing
    // to reconcile: every execution charges under a new key.
    const ProviderAnswer a = provider_->charge("charge-" + random_token(), *biz_no, *amount);
    if (a.kind == ProviderAnswer::Kind::unavailable) return unavailable(a.error);
    if (a.kind == ProviderAnswer::Kind::rejected) {
      return finish(problem_response(402, "payment-declined", "Payment declined",
                                     "the provider answered " + std::to_string(a.status)));
    }
    const auto p = effects_.record_unkeyed_payment(*biz_no, *amount, a.transaction_id,
                                                   format_rfc3339(clock_.now()));
    return finish(json_response(201, payment_to_json(p)));
  }

  PaymentIntent intent = effects_.open_intent(*key, *biz_no, *amount, format_rfc3339(now));
  if (intent.biz_no != *biz_no || intent.amount != *amount) {
    // The key's record was forgotten (TTL) but its intent is forever.
    return finish(problem_response(422, "fingerprint-mismatch", "Idempotency key reused",
                                   "this key's payment intent has another payload"));
  }
  if (intent.state == "pending") {
    std::string error;
    auto settled = settle(intent, error);
    if (!settled) return unavailable(error);
    intent = *settled;
  }
  if (intent.state == "failed") {
    return finish(problem_response(402, "payment-declined", "Payment declined",
                                   "the provider answered " + std::to_string(intent.failure_status)));
  }
  return finish(json_response(201, payment_to_json(intent)));
}

std::optional<PaymentIntent> SideEffectRoutes::settle(PaymentIntent intent, std::string& error) {
  if (intent.calls > 0 && !config_.reconcile_by_resend) {
    // A call may have charged before we lost track of it: ask, never charge blindly.
    // (--reconcile resend re-sends the charge below under the same provider
    // key instead: a provider honouring it answers the first charge again.)
    const ProviderLookup found = provider_->find(intent.token);
    if (!found.answered) {
      error = "could not reconcile with the provider: " + found.error;
      return std::nullopt;
    }
    if (found.transaction_id) {
      effects_.finish_intent(intent.token, *found.transaction_id);
      intent.state = "done";
      intent.transaction_id = *found.transaction_id;
      return intent;
    }
  }
  effects_.note_call(intent.token);
  ++intent.calls;
  const ProviderAnswer a = provider_->charge(intent.token, intent.biz_no, intent.amount);
  switch (a.kind) {
    case ProviderAnswer::Kind::charged:
      effects_.finish_intent(intent.token, a.transaction_id);
      intent.state = "done";
      intent.transaction_id = a.transaction_id;
      return intent;
    case ProviderAnswer::Kind::rejected:
      effects_.fail_intent(intent.token, a.status);
      intent.state = "failed";
      intent.failure_status = a.status;
      return intent;
    case ProviderAnswer::Kind::unavailable:
      break;
  }
  error = a.error;
  return std::nullopt;
}

std::size_t SideEffectRoutes::reconcile_pending() {
  // --reconcile resend: a retry re-sends the charge; nothing to look up at start.
  if (provider_ == nullptr || config_.flaw == Flaw::no_intent || config_.reconcile_by_resend) return 0;
  std::size_t settled = 0;
  for (const auto& intent : effects_.pending_intents()) {
    if (intent.calls == 0) continue;  // never called: nothing can have happened
    const ProviderLookup found = provider_->find(intent.token);
    if (found.answered && found.transaction_id) {
      effects_.finish_intent(intent.token, *found.transaction_id);
      ++settled;
    }
  }
  return settled;
}

HttpResponse SideEffectRoutes::list_payments(const std::string& query) {
  const auto biz = query_parameter(query, "biz_no");
  if (!biz) return problem_response(400, "missing-parameter", "Missing parameter", "biz_no");
  json items = json::array();
  const auto payments = effects_.payments(*biz);
  for (const auto& p : payments) items.push_back(payment_to_json(p));
  return json_response(200, {{"count", payments.size()}, {"items", std::move(items)}});
}

HttpResponse SideEffectRoutes::callback(const HttpRequest& request) {
  const json body = json::parse(request.body, nullptr, false);
  std::optional<std::string> seq;
  if (body.is_object() && body.contains("seq")) {
    if (body["seq"].is_string()) seq = body["seq"].get<std::string>();
    if (body["seq"].is_number_integer()) seq = std::to_string(body["seq"].get<std::int64_t>());
  }
  const auto biz = string_field(body, "biz_no");
  const auto event = string_field(body, "event");
  if (!seq || seq->empty() || !biz || !event || (*event != "paid" && *event != "refunded")) {
    return problem_response(400, "invalid-callback", "Invalid callback",
                            "expected {\"seq\": string|integer, \"biz_no\": string, "
                            "\"event\": \"paid\"|\"refunded\"}");
  }
  const auto out = effects_.apply_callback(
      *seq, *biz, *event, config_.flaw == Flaw::callback_no_dedup ? Dedup::off : Dedup::on);
  json answer = {{"seq", *seq},           {"biz_no", *biz},
                 {"state", out.state},    {"applied", out.applied},
                 {"duplicate", out.duplicate}, {"applied_count", out.applied_count}};
  if (!out.ignored.empty()) answer["ignored"] = out.ignored;
  // 200 either way: the provider must stop resending what changed nothing.
  return json_response(200, answer);
}

InboxOutcome SideEffectRoutes::apply_message(const std::string& message_id, const std::string& account,
                                             std::int64_t amount, std::chrono::milliseconds work) {
  if (config_.flaw == Flaw::seen_before_apply) {
    // The flaw: "seen" commits on its own; a crash during the work leaves the
    // id seen and the effect never applied, and the redelivery is dropped.
    const InboxOutcome seen = effects_.apply_message(message_id, account, amount, Dedup::seen_only);
    std::this_thread::sleep_for(work);
    if (!seen.applied) return seen;  // judged a duplicate
    return effects_.apply_message(message_id, account, amount, Dedup::off);
  }
  std::this_thread::sleep_for(work);
  return effects_.apply_message(message_id, account, amount,
                                config_.flaw == Flaw::inbox_no_dedup ? Dedup::off : Dedup::on);
}

HttpResponse SideEffectRoutes::inbox(const HttpRequest& request, const std::string& query) {
  ChaosForStep chaos;
  if (auto error = request_chaos(query, chaos)) {
    return problem_response(400, "invalid-chaos", "Invalid chaos settings", *error);
  }
  const json body = json::parse(request.body, nullptr, false);
  const auto id = string_field(body, "message_id");
  const auto account = string_field(body, "account");
  std::optional<std::int64_t> amount;
  if (body.is_object() && body.contains("amount") && body["amount"].is_number_integer()) {
    amount = body["amount"].get<std::int64_t>();
  }
  if (!id || !account || !amount) {
    return problem_response(400, "invalid-message", "Invalid message",
                            "expected {\"message_id\": string, \"account\": string, "
                            "\"amount\": integer}");
  }
  const auto out = apply_message(*id, *account, *amount, chaos.delay);
  return json_response(200, {{"message_id", *id}, {"applied", out.applied},
                             {"balance", out.balance}, {"applied_count", out.applied_count}});
}

HttpResponse SideEffectRoutes::inbox_chaos(const HttpRequest& request) {
  const json body = json::parse(request.body, nullptr, false);
  if (!body.is_object() || !body.contains("die_before_ack") ||
      !body["die_before_ack"].is_number_integer() || body["die_before_ack"].get<std::int64_t>() < 0) {
    return problem_response(400, "invalid-chaos", "Invalid chaos settings",
                            "expected {\"die_before_ack\": integer >= 0}");
  }
  die_before_ack_ = body["die_before_ack"].get<std::int64_t>();
  return json_response(200, {{"die_before_ack", die_before_ack_.load()}});
}

bool SideEffectRoutes::take_die_before_ack() {
  std::int64_t n = die_before_ack_.load();
  while (n > 0) {
    if (die_before_ack_.compare_exchange_weak(n, n - 1)) return true;
  }
  return false;
}

}  // namespace idemproof::ref
