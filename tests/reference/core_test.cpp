// Unit tests of the reference service's core (no sockets): a real SQLite file
// and a FakeClock, so leases and TTLs pass without sleeping.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "idemproof/ref/fingerprint.h"
#include "idemproof/ref/flaw.h"
#include "idemproof/ref/idempotency_key.h"
#include "idemproof/ref/reference_service.h"
#include "idemproof/ref/sqlite_store.h"
#include "temp_dir.h"

using namespace idemproof::ref;
using idemproof::HttpRequest;
using idemproof::HttpResponse;
using namespace std::chrono_literals;
using idemproof::ref::testing::TempDir;
using nlohmann::json;

namespace {

const TimePoint kStart = from_epoch_ns(1'700'000'000'000'000'000);

struct Fixture {
  TempDir dir;
  FakeClock clock{kStart};
  SqliteStore store{dir.file("ref.db")};
  ServiceConfig config = [] {
    ServiceConfig c;
    c.lease = 10s;
    c.dedup_ttl = 1h;
    return c;
  }();
  ReferenceService service{config, store, clock};

  HttpResponse post(const std::string& key, const std::string& body) {
    HttpRequest r{"POST", "/orders", {}, body};
    if (!key.empty()) r.headers.emplace_back("Idempotency-Key", key);
    return service.handle_request(r);
  }
  HttpResponse get(const std::string& target) {
    return service.handle_request(HttpRequest{"GET", target, {}, ""});
  }
  std::int64_t order_count(const std::string& biz_no) {
    return json::parse(get("/orders?biz_no=" + biz_no).body).at("count").get<std::int64_t>();
  }
  std::int64_t stock(const std::string& sku) {
    return json::parse(get("/stock?sku=" + sku).body).at("available").get<std::int64_t>();
  }
};

const std::string kOrder = R"({"biz_no":"b1","sku":"s1","qty":3,"amount":100})";

bool is_problem(const HttpResponse& r, int status, const std::string& name) {
  if (r.status != status || r.header("Content-Type") != "application/problem+json") return false;
  const json body = json::parse(r.body);
  return body.at("type") == "urn:idemproof:" + name && body.at("status") == status;
}

}  // namespace

TEST_CASE("idempotency keys are tokens or sf-strings of 1..255 characters", "[core]") {
  CHECK(parse_idempotency_key("abc-123") == "abc-123");
  CHECK(parse_idempotency_key("\"8e03978e 40d5\"") == "8e03978e 40d5");
  CHECK(parse_idempotency_key(R"("a\"b")") == "a\"b");
  CHECK_FALSE(parse_idempotency_key(""));
  CHECK_FALSE(parse_idempotency_key("\"\""));
  CHECK_FALSE(parse_idempotency_key("has space"));
  CHECK_FALSE(parse_idempotency_key("\"unterminated"));
  CHECK_FALSE(parse_idempotency_key(R"("bad\escape")"));
  CHECK(parse_idempotency_key(std::string(255, 'k')));
  CHECK_FALSE(parse_idempotency_key(std::string(256, 'k')));
}

TEST_CASE("the fingerprint is SHA-256 over method, path and canonical JSON", "[core]") {
  // FIPS 180-2 test vector.
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const auto canonical = [](const std::string& text) { return json::parse(text).dump(); };
  CHECK(request_fingerprint("POST", "/orders", canonical(R"({"b":1, "a":[1,2]})")) ==
        request_fingerprint("POST", "/orders", canonical(R"({ "a" : [1,2], "b":1 })")));
  CHECK(request_fingerprint("POST", "/orders", "{}") !=
        request_fingerprint("PUT", "/orders", "{}"));
  CHECK(request_fingerprint("DELETE", "/orders/1", "") !=
        request_fingerprint("DELETE", "/orders/2", ""));
}

TEST_CASE("every flaw has a unique name that parses back", "[core]") {
  CHECK(all_flaws().size() == 47);  // every row of flaw.cpp's table, issues 33, 46 and 48 included
  for (const auto& info : all_flaws()) {
    CHECK(parse_flaw(info.name) == info.flaw);
    CHECK(flaw_name(info.flaw) == info.name);
  }
  CHECK(parse_flaw("none") == Flaw::none);
  CHECK_FALSE(parse_flaw("no-such-flaw"));
}

TEST_CASE("a claimed key executes once and its answer is replayed byte for byte", "[core]") {
  Fixture f;
  const auto first = f.post("k1", kOrder);
  REQUIRE(first.status == 201);
  CHECK(first.header("Location") == "/orders/1");
  CHECK_FALSE(first.header("Idempotent-Replayed"));

  // Same JSON, other spelling: same canonical body, same fingerprint.
  const auto again = f.post("k1", R"({ "amount":100, "qty":3, "sku":"s1", "biz_no":"b1" })");
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  CHECK(again.header("Location") == first.header("Location"));
  CHECK(again.header("Content-Type") == first.header("Content-Type"));
  CHECK(again.header("Idempotent-Replayed") == "true");
  CHECK(f.order_count("b1") == 1);
  CHECK(f.stock("s1") == 997);
}

TEST_CASE("a reused key with another payload is rejected with 422", "[core]") {
  Fixture f;
  REQUIRE(f.post("k1", kOrder).status == 201);
  const auto other = f.post("k1", R"({"biz_no":"b1","sku":"s1","qty":4,"amount":100})");
  CHECK(is_problem(other, 422, "fingerprint-mismatch"));
  CHECK(f.order_count("b1") == 1);
}

TEST_CASE("a missing or malformed key is a 400 and nothing executes", "[core]") {
  Fixture f;
  CHECK(is_problem(f.post("", kOrder), 400, "missing-key"));
  CHECK(is_problem(f.post("bad key", kOrder), 400, "invalid-key"));
  CHECK(f.order_count("b1") == 0);
}

TEST_CASE("a live lease answers 409, an expired one is taken over, completion is fenced",
          "[core]") {
  Fixture f;
  const std::string canonical = json::parse(kOrder).dump();
  const RequestScope scope{"POST", "/orders", "k1"};
  // A first request claimed the key and is still running (or died).
  const Lease original{"original-owner", f.clock.now() + f.config.lease};
  REQUIRE(f.store
              .claim(ClaimRequest{scope, request_fingerprint("POST", "/orders", canonical),
                                  original, f.clock.now()})
              .kind == ClaimKind::claimed);

  const auto during = f.post("k1", kOrder);
  CHECK(is_problem(during, 409, "request-in-progress"));
  CHECK(during.header("Retry-After") == "1");

  f.clock.advance(f.config.lease);  // the lease ends: the owner is presumed dead
  const auto takeover = f.post("k1", kOrder);
  REQUIRE(takeover.status == 201);
  CHECK_FALSE(takeover.header("Idempotent-Replayed"));

  // The late original finishes: its completion is refused and rolls back.
  const bool late = f.store.transact([&](StoreTransaction& tx) {
    tx.insert_order(OrderDraft{"b1", "s1", 3, 100, "late"});
    return tx.complete(scope, original.owner, StoredResponse{201, "application/json", "", "late"},
                       f.clock.now(), f.clock.now() + 1h, Fencing::by_owner);
  });
  CHECK_FALSE(late);
  CHECK(f.order_count("b1") == 1);
  const auto replay = f.post("k1", kOrder);
  CHECK(replay.body == takeover.body);
  CHECK(replay.header("Idempotent-Replayed") == "true");
}

TEST_CASE("a completed record expires after the dedup TTL and is swept", "[core]") {
  Fixture f;
  REQUIRE(f.post("k1", kOrder).status == 201);
  f.clock.advance(f.config.dedup_ttl - 1s);
  CHECK(f.post("k1", kOrder).header("Idempotent-Replayed") == "true");
  CHECK(f.service.sweep_expired() == 0);

  f.clock.advance(1s);
  CHECK(f.store.lookup({"POST", "/orders", "k1"}, f.clock.now()) == std::nullopt);
  CHECK(f.service.sweep_expired() == 1);
  // Past the TTL the key is new again: the retry executes (this is why the
  // TTL must outlive every client's retry window).
  const auto after = f.post("k1", kOrder);
  CHECK(after.status == 201);
  CHECK_FALSE(after.header("Idempotent-Replayed"));
  CHECK(f.order_count("b1") == 2);
}

TEST_CASE("a retryable downstream failure releases the key, the retry executes", "[core]") {
  Fixture f;
  REQUIRE(f.service.handle_request({"POST", "/_chaos", {}, R"({"fail_next":1})"}).status == 200);
  const auto failed = f.post("k1", kOrder);
  CHECK(is_problem(failed, 503, "downstream-unavailable"));
  CHECK(failed.header("Retry-After") == "1");
  CHECK(f.store.lookup({"POST", "/orders", "k1"}, f.clock.now()) == std::nullopt);
  CHECK(f.order_count("b1") == 0);

  const auto retried = f.post("k1", kOrder);
  CHECK(retried.status == 201);
  CHECK_FALSE(retried.header("Idempotent-Replayed"));
  CHECK(f.order_count("b1") == 1);
}

TEST_CASE("a request's own fail_status and slow_ms affect that request only", "[core]") {
  Fixture f;
  auto post_to = [&](const std::string& target) {
    HttpRequest r{"POST", target, {{"Idempotency-Key", "k1"}}, kOrder};
    return f.service.handle_request(r);
  };
  const auto failed = post_to("/orders?fail_status=503");
  CHECK(is_problem(failed, 503, "downstream-unavailable"));
  CHECK(f.order_count("b1") == 0);
  // The fingerprint leaves the query out: the plain retry is the same request, and it executes.
  const auto retried = post_to("/orders");
  CHECK(retried.status == 201);
  CHECK(f.order_count("b1") == 1);
  const auto slow_replay = post_to("/orders?slow_ms=0");
  CHECK(slow_replay.header("Idempotent-Replayed") == "true");
  CHECK(is_problem(post_to("/orders?slow_ms=fast"), 400, "invalid-chaos"));
  CHECK(is_problem(post_to("/orders?fail_status=200"), 400, "invalid-chaos"));
  CHECK(f.service.handle_request({"GET", "/_chaos", {}, ""}).body.find("\"fail_next\":0") != std::string::npos);
}

TEST_CASE("a terminal 4xx is stored and replayed, a downstream 4xx too", "[core]") {
  Fixture f;
  const std::string invalid = R"({"biz_no":"b1","sku":"s1","qty":0,"amount":100})";
  const auto first = f.post("k1", invalid);
  CHECK(is_problem(first, 400, "invalid-order"));
  const auto again = f.post("k1", invalid);
  CHECK(again.body == first.body);
  CHECK(again.header("Idempotent-Replayed") == "true");
  CHECK(f.order_count("b1") == 0);

  REQUIRE(f.service.handle_request({"POST", "/_chaos", {}, R"({"fail_next":1,"fail_status":409})"})
              .status == 200);
  const auto rejected = f.post("k2", kOrder);
  CHECK(is_problem(rejected, 409, "downstream-rejected"));
  CHECK(f.post("k2", kOrder).header("Idempotent-Replayed") == "true");
  CHECK(f.order_count("b1") == 0);
}

TEST_CASE("malformed JSON is a 400 that is not stored", "[core]") {
  Fixture f;
  CHECK(is_problem(f.post("k1", "{not json"), 400, "malformed-json"));
  CHECK(f.store.lookup({"POST", "/orders", "k1"}, f.clock.now()) == std::nullopt);
  CHECK(f.post("k1", kOrder).status == 201);
}

TEST_CASE("the scope is (method, route template, key)", "[core]") {
  Fixture f;
  REQUIRE(f.post("shared", kOrder).status == 201);
  const auto cancel = f.service.handle_request(
      {"DELETE", "/orders/1", {{"Idempotency-Key", "shared"}}, ""});
  CHECK(cancel.status == 200);
  CHECK_FALSE(cancel.header("Idempotent-Replayed"));
  CHECK(json::parse(cancel.body).at("status") == "cancelled");
  CHECK(f.stock("s1") == 1000);
  // Same key, same template, other concrete path: another payload.
  CHECK(is_problem(f.service.handle_request(
                       {"DELETE", "/orders/2", {{"Idempotency-Key", "shared"}}, ""}),
                   422, "fingerprint-mismatch"));
}

TEST_CASE("PUT sets state, DELETE releases stock once", "[core]") {
  Fixture f;
  REQUIRE(f.post("k1", kOrder).status == 201);
  for (int i = 0; i < 2; ++i) {
    const auto put = f.service.handle_request({"PUT", "/orders/1/address", {}, R"({"address":"A"})"});
    CHECK(put.status == 200);
    CHECK(json::parse(put.body).at("address") == "A");
    CHECK(f.service.handle_request({"DELETE", "/orders/1", {}, ""}).status == 200);
  }
  CHECK(f.stock("s1") == 1000);
  CHECK(is_problem(f.service.handle_request({"DELETE", "/orders/99", {}, ""}), 404, "not-found"));
}

TEST_CASE("routes answer 404, 405 with Allow, and 400 on bad parameters", "[core]") {
  Fixture f;
  CHECK(is_problem(f.get("/nope"), 404, "not-found"));
  CHECK(is_problem(f.get("/orders/abc"), 404, "not-found"));
  const auto bad_method = f.service.handle_request({"PATCH", "/orders", {}, ""});
  CHECK(is_problem(bad_method, 405, "method-not-allowed"));
  CHECK(bad_method.header("Allow") == "GET, POST");
  CHECK(is_problem(f.get("/stock"), 400, "missing-parameter"));
  CHECK(is_problem(f.service.handle_request({"POST", "/_chaos", {}, R"({"fail_status":200})"}),
                   400, "invalid-chaos"));
  CHECK(f.get("/healthz").body == R"({"status":"ok"})");
}

TEST_CASE("a base path prefixes every route", "[core]") {
  TempDir dir;
  FakeClock clock{kStart};
  SqliteStore store{dir.file("ref.db")};
  ServiceConfig config;
  config.base_path = "/api/v9";
  ReferenceService service{config, store, clock};
  CHECK(service.handle_request({"GET", "/api/v9/healthz", {}, ""}).status == 200);
  CHECK(service.handle_request({"GET", "/healthz", {}, ""}).status == 404);
  CHECK(service.handle_request({"GET", "/api/v9x/healthz", {}, ""}).status == 404);
  const auto created = service.handle_request(
      {"POST", "/api/v9/orders", {{"Idempotency-Key", "k"}}, kOrder});
  CHECK(created.header("Location") == "/api/v9/orders/1");
}

TEST_CASE("refunds and transfers are keyed creates of their own, through the same idempotency core",
          "[core]") {
  Fixture f;
  auto post_to = [&](const std::string& route, const std::string& key, const std::string& body) {
    HttpRequest r{"POST", route, {{"Idempotency-Key", key}}, body};
    return f.service.handle_request(r);
  };
  const HttpResponse first = post_to("/refunds", "k1", R"({"biz_no":"b1","amount":250})");
  REQUIRE(first.status == 201);
  CHECK(json::parse(first.body).at("kind") == "refund");
  CHECK(first.header("Location") == "/refunds/" + std::to_string(json::parse(first.body).at("id").get<int>()));
  const HttpResponse again = post_to("/refunds", "k1", R"({"biz_no":"b1","amount":250})");
  CHECK(again.status == 201);
  CHECK(again.body == first.body);
  CHECK(again.header("Idempotent-Replayed") == "true");
  CHECK(is_problem(post_to("/refunds", "k1", R"({"biz_no":"b1","amount":900})"), 422, "fingerprint-mismatch"));
  // The same key on another route is another scope; each kind has its own table.
  CHECK(post_to("/transfers", "k1", R"({"biz_no":"b1","amount":250})").status == 201);
  CHECK(json::parse(f.get("/refunds?biz_no=b1").body).at("count") == 1);
  CHECK(json::parse(f.get("/transfers?biz_no=b1").body).at("count") == 1);
  CHECK(f.order_count("b1") == 0);
  CHECK(is_problem(f.service.handle_request(HttpRequest{"POST", "/refunds", {}, R"({"biz_no":"b1","amount":1})"}),
                   400, "missing-key"));
  CHECK(is_problem(post_to("/transfers", "k9", R"({"biz_no":"b1"})"), 400, "invalid-transfer"));
  CHECK(is_problem(f.get("/refunds"), 400, "missing-parameter"));
}

TEST_CASE("a flaw aimed at one route (flaw_route) breaks that route only", "[core]") {
  TempDir dir;
  FakeClock clock{kStart};
  SqliteStore store{dir.file("ref.db")};
  ServiceConfig config;
  config.flaw = Flaw::no_fingerprint;
  config.flaw_route = "/refunds";
  ReferenceService service{config, store, clock};
  auto post_to = [&](const std::string& route, const std::string& body) {
    return service.handle_request(HttpRequest{"POST", route, {{"Idempotency-Key", "k1"}}, body});
  };
  REQUIRE(post_to("/refunds", R"({"biz_no":"b1","amount":250})").status == 201);
  REQUIRE(post_to("/transfers", R"({"biz_no":"b1","amount":250})").status == 201);
  REQUIRE(post_to("/orders", kOrder).status == 201);
  // Another payload under the used key: replayed on refunds (the flaw), rejected elsewhere.
  CHECK(post_to("/refunds", R"({"biz_no":"b1","amount":900})").status == 201);
  CHECK(post_to("/transfers", R"({"biz_no":"b1","amount":900})").status == 422);
  CHECK(post_to("/orders", R"({"biz_no":"b1","sku":"s1","qty":4,"amount":100})").status == 422);

  CHECK(flaw_can_be_aimed(Flaw::no_fingerprint));
  CHECK(flaw_can_be_aimed(Flaw::empty_replay));
  CHECK_FALSE(flaw_can_be_aimed(Flaw::check_then_insert));  // the store's, not a route's
  CHECK_FALSE(flaw_can_be_aimed(Flaw::no_intent));
}

// Issue 48: the key's own syntax and the error format. The correct service
// refuses an empty key, one past 255 characters and one that is neither a
// token nor an sf-string with 400 problem+json; each flaw accepts its kind.
TEST_CASE("malformed keys are refused 400 problem+json, and each key-syntax flaw accepts its kind", "[core]") {
  const std::string empty = "", too_long = std::string(256, 'k'), comma = "k1,k1", quote = "k\"1",
                    non_ascii = "k1-\xc3\xa9";
  auto answer = [](Flaw flaw, const std::string& key) {
    TempDir dir;
    FakeClock clock{kStart};
    SqliteStore store{dir.file("ref.db")};
    ServiceConfig config;
    config.flaw = flaw;
    ReferenceService service{config, store, clock};
    return service.handle_request(HttpRequest{"POST", "/orders", {{"Idempotency-Key", key}}, kOrder});
  };
  for (const std::string& key : {empty, too_long, comma, quote, non_ascii}) {
    INFO("key '" << key << "'");
    const HttpResponse r = answer(Flaw::none, key);
    CHECK(r.status == 400);
    CHECK(r.header("Content-Type") == "application/problem+json");
    CHECK(json::parse(r.body).at("type") == "urn:idemproof:invalid-key");
  }
  CHECK(answer(Flaw::none, std::string(255, 'k')).status == 201);  // the documented maximum is kept
  CHECK(answer(Flaw::accept_empty_key, empty).status == 201);
  CHECK(answer(Flaw::accept_empty_key, comma).status == 400);
  CHECK(answer(Flaw::no_key_length_limit, too_long).status == 201);
  CHECK(answer(Flaw::no_key_length_limit, empty).status == 400);
  for (const std::string& key : {comma, quote, non_ascii}) CHECK(answer(Flaw::lenient_key_syntax, key).status == 201);
  CHECK(answer(Flaw::lenient_key_syntax, too_long).status == 400);
  // plain-error: the same refusal as text, its detail alone.
  const HttpResponse plain = answer(Flaw::plain_error, empty);
  CHECK(plain.status == 400);
  CHECK(plain.header("Content-Type") == "text/plain; charset=utf-8");
  CHECK(plain.body == "the key must be a token or an sf-string of 1 to 255 characters");
  CHECK(answer(Flaw::plain_error, "k1").status == 201);
}
