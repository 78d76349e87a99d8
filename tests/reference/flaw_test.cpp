// For every flaw: the same scenario against the correct service (no symptom)
// and against the service with that flaw (the documented symptom, observed
// only through HTTP).
#include <catch2/catch.hpp>

#include <csignal>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "order_api.h"
#include "service_process.h"
#include "temp_dir.h"

using namespace idemproof::ref::testing;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// Runs `scenario` (which returns whether the symptom showed) against the
// correct service and against `--flaw flaw`, each on a fresh database.
template <typename Scenario>
void check_flaw(const std::string& flaw, std::vector<std::string> extra, Scenario scenario) {
  for (const bool flawed : {false, true}) {
    TempDir dir;
    std::vector<std::string> args{"--port", "0", "--db", dir.file("ref.db")};
    args.insert(args.end(), extra.begin(), extra.end());
    if (flawed) {
      args.push_back("--flaw");
      args.push_back(flaw);
    }
    INFO((flawed ? "with --flaw " + flaw : std::string("correct service")));
    CHECK(scenario(args) == flawed);
  }
}

bool is_replay(const HttpResult& r) { return r.header("idempotent-replayed") == "true"; }

}  // namespace

TEST_CASE("flaw check-then-insert: concurrent duplicates create several orders", "[flaw][slow]") {
  check_flaw("check-then-insert", {"--check-insert-pause", "1s"}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    api.concurrent_posts(64, "race", order_json("race"));
    const auto count = api.order_count("race");
    REQUIRE(count >= 1);
    return count > 1;
  });
}

TEST_CASE("flaw request-id-key: a retry with a fresh request id creates a second order", "[flaw][slow]") {
  check_flaw("request-id-key", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.post_order("rid", order_json("rid"), {"X-Request-Id: req-1"}).status == 201);
    api.post_order("rid", order_json("rid"), {"X-Request-Id: req-2"});
    return api.order_count("rid") == 2;
  });
}

TEST_CASE("flaw memory-store: a retry after a restart creates a second order", "[flaw][slow]") {
  check_flaw("memory-store", {}, [](auto args) {
    {
      ServiceProcess service(args);
      REQUIRE(OrderApi(service.url()).post_order("mem", order_json("mem")).status == 201);
      REQUIRE(service.terminate() == 0);
    }
    ServiceProcess service(args);
    OrderApi api(service.url());
    api.post_order("mem", order_json("mem"));
    return api.order_count("mem") == 2;
  });
}

TEST_CASE("flaw no-fingerprint: another payload under a used key gets the first answer", "[flaw][slow]") {
  check_flaw("no-fingerprint", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto first = api.post_order("fp", order_json("fp", "s1", 1));
    REQUIRE(first.status == 201);
    const auto other = api.post_order("fp", order_json("fp", "s1", 9));
    if (other.status == 422) {
      CHECK(is_problem(other, 422));
      return false;
    }
    return other.body == first.body;
  });
}

TEST_CASE("flaw fingerprint-key-order: the same JSON spelled otherwise is judged another payload", "[flaw][slow]") {
  check_flaw("fingerprint-key-order", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto first = api.post_order("ko", order_json("ko"));
    REQUIRE(first.status == 201);
    // The members of order_json in reverse order, with spaces: the same order.
    const json doc = json::parse(order_json("ko"));
    std::string reversed = "{";
    std::vector<std::string> members;
    for (auto it = doc.begin(); it != doc.end(); ++it) members.push_back(json(it.key()).dump() + ": " + it.value().dump());
    for (auto m = members.rbegin(); m != members.rend(); ++m) reversed += (reversed.size() > 1 ? ", " : "") + *m;
    reversed += "}";
    REQUIRE(json::parse(reversed) == doc);
    const auto retry = api.post_order("ko", reversed);
    if (retry.status == 201) CHECK((is_replay(retry) && retry.body == first.body));
    return retry.status == 422 && api.order_count("ko") == 1;
  });
}

TEST_CASE("flaw fast-path-skips-fingerprint: after a replay another payload gets the cached answer",
          "[flaw][slow]") {
  check_flaw("fast-path-skips-fingerprint", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto first = api.post_order("fp2", order_json("fp2", "s1", 1));
    REQUIRE(first.status == 201);
    // Never replayed yet: the cache is cold and the fingerprint is compared.
    CHECK(api.post_order("fp2", order_json("fp2", "s1", 9)).status == 422);
    REQUIRE(is_replay(api.post_order("fp2", order_json("fp2", "s1", 1))));
    const auto other = api.post_order("fp2", order_json("fp2", "s1", 9));
    if (other.status == 422) return false;
    return other.body == first.body && is_replay(other);
  });
}

TEST_CASE("flaw cross-caller-replay: a second caller reusing a key gets the first caller's order, or a 422",
          "[flaw][slow]") {
  check_flaw("cross-caller-replay", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const std::vector<std::string> alice{"Authorization: Bearer alice"}, bob{"Authorization: Bearer bob"};
    const auto first = api.post_order("cc", order_json("cc"), alice);
    REQUIRE(first.status == 201);
    REQUIRE_FALSE(is_replay(first));
    const auto same = api.post_order("cc", order_json("cc"), bob);  // the same request from another caller
    REQUIRE(api.post_order("cc2", order_json("cc2", "s1", 1), alice).status == 201);
    const auto other = api.post_order("cc2", order_json("cc2", "s1", 2), bob);  // another request, same key
    const bool leaked = is_replay(same) && same.body == first.body;
    const bool blocked = other.status == 422;
    if (!leaked) CHECK((same.status == 201 && !is_replay(same) && same.body != first.body));
    if (!blocked) CHECK(other.status == 201);
    return leaked && blocked;
  });
}

TEST_CASE("flaw store-after-answer: killed right after answering, the key stays in progress and executes again",
          "[flaw][slow]") {
  check_flaw("store-after-answer", {"--lease", "1s"}, [](auto args) {
    {
      ServiceProcess service(args);
      REQUIRE(OrderApi(service.url()).post_order("sa", order_json("sa")).status == 201);
      service.kill9();  // at once: before a record stored late is written
    }
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto retry = api.post_order("sa", order_json("sa"));
    const bool blocked = retry.status == 409;
    if (!blocked) CHECK((retry.status == 201 && is_replay(retry)));
    std::this_thread::sleep_for(1200ms);  // past the lease
    api.post_order("sa", order_json("sa"));
    return blocked && api.order_count("sa") == 2;
  });
}

TEST_CASE("flaw cache-retryable: every retry gets the stored 503, nothing is created", "[flaw][slow]") {
  check_flaw("cache-retryable", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.call("POST", "/_chaos", R"({"fail_next":1})").status == 200);
    REQUIRE(api.post_order("cr", order_json("cr")).status == 503);
    const auto retry = api.post_order("cr", order_json("cr"));
    const auto retry2 = api.post_order("cr", order_json("cr"));
    return retry.status == 503 && retry2.status == 503 && api.order_count("cr") == 0;
  });
}

TEST_CASE("flaw volatile-replay: the replay body differs from the first answer", "[flaw][slow]") {
  check_flaw("volatile-replay", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto first = api.post_order("vr", order_json("vr"));
    REQUIRE(first.status == 201);
    std::this_thread::sleep_for(5ms);  // so a re-rendered created_at cannot coincide
    const auto replay = api.post_order("vr", order_json("vr"));
    REQUIRE(is_replay(replay));
    return replay.body != first.body;
  });
}

TEST_CASE("flaw empty-replay: the replay is 200 duplicate instead of the first answer", "[flaw][slow]") {
  check_flaw("empty-replay", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto first = api.post_order("er", order_json("er"));
    REQUIRE(first.status == 201);
    const auto replay = api.post_order("er", order_json("er"));
    return replay.status != first.status || replay.body != first.body;
  });
}

TEST_CASE("flaw no-lease-expiry: after a crash mid-request the key stays blocked", "[flaw][slow]") {
  check_flaw("no-lease-expiry", {"--lease", "2s"}, [](auto args) {
    std::chrono::steady_clock::time_point seen;
    {
      auto slow = args;
      slow.insert(slow.end(), {"--business-delay", "60s"});
      ServiceProcess doomed(slow);
      auto original = OrderApi(doomed.url()).start_in_progress("nle", order_json("nle"), 30s);
      seen = std::chrono::steady_clock::now();
      doomed.kill9();
      original.get();
    }
    ServiceProcess restarted(args);
    OrderApi api(restarted.url());
    std::this_thread::sleep_until(seen + 2s + 300ms);
    const auto retry = api.post_order("nle", order_json("nle"));
    if (retry.status == 201) {
      CHECK(api.order_count("nle") == 1);
      return false;
    }
    return retry.status == 409 && api.order_count("nle") == 0;
  });
}

TEST_CASE("flaw unfenced-takeover: a late original overwrites the new owner's answer", "[flaw][slow]") {
  // The original runs slow on instance A and A is frozen (SIGSTOP): a live
  // owner renews its lease, a frozen one cannot, so the lease lapses. A
  // retry on instance B (same store) takes over and finishes; then A thaws
  // and the original finishes late.
  check_flaw("unfenced-takeover", {"--lease", "2s"}, [](auto args) {
    ServiceProcess a(args), b(args);
    OrderApi api_a(a.url()), api_b(b.url());
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::string key = "uf-" + std::to_string(attempt);
      const auto body = order_json(key);
      REQUIRE(api_a.call("POST", "/_chaos", R"({"delay_ms":1500})").status == 200);
      auto original = api_a.start_in_progress(key, body, 30s);
      const auto seen = std::chrono::steady_clock::now();
      REQUIRE(api_a.call("DELETE", "/_chaos").status == 200);  // A's later requests are fast
      REQUIRE(::kill(a.pid(), SIGSTOP) == 0);
      std::this_thread::sleep_until(seen + 2s + 300ms);  // the frozen original's lease is over
      const auto takeover = api_b.post_order(key, body);
      REQUIRE(::kill(a.pid(), SIGCONT) == 0);
      REQUIRE(takeover.status == 201);
      if (is_replay(takeover)) {
        // The original finished before A was frozen: the precondition failed.
        WARN("takeover came too late (attempt " << attempt << "); repeating the scenario");
        continue;
      }
      original.get();
      const auto replay = api_b.post_order(key, body);
      REQUIRE(is_replay(replay));
      return api_b.order_count(key) == 2 || replay.body != takeover.body;
    }
    FAIL("the takeover never happened before the original finished");
    return false;
  });
}

TEST_CASE("flaw short-ttl: a retry inside the documented window executes again", "[flaw][slow]") {
  // Documented window (--dedup-ttl) 100s; the flaw keeps records 1s.
  check_flaw("short-ttl", {"--dedup-ttl", "100s"}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.post_order("st", order_json("st")).status == 201);
    std::this_thread::sleep_for(1500ms);
    const auto retry = api.post_order("st", order_json("st"));
    return !is_replay(retry) && api.order_count("st") == 2;
  });
}

TEST_CASE("flaw expiry-race: concurrent retries after the TTL all execute", "[flaw][slow]") {
  // TTL 1s; the sweep kept away (1h) so the correct service must replace the
  // expired record itself (its conditional UPDATE). The flaw pauses 1s
  // between reading "expired" and its overwrite: every retry reads it first.
  constexpr int kRetries = 16;
  for (const bool flawed : {false, true}) {
    TempDir dir;
    std::vector<std::string> args{"--port", "0", "--db", dir.file("ref.db"), "--dedup-ttl", "1s",
                                  "--sweep-interval", "1h", "--check-insert-pause", "1s"};
    if (flawed) args.insert(args.end(), {"--flaw", "expiry-race"});
    INFO((flawed ? std::string("with --flaw expiry-race") : std::string("correct service")));
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.post_order("er", order_json("er")).status == 201);
    std::this_thread::sleep_for(1500ms);
    int executed = 0;
    for (const auto& r : api.concurrent_posts(kRetries, "er", order_json("er")))
      if (r.status == 201 && !is_replay(r)) ++executed;
    const auto count = api.order_count("er");
    if (flawed) {
      CHECK(executed == kRetries);
      CHECK(count == 1 + kRetries);
    } else {
      CHECK(executed == 1);  // exactly one more execution after the TTL
      CHECK(count == 2);
    }
  }
}

TEST_CASE("flaw delete-releases-twice: a second DELETE raises stock again", "[flaw][slow]") {
  check_flaw("delete-releases-twice", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.post_order("dr", order_json("dr", "s5", 10)).status == 201);
    REQUIRE(api.call("DELETE", "/orders/1").status == 200);
    REQUIRE(api.call("DELETE", "/orders/1").status == 200);
    return api.stock("s5") != 1000;
  });
}

TEST_CASE("flaw put-increment: a repeated PUT changes the state again", "[flaw][slow]") {
  check_flaw("put-increment", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.post_order("pi", order_json("pi")).status == 201);
    api.call("PUT", "/orders/1/address", R"({"address":"Elm 5"})");
    const auto second = api.call("PUT", "/orders/1/address", R"({"address":"Elm 5"})");
    REQUIRE(second.status == 200);
    return json::parse(second.body).at("address") != "Elm 5";
  });
}

TEST_CASE("flaw instance-local-claims: a duplicate on another instance while the first runs executes too",
          "[flaw][slow]") {
  // Two processes on one database file, as behind a balancer. Within one
  // process the flaw behaves (a duplicate there is in progress); the
  // duplicate that lands on the other instance is its symptom.
  check_flaw("instance-local-claims", {"--lease", "5s"}, [](auto args) {
    ServiceProcess first(args);
    ServiceProcess second(args);
    OrderApi a(first.url());
    OrderApi b(second.url());
    const std::string key = "ilc";
    const auto body = order_json(key);
    auto slow = std::async(std::launch::async, [&] {
      return a.call("POST", "/orders?slow_ms=1500", body, {"Idempotency-Key: " + key});
    });
    std::this_thread::sleep_for(400ms);
    const auto same_process = a.post_order(key, body);
    REQUIRE(same_process.status == 409);  // one process: right either way
    const auto other_process = b.post_order(key, body);
    REQUIRE(slow.get().status == 201);
    const auto count = a.order_count(key);
    REQUIRE(count >= 1);
    // Correct: the claim is in the shared store, the other instance answers 409.
    CHECK((other_process.status == 409) == (count == 1));
    return count == 2 && other_process.status == 201;
  });
}

// Issue 33, classes 3-5.
TEST_CASE("flaw replay-reads-current: after a cancel the create's replay shows the cancelled order", "[flaw][slow]") {
  check_flaw("replay-reads-current", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto first = api.post_order("rc", order_json("rc"));
    REQUIRE(first.status == 201);
    REQUIRE(api.call("DELETE", "/orders/1").status == 200);
    const auto replay = api.post_order("rc", order_json("rc"));
    REQUIRE(is_replay(replay));
    return replay.body != first.body;
  });
}

TEST_CASE("flaw body-hash-key: the same order under a new key is swallowed as a replay", "[flaw][slow]") {
  check_flaw("body-hash-key", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.post_order("bh-1", order_json("bh")).status == 201);
    const auto second = api.post_order("bh-2", order_json("bh"));
    REQUIRE(second.status == 201);
    return is_replay(second) && api.order_count("bh") == 1;
  });
}

TEST_CASE("flaw key-truncate: two long keys sharing 64 characters are one key", "[flaw][slow]") {
  check_flaw("key-truncate", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const std::string prefix(250, 'x');
    REQUIRE(api.post_order(prefix + "k1", order_json("kt-1")).status == 201);
    const auto second = api.post_order(prefix + "k2", order_json("kt-2"));
    return second.status == 422;
  });
}

TEST_CASE("flaw truncate-stored-answer: the replay of a large answer is cut at 4096 bytes", "[flaw][slow]") {
  check_flaw("truncate-stored-answer", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    json order = json::parse(order_json("ta"));
    order["lines"] = json::array();
    for (int i = 0; i < 400; ++i) order["lines"].push_back({{"sku", "s1"}, {"qty", 1}, {"note", "gift wrap"}});
    const auto first = api.post_order("ta", order.dump());
    REQUIRE(first.status == 201);
    REQUIRE(first.body.size() > 4096);
    REQUIRE(json::parse(first.body).at("lines").size() == 400);  // echoed whole
    const auto replay = api.post_order("ta", order.dump());
    REQUIRE(is_replay(replay));
    return replay.body != first.body && replay.body.size() == 4096;
  });
}

// Issue 33, class 9: the router reads the query by name, the key store
// scopes by the target as spelled.
TEST_CASE("flaw key-includes-query: the same request with its query reordered executes again", "[flaw][slow]") {
  check_flaw("key-includes-query", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const std::vector<std::string> headers{"Content-Type: application/json", "Idempotency-Key: kq"};
    REQUIRE(api.call("POST", "/orders?channel=web&locale=en", order_json("kq"), headers).status == 201);
    const auto again = api.call("POST", "/orders?channel=web&locale=en", order_json("kq"), headers);
    REQUIRE(is_replay(again));  // byte for byte: the same key either way
    const auto reordered = api.call("POST", "/orders?locale=en&channel=web", order_json("kq"), headers);
    REQUIRE(reordered.status == 201);
    return !is_replay(reordered) && api.order_count("kq") == 2;
  });
}

// Issue 33, class 6.
TEST_CASE("flaw failure-replay-generic: a stored 4xx repeated gets a generic body", "[flaw][slow]") {
  check_flaw("failure-replay-generic", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const std::vector<std::string> headers{"Content-Type: application/json", "Idempotency-Key: fr"};
    const auto first = api.call("POST", "/orders?fail_status=402", order_json("fr"), headers);
    REQUIRE(first.status == 402);  // the downstream's final rejection, stored
    const auto repeat = api.call("POST", "/orders?fail_status=402", order_json("fr"), headers);
    REQUIRE(is_replay(repeat));
    REQUIRE(repeat.status == 402);
    return repeat.body != first.body;
  });
}

// Issue 46: a 5xx is an answer.
TEST_CASE("flaw in-progress-500: a duplicate while the first runs gets 500 instead of 409", "[flaw][slow]") {
  check_flaw("in-progress-500", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const std::string key = "ip500";
    const auto body = order_json(key);
    auto slow = std::async(std::launch::async, [&] {
      return api.call("POST", "/orders?slow_ms=1500", body, {"Idempotency-Key: " + key});
    });
    std::this_thread::sleep_for(400ms);
    const auto duplicate = api.post_order(key, body);
    REQUIRE(slow.get().status == 201);
    REQUIRE(api.order_count(key) == 1);  // one execution either way: only the answer is wrong
    if (duplicate.status == 409) CHECK(duplicate.header("retry-after") == "1");
    return duplicate.status == 500;
  });
}

TEST_CASE("flaw claim-conflict-500: concurrent duplicates that lose the claim get 500", "[flaw][slow]") {
  // The pause between the read and the claim (--check-insert-pause) opens
  // the window a twin's claim falls into.
  check_flaw("claim-conflict-500", {"--check-insert-pause", "200ms"}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto answers = api.concurrent_posts(16, "cc500", order_json("cc500"));
    REQUIRE(api.order_count("cc500") == 1);  // the atomic claim still decides: one execution
    int failures = 0;
    for (const auto& a : answers) failures += a.status == 500 ? 1 : 0;
    return failures > 0;
  });
}

// Issue 46, many keys at once: a whole-document answer store loses the
// answer a request of another key saved while it ran.
TEST_CASE("flaw whole-store-rewrite: a slow request's save erases another key's answer and its retry executes again",
          "[flaw][slow]") {
  check_flaw("whole-store-rewrite", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    auto slow = std::async(std::launch::async, [&] {
      return api.call("POST", "/orders?slow_ms=800", order_json("wsr-slow"), {"Idempotency-Key: wsr-slow"});
    });
    std::this_thread::sleep_for(200ms);  // the slow one has read the answers; another key completes meanwhile
    const auto first = api.post_order("wsr-fast", order_json("wsr-fast"));
    REQUIRE(first.status == 201);
    REQUIRE(slow.get().status == 201);
    const auto retry = api.post_order("wsr-fast", order_json("wsr-fast"));
    REQUIRE(retry.status == 201);
    // The slow key's own answer survived in either service: it wrote last.
    CHECK(is_replay(api.post_order("wsr-slow", order_json("wsr-slow"))));
    return !is_replay(retry) && api.order_count("wsr-fast") == 2;
  });
}

// Issue 46, a restart before a client-layer check: the fingerprint was only
// in the first process's memory.
TEST_CASE("flaw memory-fingerprint: after a restart another payload under a used key gets the first answer",
          "[flaw][slow]") {
  check_flaw("memory-fingerprint", {}, [](auto args) {
    {
      ServiceProcess service(args);
      OrderApi api(service.url());
      REQUIRE(api.post_order("mfp", order_json("mfp")).status == 201);
      // Within the process the fingerprint is known either way.
      REQUIRE(api.post_order("mfp", order_json("mfp", "s1", 2)).status == 422);
      REQUIRE(service.terminate() == 0);
    }
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto reuse = api.post_order("mfp", order_json("mfp", "s1", 2));
    REQUIRE(api.order_count("mfp") == 1);  // executed once either way: only the check is lost
    return reuse.status == 201 && is_replay(reuse);
  });
}

// Issue 46, a client abort: the client gives up while the handler runs.
TEST_CASE("flaw abort-stores-empty: a client that gave up while the handler ran gets an empty stored answer on retry",
          "[flaw][slow]") {
  check_flaw("abort-stores-empty", {}, [](auto args) {
    ServiceProcess service(args);
    OrderApi api(service.url());
    REQUIRE(api.call("POST", "/_chaos", R"({"delay_ms":800})").status == 200);
    const auto given_up = api.post_order("abort", order_json("abort"), {}, 200ms);
    REQUIRE(given_up.status == 0);  // no answer: the client's timeout closed the connection
    REQUIRE(api.call("DELETE", "/_chaos").status == 200);
    std::this_thread::sleep_for(1200ms);  // the handler has completed by now
    const auto retry = api.post_order("abort", order_json("abort"));
    REQUIRE(is_replay(retry));
    REQUIRE(api.order_count("abort") == 1);  // one execution either way: only the stored answer is wrong
    return retry.status == 200 && retry.body.empty();
  });
}

// Issue 46, requests while the service starts: the flawed service listens
// before its store is recovered and runs keyed requests without their key
// meanwhile; its readiness request says so (503), its order routes do not.
TEST_CASE("flaw serve-before-recovery: a retry while the service starts executes again", "[flaw][slow]") {
  // Polls GET /healthz until 200, at most 5 s; the statuses seen before it.
  auto wait_ready = [](OrderApi& api) {
    std::vector<int> before;
    for (int i = 0; i < 250; ++i) {
      const int status = api.call("GET", "/healthz").status;
      if (status == 200) return before;
      before.push_back(status);
      std::this_thread::sleep_for(20ms);
    }
    FAIL("the service did not answer /healthz 200 within 5 s");
    return before;
  };
  check_flaw("serve-before-recovery", {}, [&](auto args) {
    {
      ServiceProcess service(args);
      OrderApi api(service.url());
      wait_ready(api);
      REQUIRE(api.post_order("sbr", order_json("sbr")).status == 201);
      REQUIRE(service.terminate() == 0);
    }
    ServiceProcess service(args);
    OrderApi api(service.url());
    const auto early = api.post_order("sbr", order_json("sbr"));  // as soon as it listens
    const std::vector<int> not_ready = wait_ready(api);
    const auto late = api.post_order("sbr", order_json("sbr"));
    REQUIRE(is_replay(late));  // once ready, the stored answer either way
    const bool executed_again = api.order_count("sbr") == 2;
    // The symptom and its window go together: the flawed service said it was
    // not ready (503) while it ran the retry unmarked.
    CHECK(executed_again == (!not_ready.empty() && early.status == 201 && !is_replay(early)));
    return executed_again;
  });
}
