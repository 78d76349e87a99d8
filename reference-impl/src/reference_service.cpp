#include "idemproof/ref/reference_service.h"

#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <cstdlib>
#include <functional>
#include <limits>
#include <thread>
#include <variant>

#include <nlohmann/json.hpp>

#include "idemproof/ref/client_connection.h"
#include "idemproof/ref/fingerprint.h"
#include "idemproof/ref/idempotency_key.h"
#include "base/problem.h"
#include "idemproof/ref/random_token.h"
#include "base/query_string.h"

namespace idemproof::ref {

using nlohmann::json;

struct ReferenceService::Call {
  RequestScope scope;
  Lease lease;
};

// The business step of one route: either a terminal rejection known before
// anything runs (a validation failure, stored like any terminal answer), or
// `run`, which does the business inside the store transaction and returns the
// answer.
struct ReferenceService::Step {
  std::optional<HttpResponse> rejection;
  std::function<HttpResponse(StoreTransaction&)> run;
};

namespace {

constexpr const char* kRouteOrders = "/orders";
constexpr const char* kRouteOrder = "/orders/{id}";
constexpr const char* kRouteAddress = "/orders/{id}/address";

// "/refunds", "/transfers": a movement kind's route (and route template).
std::string movement_route(MovementKind kind) { return "/" + std::string(movement_table(kind)); }

// Renews an owner's lease every third of it until destroyed (after the
// owner's transaction), from a thread of its own.
class LeaseKeeper {
 public:
  LeaseKeeper(Store& store, const Clock& clock, RequestScope scope, std::string owner, Nanos lease)
      : thread_([this, &store, &clock, scope = std::move(scope), owner = std::move(owner), lease] {
          std::unique_lock lock(mu_);
          while (!cv_.wait_for(lock, lease / 3, [this] { return done_; })) {
            lock.unlock();
            try {
              store.renew(scope, owner, saturating_add(clock.now(), lease));
            } catch (const std::exception&) {
              // a store error: the lease may lapse, the fenced completion says so
            }
            lock.lock();
          }
        }) {}
  ~LeaseKeeper() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

HttpResponse method_not_allowed(std::string_view method, std::string allow) {
  auto r = problem_response(405, "method-not-allowed", "Method not allowed",
                            std::string(method) + " is not allowed here; allowed: " + allow);
  r.set_header("Allow", std::move(allow));
  return r;
}

HttpResponse not_found(std::string_view what) {
  return problem_response(404, "not-found", "Not found", std::string(what) + " does not exist");
}

HttpResponse malformed_json() {
  return problem_response(400, "malformed-json", "Malformed JSON",
                          "the request body is not a JSON document");
}

// A positive order id of at most 18 digits, or nullopt.
std::optional<std::int64_t> parse_id(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

// An integer in [min, max] from `j[field]`, or nullopt (wrong type, missing, out of range).
std::optional<std::int64_t> int_field(const json& j, const char* field, std::int64_t min,
                                      std::int64_t max) {
  if (!j.contains(field)) return std::nullopt;
  const auto& v = j.at(field);
  if (!v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    return std::nullopt;
  }
  const auto n = v.get<std::int64_t>();
  if (n < min || n > max) return std::nullopt;
  return n;
}

std::optional<std::string> string_field(const json& j, const char* field, std::size_t max_size) {
  if (!j.contains(field) || !j.at(field).is_string()) return std::nullopt;
  auto s = j.at(field).get<std::string>();
  if (s.empty() || s.size() > max_size) return std::nullopt;
  return s;
}

// The flaw truncate-stored-answer keeps what a 4096-byte column would.
StoredResponse to_stored(const HttpResponse& r, const ServiceConfig& config, std::string_view route) {
  StoredResponse stored{r.status, r.header("Content-Type").value_or(""), r.header("Location").value_or(""), r.body};
  if (config.has_flaw(Flaw::truncate_stored_answer, route) && stored.body.size() > 4096) stored.body.resize(4096);
  return stored;
}

// Body parsing shared by routes: the parsed document or a 400 to answer.
std::variant<json, HttpResponse> parse_body(const HttpRequest& request) {
  json parsed = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return malformed_json();
  return parsed;
}

}  // namespace

ReferenceService::ReferenceService(ServiceConfig config, Store& store, const Clock& clock)
    : config_(std::move(config)), store_(store), clock_(clock) {}

HttpResponse ReferenceService::handle_request(const HttpRequest& request) {
  HttpResponse r;
  try {
    r = route(request);
  } catch (const std::exception& e) {
    return problem_response(500, "internal-error", "Internal error", e.what());
  }
  // The flaw plain-error: a 4xx problem goes out as text/plain, its detail alone.
  if (config_.flaw == Flaw::plain_error && r.status >= 400 && r.status < 500 &&
      r.header("Content-Type").value_or("") == kProblemContentType) {
    const json problem = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    r.set_header("Content-Type", "text/plain; charset=utf-8");
    r.body = problem.is_object() && problem.contains("detail") && problem["detail"].is_string()
                 ? problem["detail"].get<std::string>()
                 : r.body;
  }
  return r;
}

std::size_t ReferenceService::sweep_expired() { return store_.sweep(clock_.now()); }

HttpResponse ReferenceService::route(const HttpRequest& request) {
  const auto [path, query] = split_target(request.target);
  std::string_view rel = path;
  if (!config_.base_path.empty()) {
    if (!rel.starts_with(config_.base_path)) return not_found(path);
    rel.remove_prefix(config_.base_path.size());
    if (!rel.starts_with('/')) return not_found(path);
  }
  const std::string& method = request.method;

  if (rel == "/healthz") {
    if (method != "GET") return method_not_allowed(method, "GET");
    if (recovering_.load()) return json_response(503, {{"status", "recovering"}});
    return json_response(200, {{"status", "ok"}});
  }
  if (rel == "/orders") {
    if (method == "GET") return list_orders(query);
    if (method == "POST") return create_order(request, path);
    return method_not_allowed(method, "GET, POST");
  }
  for (const MovementKind kind : {MovementKind::refund, MovementKind::transfer}) {
    if (rel == movement_route(kind)) {
      if (method == "GET") return list_movements(kind, query);
      if (method == "POST") return create_movement(kind, request, path);
      return method_not_allowed(method, "GET, POST");
    }
  }
  if (rel == "/stock") {
    if (method != "GET") return method_not_allowed(method, "GET");
    return get_stock(query);
  }
  if (rel == "/_chaos") {
    if (method == "GET" || method == "POST" || method == "DELETE") return chaos(request);
    return method_not_allowed(method, "GET, POST, DELETE");
  }
  if (rel.starts_with("/orders/")) {
    std::string_view rest = rel.substr(8);
    const auto slash = rest.find('/');
    const auto id = parse_id(rest.substr(0, slash));
    if (!id) return not_found(path);
    if (slash == std::string_view::npos) {
      if (method == "GET") return get_order(*id);
      if (method == "DELETE") return cancel_order(request, path, *id);
      return method_not_allowed(method, "GET, DELETE");
    }
    if (rest.substr(slash) == "/address") {
      if (method == "PUT") return set_address(request, path, *id);
      return method_not_allowed(method, "PUT");
    }
  }
  for (RouteExtension* extension : extensions_) {
    if (auto answer = extension->route(request, rel, path, query)) return *answer;
  }
  return not_found(path);
}

// The idempotency key of `request`: nullopt when absent and not required, or
// the 400 to answer.
static std::variant<std::optional<std::string>, HttpResponse> key_of(
    const HttpRequest& request, const ServiceConfig& config, std::string_view route, bool required) {
  const auto raw = request.header(config.key_header);
  if (!raw) {
    if (!required) return std::optional<std::string>();
    return problem_response(400, "missing-key", "Idempotency key missing",
                            "this operation requires the " + config.key_header + " header");
  }
  // The flaw accept-empty-key: an empty value is taken for no key at all.
  if (raw->empty() && config.has_flaw(Flaw::accept_empty_key, route)) return std::optional<std::string>();
  const std::size_t max_length = config.has_flaw(Flaw::no_key_length_limit, route)
                                     ? std::numeric_limits<std::size_t>::max()
                                     : kMaxIdempotencyKeyLength;
  auto key = parse_idempotency_key(*raw, max_length);
  // The flaw lenient-key-syntax: any non-empty value is the key, as sent.
  if (!key && !raw->empty() && raw->size() <= kMaxIdempotencyKeyLength &&
      config.has_flaw(Flaw::lenient_key_syntax, route))
    key = std::string(*raw);
  if (!key) {
    return problem_response(400, "invalid-key", "Invalid idempotency key",
                            "the key must be a token or an sf-string of 1 to 255 characters");
  }
  // The flaw body-hash-key: the request's fingerprint stands in for the key,
  // so two identical orders under two keys are one.
  if (config.has_flaw(Flaw::body_hash_key, route))
    key = "body-" + sha256_hex(request.method + " " + request.target + "\n" + request.body);
  // The flaw key-truncate: a 64-character key column.
  if (config.has_flaw(Flaw::key_truncate, route) && key->size() > 64) key->resize(64);
  // The flaw key-includes-query: the key store's scope is the target as the
  // client spelled it (`/orders?b=2&a=1`), not the route the router matched.
  if (config.has_flaw(Flaw::key_includes_query, route)) key = request.target + " " + *key;
  if (config.has_flaw(Flaw::request_id_key, route)) {
    // The flaw: a per-request id (fresh on every retry) stands in for the key.
    auto request_id = request.header("X-Request-Id");
    return std::optional<std::string>(request_id ? *request_id : random_token());
  }
  // A key is the caller's: the same key from two callers (two Authorization
  // credentials) is two keys, so no caller is answered with another's result
  // or blocked by another's key. Only a digest of the credential is kept.
  // The flaw cross-caller-replay forgets the caller.
  const auto caller = request.header("Authorization");
  if (caller && !caller->empty() && !config.has_flaw(Flaw::cross_caller_replay, route))
    return std::optional<std::string>(sha256_hex(*caller).substr(0, 16) + "/" + *key);
  return key;
}

// The key and the JSON body of a keyed write (create, put), or the 400 to answer.
struct KeyedBody {
  std::optional<std::string> key;
  json body;
};
static std::variant<KeyedBody, HttpResponse> keyed_body(const HttpRequest& request, const ServiceConfig& config,
                                                        std::string_view route, bool required) {
  auto key = key_of(request, config, route, required);
  if (auto* answer = std::get_if<HttpResponse>(&key)) return *answer;
  auto parsed = parse_body(request);
  if (auto* answer = std::get_if<HttpResponse>(&parsed)) return *answer;
  return KeyedBody{std::get<std::optional<std::string>>(key), std::get<json>(std::move(parsed))};
}

HttpResponse ReferenceService::create_order(const HttpRequest& request, const std::string& path) {
  auto in = keyed_body(request, config_, kRouteOrders, /*required=*/true);
  if (auto* answer = std::get_if<HttpResponse>(&in)) return *answer;
  const auto& [key, body] = std::get<KeyedBody>(in);

  OrderDraft draft;
  Step step;
  std::optional<std::string> biz_no, sku;
  std::optional<std::int64_t> qty, amount;
  // Optional order lines, echoed in the create's answer (not kept on the
  // order): what makes an answer as large as its request (issue 33, size).
  json lines;
  bool lines_ok = true;
  if (body.is_object()) {
    biz_no = string_field(body, "biz_no", 255);
    sku = string_field(body, "sku", 255);
    qty = int_field(body, "qty", 1, 1'000'000);
    amount = int_field(body, "amount", 0, 1'000'000'000'000'000);
    if (body.contains("lines")) {
      lines = body.at("lines");
      lines_ok = lines.is_array();
    }
  }
  if (!biz_no || !sku || !qty || !amount || !lines_ok) {
    step.rejection = problem_response(
        400, "invalid-order", "Invalid order",
        "expected {\"biz_no\": non-empty string, \"sku\": non-empty string, "
        "\"qty\": integer 1..1000000, \"amount\": integer >= 0, optional \"lines\": array}");
  } else {
    draft = OrderDraft{*biz_no, *sku, *qty, *amount, {}};
  }
  step.run = [this, draft, lines](StoreTransaction& tx) mutable {
    if (tx.available_stock(draft.sku) < draft.qty) {
      return problem_response(400, "insufficient-stock", "Insufficient stock",
                              "not enough " + draft.sku + " in stock");
    }
    draft.created_at = format_rfc3339(clock_.now());
    const Order order = tx.insert_order(draft);
    tx.adjust_stock(draft.sku, -draft.qty);
    json answer = order_to_json(order);
    if (!lines.is_null()) answer["lines"] = lines;
    auto r = json_response(201, answer);
    r.set_header("Location", config_.base_path + "/orders/" + std::to_string(order.id));
    return r;
  };
  return execute_once(request, key, kRouteOrders, path, body.dump(), step);
}

HttpResponse ReferenceService::create_movement(MovementKind kind, const HttpRequest& request,
                                               const std::string& path) {
  const std::string route = movement_route(kind);
  auto in = keyed_body(request, config_, route, /*required=*/true);
  if (auto* answer = std::get_if<HttpResponse>(&in)) return *answer;
  const auto& [key, body] = std::get<KeyedBody>(in);

  Step step;
  std::optional<std::string> biz_no;
  std::optional<std::int64_t> amount;
  if (body.is_object()) {
    biz_no = string_field(body, "biz_no", 255);
    amount = int_field(body, "amount", 1, 1'000'000'000'000'000);
  }
  if (!biz_no || !amount) {
    step.rejection = problem_response(
        400, "invalid-" + std::string(movement_kind_name(kind)), "Invalid " + std::string(movement_kind_name(kind)),
        "expected {\"biz_no\": non-empty string, \"amount\": integer >= 1}");
  }
  Movement draft{0, biz_no.value_or(""), amount.value_or(0), ""};
  step.run = [this, kind, draft, route](StoreTransaction& tx) mutable {
    draft.created_at = format_rfc3339(clock_.now());
    const Movement movement = tx.insert_movement(kind, draft);
    auto r = json_response(201, movement_to_json(kind, movement));
    r.set_header("Location", config_.base_path + route + "/" + std::to_string(movement.id));
    return r;
  };
  return execute_once(request, key, route, path, body.dump(), step);
}

HttpResponse ReferenceService::list_movements(MovementKind kind, const std::string& query) {
  const auto biz_no = query_parameter(query, "biz_no");
  if (!biz_no || biz_no->empty()) {
    return problem_response(400, "missing-parameter", "Missing parameter",
                            "GET " + movement_route(kind) + " requires ?biz_no=");
  }
  std::vector<Movement> movements;
  store_.transact([&](StoreTransaction& tx) {
    movements = tx.find_movements(kind, *biz_no);
    return false;  // read only
  });
  json items = json::array();
  for (const auto& m : movements) items.push_back(movement_to_json(kind, m));
  return json_response(200, {{"count", movements.size()}, {"items", std::move(items)}});
}

HttpResponse ReferenceService::list_orders(const std::string& query) {
  const auto biz_no = query_parameter(query, "biz_no");
  std::vector<Order> orders;
  store_.transact([&](StoreTransaction& tx) {
    orders = tx.find_orders(biz_no);
    return false;  // read only
  });
  json items = json::array();
  for (const auto& o : orders) items.push_back(order_to_json(o));
  return json_response(200, {{"count", orders.size()}, {"items", std::move(items)}});
}

HttpResponse ReferenceService::get_order(std::int64_t id) {
  std::optional<Order> order;
  store_.transact([&](StoreTransaction& tx) {
    order = tx.find_order(id);
    return false;
  });
  if (!order) return not_found("order " + std::to_string(id));
  return json_response(200, order_to_json(*order));
}

HttpResponse ReferenceService::set_address(const HttpRequest& request, const std::string& path,
                                           std::int64_t id) {
  auto in = keyed_body(request, config_, kRouteAddress, /*required=*/false);
  if (auto* answer = std::get_if<HttpResponse>(&in)) return *answer;
  const auto& [key, body] = std::get<KeyedBody>(in);

  Step step;
  std::optional<std::string> address;
  if (body.is_object()) address = string_field(body, "address", 1000);
  if (!address) {
    step.rejection = problem_response(400, "invalid-address", "Invalid address",
                                      "expected {\"address\": non-empty string}");
  }
  step.run = [this, id, address](StoreTransaction& tx) {
    auto order = tx.find_order(id);
    if (!order) return not_found("order " + std::to_string(id));
    if (config_.has_flaw(Flaw::put_increment, kRouteAddress)) {
      order->address = order->address.value_or("") + *address;  // the flaw: an increment
    } else {
      order->address = *address;  // target state
    }
    tx.update_order(*order);
    return json_response(200, order_to_json(*order));
  };
  return execute_once(request, key, kRouteAddress, path, body.dump(), step);
}

HttpResponse ReferenceService::cancel_order(const HttpRequest& request, const std::string& path,
                                            std::int64_t id) {
  auto key = key_of(request, config_, kRouteOrder, /*required=*/false);
  if (auto* answer = std::get_if<HttpResponse>(&key)) return *answer;
  Step step;
  step.run = [this, id](StoreTransaction& tx) {
    auto order = tx.find_order(id);
    if (!order) return not_found("order " + std::to_string(id));
    // The stock goes back once: only on the transition created -> cancelled.
    if (order->status == "created" || config_.has_flaw(Flaw::delete_releases_twice, kRouteOrder)) {
      tx.adjust_stock(order->sku, order->qty);
    }
    order->status = "cancelled";
    tx.update_order(*order);
    return json_response(200, order_to_json(*order));
  };
  return execute_once(request, std::get<std::optional<std::string>>(key), kRouteOrder, path, "",
                      step);
}

HttpResponse ReferenceService::get_stock(const std::string& query) {
  const auto sku = query_parameter(query, "sku");
  if (!sku || sku->empty()) {
    return problem_response(400, "missing-parameter", "Missing parameter",
                            "GET /stock requires ?sku=");
  }
  std::int64_t available = 0;
  store_.transact([&](StoreTransaction& tx) {
    available = tx.available_stock(*sku);
    return false;
  });
  return json_response(200, {{"sku", *sku}, {"available", available}});
}

HttpResponse ReferenceService::chaos(const HttpRequest& request) {
  if (request.method == "DELETE") chaos_.reset();
  if (request.method == "POST") {
    json patch = json::object();
    if (!request.body.empty()) {
      auto parsed = parse_body(request);
      if (auto* answer = std::get_if<HttpResponse>(&parsed)) return *answer;
      patch = std::get<json>(parsed);
    }
    if (auto error = chaos_.apply(patch)) {
      return problem_response(400, "invalid-chaos", "Invalid chaos settings", *error);
    }
  }
  return json_response(200, chaos_.settings().to_json());
}

HttpResponse ReferenceService::execute_once(const HttpRequest& request,
                                            const std::optional<std::string>& key,
                                            const std::string& route_template,
                                            const std::string& path,
                                            const std::string& canonical_body, const Step& step) {
  ChaosForStep requested;
  if (auto error = request_chaos(split_target(request.target).second, requested)) {
    return problem_response(400, "invalid-chaos", "Invalid chaos settings", *error);
  }
  // The flaw serve-before-recovery: while the store recovers, the key is not
  // looked at (the idempotency layer fails open), so a retry runs again.
  if (!key || recovering_.load()) return perform(step, std::nullopt, requested);

  const TimePoint now = clock_.now();
  Call call;
  call.scope = RequestScope{request.method, route_template, *key};
  call.lease.owner = random_token();
  call.lease.expires_at = config_.has_flaw(Flaw::no_lease_expiry, route_template)
                              ? TimePoint::max()  // the flaw: a lease that never ends
                              : saturating_add(now, config_.lease);
  if (config_.has_flaw(Flaw::fast_path_skips_fingerprint, route_template)) {
    // The flaw: a warm cache answers before the fingerprint is compared.
    if (auto cached = cached_replay(call.scope, now)) return *cached;
  }
  // The flaw fingerprint-key-order hashes the bytes as they came.
  const std::string& fingerprinted =
      config_.has_flaw(Flaw::fingerprint_key_order, route_template) ? request.body : canonical_body;
  const std::string fingerprint = config_.has_flaw(Flaw::no_fingerprint, route_template)
                                      ? std::string()
                                      : request_fingerprint(request.method, path, fingerprinted);

  // The flaw claim-conflict-500: a read, a pause, then the atomic claim; a
  // claim lost to a twin after the read said "absent" surfaces as a 500.
  bool read_absent = false;
  if (config_.has_flaw(Flaw::claim_conflict_500, route_template)) {
    read_absent = !store_.lookup(call.scope, now).has_value();
    if (read_absent) std::this_thread::sleep_for(config_.claim_race_pause);
  }
  const ClaimOutcome outcome = store_.claim(ClaimRequest{call.scope, fingerprint, call.lease, now});
  if (read_absent && (outcome.kind == ClaimKind::in_progress || outcome.kind == ClaimKind::completed)) {
    return problem_response(500, "internal-error", "Internal error",
                            "duplicate key value violates unique constraint");
  }
  switch (outcome.kind) {
    case ClaimKind::mismatch:
      return problem_response(422, "fingerprint-mismatch", "Idempotency key reused",
                              "this key was used with another request payload");
    case ClaimKind::in_progress: {
      // The flaw in-progress-500: the in-progress path answers a failure.
      if (config_.has_flaw(Flaw::in_progress_500, route_template))
        return problem_response(500, "internal-error", "Internal error", "the request could not be processed");
      auto r = problem_response(409, "request-in-progress", "Request in progress",
                                "a request with this key is still being processed");
      // The flaw retry-after-zero: "retry at once", true for as long as the work runs.
      r.set_header("Retry-After", config_.has_flaw(Flaw::retry_after_zero, route_template) ? "0" : "1");
      return r;
    }
    case ClaimKind::completed: {
      HttpResponse r = replay(*outcome.existing);
      if (config_.has_flaw(Flaw::fast_path_skips_fingerprint, route_template)) cache_replay(call.scope, r, now);
      return r;
    }
    case ClaimKind::claimed:
    case ClaimKind::took_over:
      break;
  }
  return perform(step, call, requested);
}

HttpResponse ReferenceService::perform(const Step& step, const std::optional<Call>& call,
                                       const ChaosForStep& requested) {
  if (step.rejection) {
    if (call) finish_terminal(*call, *step.rejection);
    return *step.rejection;
  }
  ChaosForStep chaos = chaos_.begin_business_step();
  if (requested.fail_status) chaos.fail_status = requested.fail_status;
  const Nanos delay = config_.business_delay + chaos.delay + requested.delay;
  // Slow work keeps its lease alive while it runs: a duplicate after the
  // lease would otherwise take the key over, and this owner's completion
  // (fenced) would roll back: work slower than its lease would never complete.
  std::optional<LeaseKeeper> keeper;
  if (call && delay.count() > 0 && !config_.has_flaw(Flaw::no_lease_renewal, call->scope.route_template) &&
      !config_.has_flaw(Flaw::no_lease_expiry, call->scope.route_template)) {
    keeper.emplace(store_, clock_, call->scope, call->lease.owner, config_.lease);
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);

  if (chaos.fail_status && *chaos.fail_status >= 500) {
    auto r = problem_response(503, "downstream-unavailable", "Downstream unavailable",
                              "a downstream service answered " +
                                  std::to_string(*chaos.fail_status) + "; retry later");
    r.set_header("Retry-After", "1");
    if (call) {
      if (config_.has_flaw(Flaw::cache_retryable, call->scope.route_template)) {
        finish_terminal(*call, r);  // the flaw: a retryable failure stored as final
      } else {
        store_.release(call->scope, call->lease.owner);
      }
    }
    return r;
  }
  if (chaos.fail_status) {
    auto r = problem_response(*chaos.fail_status, "downstream-rejected", "Downstream rejected",
                              "a downstream service answered " +
                                  std::to_string(*chaos.fail_status));
    if (call) finish_terminal(*call, r);
    return r;
  }

  HttpResponse response;
  // outcome-write-behind: the outcome goes to a background writer as well.
  const bool store_later = call && (config_.has_flaw(Flaw::store_after_answer, call->scope.route_template) ||
                                    config_.has_flaw(Flaw::outcome_write_behind, call->scope.route_template));
  // swallow-store-error: the answer is stored after the work committed, in
  // a write of its own whose error is ignored.
  const bool store_after = call && config_.has_flaw(Flaw::swallow_store_error, call->scope.route_template);
  const bool committed = store_.transact([&](StoreTransaction& tx) {
    response = step.run(tx);
    if (!call || store_later || store_after) return true;
    const TimePoint now = clock_.now();
    const std::string& route = call->scope.route_template;
    StoredResponse stored = to_stored(response, config_, route);
    if (config_.has_flaw(Flaw::abort_stores_empty, route) && client_gone()) {
      // The flaw: the answer is captured from the response stream, and a
      // client that gave up left it as it started: 200, nothing written.
      stored = StoredResponse{};
      stored.status = 200;
    }
    return tx.complete(call->scope, call->lease.owner, stored, now,
                       saturating_add(now, config_.effective_dedup_ttl(route)),
                       config_.has_flaw(Flaw::unfenced_takeover, route) ? Fencing::none
                                                                         : Fencing::by_owner);
  });
  if (!committed) {
    // Our lease was taken over while we worked: the new owner's result stands.
    auto r = problem_response(409, "lease-lost", "Lease lost",
                              "this execution outlived its lease and was rolled back; "
                              "retry to get the result");
    r.set_header("Retry-After", "1");
    return r;
  }
  if (store_later) complete_later(*call, response);
  if (store_after) {
    try {
      finish_terminal(*call, response);
    } catch (const std::exception&) {
      // The flaw: the store's error is swallowed and the success answered.
    }
  }
  return response;
}

void ReferenceService::complete_later(const Call& call, const HttpResponse& response) {
  {
    std::lock_guard lock(deferred_mu_);
    ++deferred_;
  }
  const bool write_behind = config_.has_flaw(Flaw::outcome_write_behind, call.scope.route_template);
  std::thread([this, call, response, write_behind] {
    std::this_thread::sleep_for(std::chrono::milliseconds(write_behind ? 100 : 200));
    if (write_behind) {
      try {
        finish_terminal(call, response);
      } catch (const std::exception&) {
        // The flaw: fire and forget. A failed write goes unseen; the key stays in progress.
      }
    } else {
      finish_terminal(call, response);
    }
    std::lock_guard lock(deferred_mu_);
    --deferred_;
    deferred_done_.notify_all();
  }).detach();
}

ReferenceService::~ReferenceService() {
  std::unique_lock lock(deferred_mu_);
  deferred_done_.wait(lock, [this] { return deferred_ == 0; });
}

void ReferenceService::finish_terminal(const Call& call, const HttpResponse& response) {
  const TimePoint now = clock_.now();
  store_.transact([&](StoreTransaction& tx) {
    const std::string& route = call.scope.route_template;
    return tx.complete(call.scope, call.lease.owner, to_stored(response, config_, route), now,
                       saturating_add(now, config_.effective_dedup_ttl(route)),
                       config_.has_flaw(Flaw::unfenced_takeover, route) ? Fencing::none
                                                                         : Fencing::by_owner);
  });
}

std::optional<HttpResponse> ReferenceService::cached_replay(const RequestScope& scope, TimePoint now) {
  std::lock_guard lock(replay_cache_mu_);
  auto it = replay_cache_.find(scope);
  if (it == replay_cache_.end()) return std::nullopt;
  if (now >= it->second.until) {
    replay_cache_.erase(it);
    return std::nullopt;
  }
  return it->second.response;
}

void ReferenceService::cache_replay(const RequestScope& scope, const HttpResponse& response, TimePoint now) {
  std::lock_guard lock(replay_cache_mu_);
  replay_cache_[scope] = CachedReplay{response, saturating_add(now, config_.effective_dedup_ttl(scope.route_template))};
}

HttpResponse ReferenceService::replay(const RequestRecord& record) {
  HttpResponse r;
  const std::string& route = record.scope.route_template;
  if (config_.has_flaw(Flaw::empty_replay, route)) {
    r = json_response(200, {{"status", "duplicate"}});
  } else {
    const StoredResponse& stored = *record.response;
    r.status = stored.status;
    r.body = stored.body;
    if (!stored.content_type.empty()) r.set_header("Content-Type", stored.content_type);
    if (!stored.location.empty()) r.set_header("Location", stored.location);
    if (config_.has_flaw(Flaw::replay_reads_current, route) && route == kRouteOrders) {
      // The flaw: the order's answer rendered again from its row as it is now.
      const auto slash = stored.location.rfind('/');
      std::optional<Order> order;
      if (slash != std::string::npos) {
        const std::int64_t id = std::strtoll(stored.location.c_str() + slash + 1, nullptr, 10);
        store_.transact([&](StoreTransaction& tx) {
          order = tx.find_order(id);
          return false;  // read only
        });
      }
      if (order) r.body = json_response(stored.status, order_to_json(*order)).body;
    }
    if (config_.has_flaw(Flaw::volatile_replay, route)) {
      // The flaw: the replay is re-rendered instead of returned as stored.
      json body = json::parse(r.body, nullptr, false);
      if (body.is_object() && body.contains("created_at")) {
        body["created_at"] = format_rfc3339(clock_.now());
        r.body = body.dump();
      }
    }
    if (config_.has_flaw(Flaw::failure_replay_generic, route) && stored.status >= 400) {
      // The flaw: of a stored failure only the status counts; its replay is
      // a generic problem, not the answer the client got.
      r = problem_response(stored.status, "request-failed", "Request failed",
                           "an earlier request with this key failed");
    }
  }
  r.set_header(config_.replay_header, "true");
  return r;
}

}  // namespace idemproof::ref
