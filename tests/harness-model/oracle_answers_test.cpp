// Issue 46: every answer is an answer. A 5xx to a duplicate is judged, not
// set aside as "retryable"; what an oracle does set aside it counts and
// names; a duplicate that overlapped a running request reached the premise
// whatever it got; downstream effects are counted as distinct effects, not
// calls; a contract the target declares (recovery bound, natural key,
// fingerprint) is what a verdict holds it to.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "literal_history.h"
#include "model/history_events.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {
const Answer kCreated{201, R"({"id":1,"biz_no":"b1","trace":"a"})", {{"Location", "/orders/1"}}};
const Answer kConflict{409, R"({"title":"in progress"})", {{"Retry-After", "1"}}};
const Answer kServerError{500, R"({"title":"internal error"})"};
const Answer kMismatch{422, R"({"title":"key reused with another payload"})"};

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TargetDescription WithInProgress(std::vector<int> also) {
  TargetDescription t = ShopTarget();
  t.idempotency.in_progress_also = std::move(also);
  return t;
}
}  // namespace

TEST_CASE("in_progress: a 500 to a duplicate while the first runs is a violation, not a retryable answer set aside") {
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5, kServerError)
      .Send("burst-2", "create_order", "k1", "b1", 2, 6, kConflict)
      .Records("create_order", "b1", 1, 300);
  Verdict v = RunOracle("in_progress", h.history());
  INFO(v.evidence);
  CHECK(v.is_violation());
  CHECK(Has(v.evidence, "got a failure 500"));
  CHECK(Has(v.evidence, "a 5xx tells the client the request failed"));
  // Found against the reference's claim-conflict-500: duplicates failing
  // alike share nothing (each overlapped the executing request, which got 201).
  LiteralHistory alike;
  alike.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5, kServerError)
      .Send("burst-2", "create_order", "k1", "b1", 2, 6, kServerError)
      .Records("create_order", "b1", 1, 300);
  Verdict both = RunOracle("in_progress", alike.history());
  INFO(both.evidence);
  CHECK(both.is_violation());
  CHECK(both.details.Findings().size() == 2);
  // Declared as the target's own in-progress answer, the same 500 holds.
  Verdict declared = RunOracle("in_progress", h.history(), WithInProgress({500}));
  INFO(declared.evidence);
  CHECK(declared.status == VerdictStatus::kValid);
}

TEST_CASE("in_progress: a 5xx the running request got too is set aside, counted, and the premise was reached") {
  // The first failed with a 503 and a duplicate that waited for it shares
  // that answer; a later request executes.
  const Answer unavailable{503, R"({"title":"downstream"})", {{"Retry-After", "1"}}};
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 200, unavailable)
      .Send("burst-1", "create_order", "k1", "b1", 1, 201, unavailable)
      .Send("client-0", "create_order", "k1", "b1", 400, 450, kCreated)
      .Records("create_order", "b1", 1, 500);
  Verdict v = RunOracle("in_progress", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK_FALSE(v.PremiseNotReached());
  CHECK(Has(v.evidence, "1 duplicate(s) overlapped a running request"));
  CHECK(Has(v.evidence, "1 answer(s) set aside: 503 as the running request x1"));
  CHECK(v.details.tallies.set_aside.value_or(std::map<std::string, std::int64_t>{})["503 as the running request"] == 1);
}

TEST_CASE("in_progress: a duplicate that overlapped a running request and got no answer reached the premise") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Lost("client-1", "create_order", "k1", "b1", 50, 5000)
      .Records("create_order", "b1", 1, 6000);
  Verdict v = RunOracle("in_progress", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK_FALSE(v.PremiseNotReached());
  CHECK_FALSE(Has(v.evidence, "no duplicate overlapped"));
  CHECK(Has(v.evidence, "set aside: no answer x1"));
}

TEST_CASE("in_progress: a valid verdict says how many answers it set aside and why") {
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5, kConflict)
      .Lost("burst-2", "create_order", "k1", "b1", 2, 5000)
      .Records("create_order", "b1", 1, 6000);
  Verdict v = RunOracle("in_progress", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(Has(v.evidence, "; 1 answer(s) set aside: no answer x1"));
  REQUIRE(v.premise.count);
  CHECK(*v.premise.count == 2);
}

TEST_CASE("in_progress: a 200 with a body other than the first is another success, never an empty one") {
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5,
            Answer{200, R"({"status":"duplicate"})", {{"Idempotent-Replayed", "true"}}});
  Verdict v = RunOracle("in_progress", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK_FALSE(Has(v.evidence, "empty success"));
  CHECK(Has(v.evidence, "got another success 200"));
  LiteralHistory empty;
  empty.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5, Answer{200, "", {{"Idempotent-Replayed", "true"}}});
  Verdict e = RunOracle("in_progress", empty.history());
  INFO(e.evidence);
  CHECK(Has(e.evidence, "got an empty success 200"));
}

TEST_CASE("identical_replay: a 500 to a retry of the completed key is no replay, and set-aside answers are said") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, kServerError);
  Verdict v = RunOracle("identical_replay", h.history());
  INFO(v.evidence);
  CHECK(v.is_violation());
  CHECK(Has(v.evidence, "got 500"));

  LiteralHistory lost;
  lost.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Lost("client-0", "create_order", "k1", "b1", 20, 5000)
      .Send("client-0", "create_order", "k1", "b1", 5100, 5110,
            Answer{201, R"({"id":1,"biz_no":"b1","trace":"b"})",
                   {{"Location", "/orders/1"}, {"Idempotent-Replayed", "true"}}});
  Verdict l = RunOracle("identical_replay", lost.history(), PlainTarget());
  INFO(l.evidence);
  CHECK(Has(l.evidence, "1 answer(s) set aside: no answer x1"));
}

TEST_CASE("lease_recovery: a URL that differs only by the port a restart changed is no difference of the request") {
  LiteralHistory h;
  h.Carrying({"POST", "http://127.0.0.1:1111/orders", {}, "{}"})
      .Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 500, 510, kConflict)
      .Variant("traced")
      .Carrying({"POST", "http://127.0.0.1:2222/orders", {}, "{}"})
      .Send("client-3", "create_order", "k1", "b1", 2400, 2430, kMismatch)
      .Records("create_order", "b1", 0, 3000);
  Verdict v = RunOracle("lease_recovery", WithControl(h.history(), "restart", 300), ShopTarget(), {{"lease", "2s"}});
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(Has(v.evidence, "they differ: variant none against traced"));
  CHECK_FALSE(Has(v.evidence, "URL"));
}

TEST_CASE("lease_recovery: a 500 to every retry inside the lease is an answer and not a retryable failure passed over") {
  // Found on a middleware: after a crash every retry inside the lease got 500
  // and the verdict was valid ("in-progress while the lease held").
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kServerError)
      .Send("client-0", "create_order", "k1", "b1", 1500, 1520, kServerError)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2700, kCreated)
      .Records("create_order", "b1", 1, 3000);
  const History crashed = WithControl(h.history(), "kill", 300);
  Verdict v = RunOracle("lease_recovery", crashed, ShopTarget(), {{"lease", "2s"}});
  INFO(v.evidence);
  CHECK(v.is_violation());
  CHECK(Has(v.evidence, "was answered 500 {"));
  CHECK(Has(v.evidence, "while the crashed request's lease was live (expected 409)"));
  CHECK(Has(v.evidence, "a 5xx tells the client the request failed"));
  // The target's own in-progress answer: the claim held.
  Verdict declared = RunOracle("lease_recovery", crashed, WithInProgress({500}), {{"lease", "2s"}});
  INFO(declared.evidence);
  CHECK(declared.status == VerdictStatus::kValid);
  // A retry inside the lease with no answer is set aside, and said so.
  LiteralHistory lost;
  lost.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict)
      .Lost("client-0", "create_order", "k1", "b1", 1000, 1200)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2700, kCreated)
      .Records("create_order", "b1", 1, 3000);
  Verdict l = RunOracle("lease_recovery", WithControl(lost.history(), "kill", 300), ShopTarget(), {{"lease", "2s"}});
  INFO(l.evidence);
  CHECK(l.status == VerdictStatus::kValid);
  CHECK(Has(l.evidence, "; 1 answer(s) set aside: no answer x1"));
  REQUIRE(l.details.tallies.set_aside.has_value());
  CHECK(l.details.tallies.set_aside->at("no answer") == 1);
}

TEST_CASE("retryable_released: a retry that differed from the failed request and was refused is unknown and no wrong cause") {
  // The failure is declared as a body patch (the only way the target offers):
  // the retry goes without it, so a fingerprint over the body refuses it 422
  // where a byte-identical retry would get the stored 503.
  const Answer unavailable{503, R"({"title":"downstream"})", {{"Retry-After", "1"}}};
  LiteralHistory h;
  h.Variant("fails_retryably")
      .Carrying({"POST", "http://127.0.0.1:1/orders", {}, R"({"biz_no":"b1","fail":503})"})
      .Send("client-0", "create_order", "k1", "b1", 0, 10, unavailable)
      .Variant("")
      .Carrying({"POST", "http://127.0.0.1:1/orders", {}, R"({"biz_no":"b1"})"})
      .Send("client-0", "create_order", "k1", "b1", 110, 120, kMismatch)
      .Records("create_order", "b1", 0, 200);
  Verdict v = RunOracle("retryable_released", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK_FALSE(Has(v.evidence, "instead of executing"));
  CHECK(Has(v.evidence, "differed from the failed request"));
  CHECK(Has(v.evidence, "1 answer(s) set aside: 422 to a retry that differed from the failed request x1"));
  // The same retry byte for byte refused 422: the key is held by the failure, a violation.
  LiteralHistory same;
  same.Variant("fails_retryably")
      .Send("client-0", "create_order", "k1", "b1", 0, 10, unavailable)
      .Send("client-0", "create_order", "k1", "b1", 110, 120, kMismatch)
      .Records("create_order", "b1", 0, 200);
  Verdict s = RunOracle("retryable_released", same.history());
  INFO(s.evidence);
  CHECK(s.is_violation());
  CHECK(Has(s.evidence, "instead of executing"));
}

// --- Effects, not calls --------------------------------------------------

TEST_CASE("intent_reconciled: one effect id listed twice (a re-sent charge answered with the first) is one effect") {
  const Answer paid{201, R"({"transaction_id":"txn-1"})"};
  LiteralHistory h;
  h.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 2500, 2510, paid)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1", "txn-1"}), 2600)
      .Probe("payment", "payment", nlohmann::json::array({"txn-1"}), 2610);
  Verdict v = RunOracle("intent_reconciled", h.history(), ShopTarget(), {{"record", "payment"}});
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(Has(v.evidence, "exactly one external effect (txn-1)"));
  CHECK(Has(v.evidence, "the ledger lists it 2 times"));
  // Two ids are two effects, named.
  LiteralHistory twice;
  twice.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 2500, 2510, paid)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1", "txn-2", "txn-1"}), 2600);
  Verdict t = RunOracle("intent_reconciled", twice.history());
  INFO(t.evidence);
  CHECK(t.is_violation());
  CHECK(Has(t.evidence, "2 external effects (txn-1, txn-2)"));
}

namespace {
const TargetDescription& EgressTarget(bool ledger_probe) {
  static const auto load = [](bool with_probe) -> const TargetDescription& {
    std::string text = R"(name: pay
base_url: "http://127.0.0.1:{{port}}"
idempotency: {replay: {header: Idempotent-Replayed, value: "true"}}
actions:
  create_order:
    role: pay
    request: {method: POST, path: /payments, json: {biz_no: "{{biz}}"}}
    calls: [provider]
egress:
  provider: {upstream: "http://127.0.0.1:2"}
)";
    if (with_probe)
      text += "probes:\n  charges: {role: ledger, of: create_order, egress: provider, value: \"$.answer.id\"}\n";
    auto r = ParseTarget(text, "pay.yaml");
    if (!r.ok()) throw std::runtime_error(r.status().ToString());
    return *new TargetDescription(*r);  // test-lifetime
  };
  static const TargetDescription& with = load(true);
  static const TargetDescription& without = load(false);
  return ledger_probe ? with : without;
}

// A kill right after the first POST /charge, then a retry that charges
// again: the second call answered with effect `second_id` ("" = an answer
// naming no effect), each call under its downstream key ("" = none sent).
History ChargedTwice(const std::string& second_id, const std::string& first_key = "",
                     const std::string& second_key = "") {
  LiteralHistory requests;
  requests.Lost("client-0", "create_order", "k1", "b1", 0, 100);
  requests.Send("client-0", "create_order", "k1", "b1", 2500, 2600, Answer{});
  History h = requests.history();
  const auto call = [&](const std::string& id, const std::string& key, int t) {
    HistoryEvent e = EgressEvent({{"egress", "provider"}, {"method", "POST"}, {"path", "/charge"},
                                  {"target", "/charge"}, {"status", 200},
                                  {"answer", id.empty() ? nlohmann::json{{"status", "succeeded"}}
                                                        : nlohmann::json{{"id", id}}},
                                  {"key", key.empty() ? nlohmann::json() : nlohmann::json(key)}});
    e.time_ns = std::int64_t{t} * 1000000;
    h.Append(e);
  };
  call(second_id.empty() ? "" : "ch_1", first_key, 50);
  HistoryEvent struck = InjectorEvent({{"fault", "kill-after-answer"}, {"name", "killed"}, {"phase", "injected"},
                                       {"on", "egress.provider"},
                                       {"request", {{"method", "POST"}, {"target", "/charge"}, {"body", "{}"}}}});
  struck.time_ns = 60 * 1000000;
  h.Append(struck);
  call(second_id, second_key, 2550);
  return h;
}
}  // namespace

TEST_CASE("downstream_once: a call re-sent and answered with the first effect is reconciliation, named by its id") {
  const nlohmann::json params = {{"fault", "killed"}, {"actions", {"create_order"}}};
  Verdict same = RunOracle("downstream_once", ChargedTwice("ch_1"), EgressTarget(true), params);
  INFO(same.evidence);
  CHECK(same.status == VerdictStatus::kValid);
  CHECK(Has(same.evidence, "effect (ch_1)"));
  CHECK(Has(same.evidence, "2 calls answered 2xx naming that effect: reconciled, not repeated"));
  CHECK(same.details.lists.effect_ids == std::vector<std::string>{"ch_1"});

  Verdict other = RunOracle("downstream_once", ChargedTwice("ch_2"), EgressTarget(true), params);
  INFO(other.evidence);
  CHECK(other.is_violation());
  CHECK(Has(other.evidence, "2 distinct effects (ch_1, ch_2) of POST /charge"));
  // With no ledger probe to name effects, every 2xx call is one.
  Verdict unnamed = RunOracle("downstream_once", ChargedTwice("ch_1"), EgressTarget(false), params);
  INFO(unnamed.evidence);
  CHECK(unnamed.is_violation());
}

TEST_CASE("downstream_once: calls re-sent under one downstream key are one effect where no answer names it") {
  // A reconciling service re-sends the charge under the same provider key;
  // the provider's answer names no effect id and no ledger probe reads one.
  const nlohmann::json params = {{"fault", "killed"}, {"actions", {"create_order"}}};
  Verdict same = RunOracle("downstream_once", ChargedTwice("", "pk-1", "pk-1"), EgressTarget(false), params);
  INFO(same.evidence);
  CHECK(same.status == VerdictStatus::kValid);
  CHECK(Has(same.evidence, "effect (downstream key pk-1)"));
  CHECK(Has(same.evidence, "2 calls answered 2xx naming that effect: reconciled, not repeated"));
  CHECK(same.details.lists.downstream_keys == std::vector<std::string>{"pk-1"});
  // A new downstream key per execution (no-intent): two effects, both named.
  Verdict other = RunOracle("downstream_once", ChargedTwice("", "pk-1", "pk-2"), EgressTarget(false), params);
  INFO(other.evidence);
  CHECK(other.is_violation());
  CHECK(Has(other.evidence, "2 distinct effects (downstream key pk-1, downstream key pk-2)"));
  // An effect id the answers name wins over the key: two ids under one key are two effects.
  Verdict ids = RunOracle("downstream_once", ChargedTwice("ch_2", "pk-1", "pk-1"), EgressTarget(true), params);
  INFO(ids.evidence);
  CHECK(ids.is_violation());
  CHECK(Has(ids.evidence, "2 distinct effects (ch_1, ch_2)"));
}

TEST_CASE("intent_reconciled: a ledger of egress entries under one downstream key is one effect") {
  const auto entry = [](const std::string& key, int sent_ms) {
    return nlohmann::json{{"egress", "provider"}, {"method", "POST"}, {"path", "/charge"},
                          {"target", "/charge"}, {"status", 200}, {"answer", {{"status", "succeeded"}}},
                          {"key", key}, {"sent_ns", std::int64_t{sent_ms} * 1000000}};
  };
  const Answer paid{201, R"({"status":"paid"})"};
  LiteralHistory h;
  h.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 2500, 2510, paid)
      .Probe("ledger", "ledger", nlohmann::json::array({entry("pk-1", 20), entry("pk-1", 2505)}), 2600);
  Verdict v = RunOracle("intent_reconciled", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(Has(v.evidence, "exactly one external effect (downstream key pk-1)"));
  CHECK(Has(v.evidence, "the ledger lists it 2 times: calls re-sent under the same downstream key"));
  CHECK(v.details.lists.downstream_keys == std::vector<std::string>{"pk-1"});

  LiteralHistory two;
  two.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 2500, 2510, paid)
      .Probe("ledger", "ledger", nlohmann::json::array({entry("pk-1", 20), entry("pk-2", 2505)}), 2600);
  Verdict t = RunOracle("intent_reconciled", two.history());
  INFO(t.evidence);
  CHECK(t.is_violation());
  CHECK(Has(t.evidence, "2 external effects (downstream key pk-1, downstream key pk-2)"));
}

TEST_CASE("target loader: an egress's key_header names the downstream key, Idempotency-Key unless declared") {
  const auto load = [](const std::string& egress) {
    return ParseTarget(R"(name: pay
base_url: "http://127.0.0.1:{{port}}"
actions:
  pay: {role: pay, request: {method: POST, path: /payments}}
egress:
  provider: )" + egress + "\n",
                       "pay.yaml");
  };
  auto plain = load(R"({upstream: "http://127.0.0.1:2"})");
  INFO((plain.ok() ? std::string() : plain.status().ToString()));
  REQUIRE(plain.ok());
  CHECK(plain->egress.at("provider").key_header == "Idempotency-Key");
  auto named = load(R"({upstream: "http://127.0.0.1:2", key_header: X-Charge-Key})");
  REQUIRE(named.ok());
  CHECK(named->egress.at("provider").key_header == "X-Charge-Key");
  auto none = load(R"({upstream: "http://127.0.0.1:2", key_header: none})");
  REQUIRE(none.ok());
  CHECK(none->egress.at("provider").key_header.empty());
  auto tcp = load(R"({upstream: "127.0.0.1:2", protocol: tcp, key_header: K})");
  REQUIRE_FALSE(tcp.ok());
  CHECK(Has(tcp.status().message(), "key_header"));
}

// --- Contracts that speak ---------------------------------------------------

namespace {
// The shop target with `extra` added to its idempotency: section.
TargetDescription ShopWith(const std::string& extra, const std::string& profile = "ietf") {
  std::string text = R"(name: shop
base_url: "http://127.0.0.1:{{port}}"
idempotency:
  replay: {header: Idempotent-Replayed, value: "true"}
)" + extra + R"(
compare_headers: [Location]
volatile: ["$.trace"]
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", order_ref: "r-{{biz}}", qty: 1}}
    records: {request: {path: "/orders?biz_no={{biz}}"}, count: "$.count"}
)";
  auto r = ParseTarget(text, "shop.yaml", profile);
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  return *r;
}
}  // namespace

TEST_CASE("target loader: recovery_bound, natural_key and fingerprint are read, checked, and default as documented") {
  const TargetDescription plain = ShopWith("");
  CHECK_FALSE(plain.idempotency.recovery_bound_declared);
  CHECK(plain.idempotency.recovery_bound == std::chrono::seconds(30));
  CHECK_FALSE(plain.idempotency.natural_key);
  CHECK(plain.idempotency.fingerprint == IdempotencyContract::Fingerprint::kJson);

  const TargetDescription declared =
      ShopWith("  recovery_bound: 24h\n  natural_key: $.order_ref\n  fingerprint: bytes\n");
  CHECK(declared.idempotency.recovery_bound_declared);
  CHECK(declared.idempotency.recovery_bound == std::chrono::hours(24));
  REQUIRE(declared.idempotency.natural_key);
  CHECK(declared.idempotency.natural_key->text() == "$.order_ref");
  CHECK(declared.idempotency.fingerprint == IdempotencyContract::Fingerprint::kBytes);
  CHECK(ShopWith("  fingerprint: json\n").idempotency.fingerprint == IdempotencyContract::Fingerprint::kJson);

  // Wrong values: an error at the value's line and column.
  try {
    ShopWith("  fingerprint: sha256\n");
    FAIL("fingerprint: sha256 loaded");
  } catch (const std::runtime_error& e) {
    INFO(e.what());
    CHECK(Has(e.what(), "shop.yaml:5:16"));
    CHECK(Has(e.what(), "idempotency.fingerprint must be json or bytes, found 'sha256'"));
  }
  try {
    ShopWith("  natural_key: order_ref\n");
    FAIL("natural_key: order_ref loaded");
  } catch (const std::runtime_error& e) {
    INFO(e.what());
    CHECK(Has(e.what(), "shop.yaml:5:16"));
    CHECK(Has(e.what(), "natural_key"));
  }
}

TEST_CASE("lease_recovery: a key blocked past the recovery bound is a violation, the declared bound named as the contract") {
  LiteralHistory blocked;
  blocked.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2610, kConflict)
      .Records("create_order", "b1", 0, 3000);
  const History h = WithControl(blocked.history(), "kill", 300);
  TargetDescription bound = ShopWith("  recovery_bound: 2s\n");
  Verdict v = RunOracle("lease_recovery", h, bound);
  INFO(v.evidence);
  CHECK(v.is_violation());
  CHECK(Has(v.evidence, "past the recovery bound the target declares, idempotency.recovery_bound 2s"));
  // A bound longer than the retries: its contract, not judged.
  Verdict day = RunOracle("lease_recovery", h, ShopWith("  recovery_bound: 24h\n"));
  INFO(day.evidence);
  CHECK(day.status == VerdictStatus::kUnknown);
  CHECK(Has(day.evidence, "idempotency.recovery_bound 24h"));
}

TEST_CASE("new_key_executes: the same request refused under a new key is a violation unless a natural key explains it") {
  LiteralHistory h;
  h.Carrying({"POST", "http://127.0.0.1:1/orders", {}, R"({"biz_no":"b1","order_ref":"r-b1","qty":1})"})
      .Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b1", 60, 70, Answer{409, R"({"title":"order exists"})"})
      .Records("create_order", "b1", 1, 100);
  Verdict strict = RunOracle("new_key_executes", h.history(), ShopWith(""));
  INFO(strict.evidence);
  CHECK(strict.is_violation());
  CHECK(Has(strict.evidence, "under a new key is a new request and executes"));
  CHECK(Has(strict.evidence, "idempotency.natural_key"));

  Verdict natural = RunOracle("new_key_executes", h.history(), ShopWith("  natural_key: $.order_ref\n"));
  INFO(natural.evidence);
  CHECK(natural.status == VerdictStatus::kValid);
  CHECK(Has(natural.evidence, "refused as the same business request by the natural key $.order_ref"));
}

TEST_CASE("identical_replay: a stored failure is not applicable under store-2xx-only") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{402, R"({"title":"declined"})"})
      .Send("client-0", "create_order", "k1", "b1", 60, 70, Answer{402, R"({"title":"declined"})"});
  const nlohmann::json failures = {{"failures", true}};
  Verdict v = RunOracle("identical_replay", h.history(), ShopWith("", "store-2xx-only"), failures);
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kNotApplicable);
  CHECK(Has(v.evidence, "store-2xx-only"));
  CHECK(RunOracle("identical_replay", h.history(), ShopWith(""), failures).status != VerdictStatus::kNotApplicable);
}

TEST_CASE("identical_replay: an equivalent body refused as another payload, by the declared fingerprint") {
  const Answer replayed{201, R"({"id":1,"biz_no":"b1","trace":"b"})",
                        {{"Location", "/orders/1"}, {"Idempotent-Replayed", "true"}}};
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 70, kMismatch, "reordered")
      .Send("client-0", "create_order", "k1", "b1", 80, 90, replayed, "header_case");
  // bytes: the target's contract.
  Verdict bytes = RunOracle("identical_replay", h.history(), ShopWith("  fingerprint: bytes\n"));
  INFO(bytes.evidence);
  CHECK(bytes.status == VerdictStatus::kValid);
  CHECK(Has(bytes.evidence, "1 equivalent body(ies) refused as another payload"));
  // json under ietf: a deviation (the draft allows a payload checksum).
  Verdict ietf = RunOracle("identical_replay", h.history(), ShopWith(""));
  INFO(ietf.evidence);
  CHECK(ietf.is_deviation());
  CHECK(ietf.rule.id == "ietf/json-equivalence");
  // json under a profile that compares parsed parameters: a violation.
  Verdict stripe = RunOracle("identical_replay", h.history(), ShopWith("  mismatch: 422\n", "stripe-v1"));
  INFO(stripe.evidence);
  CHECK(stripe.is_violation());
  CHECK(stripe.rule.id == "stripe-v1/json-equivalence");
  // Another equal form refused is no fingerprint question: a violation under bytes too.
  LiteralHistory header;
  header.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 70, kMismatch, "header_case");
  CHECK(RunOracle("identical_replay", header.history(), ShopWith("  fingerprint: bytes\n")).is_violation());
}

// Issue 46 item 4: every verdict says how many answers it set aside and why,
// also those of caller_scope, the refusal oracles and no_false_dedup.
TEST_CASE("caller_scope, mismatch_rejected, missing_key_rejected and no_false_dedup count what they set aside") {
  // Bob's first use of Alice's first key got no answer; his use of her
  // second key is judged: held, with the lost one counted.
  LiteralHistory callers;
  callers.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .As("bob").Lost("client-1", "create_order", "k1", "b1", 20, 5000)
      .As("alice").Send("client-0", "create_order", "k2", "b2", 6000, 6010, kCreated)
      .As("bob").Send("client-1", "create_order", "k2", "b2", 6020, 6030, Answer{201, R"({"id":3,"biz_no":"b2"})"});
  Verdict c = RunOracle("caller_scope", callers.history(), CallersTarget());
  INFO(c.evidence);
  CHECK(c.status == VerdictStatus::kValid);
  CHECK(Has(c.evidence, "; 1 answer(s) set aside: no answer x1"));
  REQUIRE(c.details.tallies.set_aside.has_value());
  CHECK(c.details.tallies.set_aside->at("no answer") == 1);

  LiteralHistory reuse;
  reuse.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, kMismatch, "other")
      .Send("client-0", "create_order", "k1", "b1", 30, 35, Answer{503, "{}"}, "other");
  Verdict m = RunOracle("mismatch_rejected", reuse.history());
  INFO(m.evidence);
  CHECK(m.status == VerdictStatus::kValid);
  CHECK(Has(m.evidence, "; 1 answer(s) set aside: 503 retryable x1"));

  LiteralHistory keyless;
  keyless.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "{}"})
      .Lost("client-0", "create_order", "", "b2", 20, 5000);
  Verdict k = RunOracle("missing_key_rejected", keyless.history());
  INFO(k.evidence);
  CHECK(k.status == VerdictStatus::kValid);
  CHECK(Has(k.evidence, "; 1 answer(s) set aside: no answer x1"));

  LiteralHistory dedup;
  dedup.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Replay(201, R"({"id":1,"biz_no":"b1","trace":"a"})"))
      .Send("client-0", "create_order", "k2", "b2", 30, 35, Answer{400, "{}"})
      .Send("client-0", "create_order", "k2", "b2", 40, 45, Answer{400, "{}", {{"Idempotent-Replayed", "true"}}})
      .Records("create_order", "b1", 1, 100);
  Verdict d = RunOracle("no_false_dedup", dedup.history());
  INFO(d.evidence);
  CHECK(d.status == VerdictStatus::kValid);
  CHECK(Has(d.evidence, "; 1 answer(s) set aside: 400 replayed refusal x1"));
}
