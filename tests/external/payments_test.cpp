// The reference service's side effects against a real idemproof-stub, both
// real processes on loopback: payments through a kill right after the
// charge, provider callbacks, the queue inbox — correct, and each flaw.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "../reference/http_client.h"
#include "../reference/temp_dir.h"
#include "child.h"

using namespace idemproof::testing;
using idemproof::ref::testing::http_call;
using idemproof::ref::testing::HttpCall;
using idemproof::ref::testing::TempDir;
using nlohmann::json;

namespace {

const char* kListening = R"(listening on 127\.0\.0\.1:(\d+))";

std::unique_ptr<Child> start_stub() {
  return std::make_unique<Child>(std::vector<std::string>{built("payment-stub/idemproof-stub"), "--port", "0"}, kListening);
}

std::unique_ptr<Child> start_ref(const TempDir& dir, const Child& stub, const std::string& flaw = "none") {
  return std::make_unique<Child>(
      std::vector<std::string>{built("reference-impl/idemproof-ref"), "--port", "0", "--db", dir.file("ref.db"),
                               "--lease", "1s", "--payment-provider", stub.url(), "--provider-timeout", "2s",
                               "--flaw", flaw},
      kListening);
}

json get(const std::string& url) {
  auto r = http_call(HttpCall{"GET", url, {}, std::nullopt});
  REQUIRE(r.status == 200);
  return json::parse(r.body);
}

idemproof::ref::testing::HttpResult post(const std::string& url, const json& body,
                                         const std::string& key = "") {
  HttpCall call{"POST", url, {"Content-Type: application/json"}, body.dump()};
  if (!key.empty()) call.headers.push_back("Idempotency-Key: " + key);
  call.timeout = std::chrono::seconds(5);
  return http_call(call);
}

// The scenario of issue 5: the provider kills the caller right after the
// charge commits; restart; retry until the lease has passed.
struct KillAfterCharge {
  json ledger;
  json payments;
  idemproof::ref::testing::HttpResult final_answer;
  long early_status = 0;
};

KillAfterCharge kill_after_charge(const std::string& flaw) {
  TempDir dir;
  auto stub = start_stub();
  auto ref = start_ref(dir, *stub, flaw);
  const json payment = {{"biz_no", "b1"}, {"amount", 100}};
  REQUIRE(post(stub->url() + "/_faults", {{"mode", "kill_after_commit"}, {"pid", ref->pid()}}).status == 200);
  const auto lost = post(ref->url() + "/payments", payment, "k1");
  CHECK(lost.status == 0);  // the caller died before answering
  const int status = ref->wait_exit(std::chrono::seconds(5));
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  ref = start_ref(dir, *stub, flaw);
  KillAfterCharge out;
  out.early_status = post(ref->url() + "/payments", payment, "k1").status;
  for (int i = 0; i < 40; ++i) {  // until the dead owner's lease (1s) has passed
    out.final_answer = post(ref->url() + "/payments", payment, "k1");
    if (out.final_answer.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  out.ledger = get(stub->url() + "/ledger?reference=b1");
  out.payments = get(ref->url() + "/payments?biz_no=b1");
  return out;
}

}  // namespace

TEST_CASE("a kill right after the charge: restart + retry leaves one charge and a record of it", "[payments][slow]") {
  const auto run = kill_after_charge("none");
  CHECK(run.early_status == 409);  // the dead owner's lease still holds
  REQUIRE(run.final_answer.status == 201);
  CHECK(run.ledger["count"] == 1);
  // Reconciled (on start or on the retry), never charged again.
  CHECK(run.ledger["attempts"].size() == 1);
  REQUIRE(run.payments["count"] == 1);
  CHECK(run.payments["items"][0]["transaction_id"] == run.ledger["effects"][0]["transaction_id"]);
  CHECK(json::parse(run.final_answer.body)["transaction_id"] == run.ledger["effects"][0]["transaction_id"]);
}

TEST_CASE("flaw no-intent: the retry after the crash charges again", "[payments][flaw][slow]") {
  const auto run = kill_after_charge("no-intent");
  REQUIRE(run.final_answer.status == 201);
  CHECK(run.ledger["count"] == 2);
}

TEST_CASE("a provider failure is retryable, a timeout that charged is reconciled, not charged again", "[payments][slow]") {
  TempDir dir;
  auto stub = start_stub();
  auto ref = start_ref(dir, *stub);
  const json payment = {{"biz_no", "b2"}, {"amount", 7}};
  REQUIRE(post(stub->url() + "/_faults", {{"mode", "fail"}, {"status", 503}}).status == 200);
  const auto failed = post(ref->url() + "/payments", payment, "k2");
  CHECK(failed.status == 503);
  CHECK(!failed.header("idempotent-replayed"));
  REQUIRE(post(stub->url() + "/_faults", {{"mode", "timeout"}, {"delay_ms", 4000}}).status == 200);
  CHECK(post(ref->url() + "/payments", payment, "k2").status == 503);  // provider timed out (2s)
  const auto ok = post(ref->url() + "/payments", payment, "k2");
  REQUIRE(ok.status == 201);
  const json ledger = get(stub->url() + "/ledger?reference=b2");
  CHECK(ledger["count"] == 1);
  CHECK(json::parse(ok.body)["transaction_id"] == ledger["effects"][0]["transaction_id"]);
  const auto replay = post(ref->url() + "/payments", payment, "k2");
  CHECK(replay.status == 201);
  CHECK(replay.header("idempotent-replayed") == std::optional<std::string>("true"));
  CHECK(replay.body == ok.body);
}

TEST_CASE("callbacks: deduplicated by sequence number, only allowed transitions, the flaw applies twice", "[callbacks][slow]") {
  for (const std::string flaw : {"none", "callback-no-dedup"}) {
    TempDir dir;
    auto stub = start_stub();
    auto ref = start_ref(dir, *stub, flaw);
    REQUIRE(post(ref->url() + "/orders", {{"biz_no", "o1"}, {"sku", "s1"}, {"qty", 3}, {"amount", 1}}, "ko").status == 201);
    const json paid = {{"seq", "evt-1"}, {"biz_no", "o1"}, {"event", "paid"}};
    const json refunded = {{"seq", "evt-2"}, {"biz_no", "o1"}, {"event", "refunded"}};
    for (int i = 0; i < 2; ++i) CHECK(post(ref->url() + "/callbacks/payment", paid).status == 200);
    for (int i = 0; i < 2; ++i) CHECK(post(ref->url() + "/callbacks/payment", refunded).status == 200);
    // The same event under a new sequence number: a disallowed transition.
    CHECK(post(ref->url() + "/callbacks/payment", {{"seq", "evt-3"}, {"biz_no", "o1"}, {"event", "paid"}}).status == 200);
    const json state = get(ref->url() + "/callbacks/payment?biz_no=o1");
    const json stock = get(ref->url() + "/stock?sku=s1");
    if (flaw == "none") {
      CHECK(state["applied"] == 2);
      CHECK(state["state"] == "refunded");
      CHECK(stock["available"] == 1000);  // taken by the order, given back once
    } else {
      CHECK(state["applied"] == 5);
      CHECK(stock["available"] == 1003);  // the stock moved twice
    }
    CHECK(post(ref->url() + "/callbacks/payment", {{"seq", "x"}, {"event", "paid"}}).status == 400);
  }
}

TEST_CASE("inbox: each message id applied once, in the effect's transaction, the flaw applies every delivery", "[inbox][slow]") {
  for (const std::string flaw : {"none", "inbox-no-dedup"}) {
    TempDir dir;
    auto stub = start_stub();
    auto ref = start_ref(dir, *stub, flaw);
    for (int i = 0; i < 3; ++i) {
      CHECK(post(ref->url() + "/inbox", {{"message_id", "m1"}, {"account", "a1"}, {"amount", 5}}).status == 200);
    }
    CHECK(post(ref->url() + "/inbox", {{"message_id", "m2"}, {"account", "a1"}, {"amount", 7}}).status == 200);
    const json account = get(ref->url() + "/accounts?account=a1");
    CHECK(account["balance"] == (flaw == "none" ? 12 : 22));
    CHECK(account["applied"] == (flaw == "none" ? 2 : 4));
  }
}
