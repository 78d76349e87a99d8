// The provider stub without sockets: its ledger, key handling and faults.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "provider_stub.h"

using namespace idemproof::stub;
using idemproof::HttpRequest;
using nlohmann::json;

namespace {
HttpRequest charge(const std::string& key, const std::string& reference = "b1", int amount = 100) {
  HttpRequest r{"POST", "/charge", {}, json{{"reference", reference}, {"amount", amount}}.dump()};
  if (!key.empty()) r.headers.emplace_back("Idempotency-Key", key);
  return r;
}
json body(const StubReply& r) { return json::parse(r.response.body); }
}  // namespace

TEST_CASE("a repeated key is recognised: one effect, every attempt recorded") {
  ProviderStub stub;
  auto first = stub.handle(charge("pi_1"));
  auto again = stub.handle(charge("pi_1"));
  auto other = stub.handle(charge("pi_2"));
  CHECK(first.response.status == 201);
  CHECK(again.response.status == 200);
  CHECK(body(again)["replayed"] == true);
  CHECK(body(again)["transaction_id"] == body(first)["transaction_id"]);
  CHECK(body(other)["transaction_id"] != body(first)["transaction_id"]);
  auto ledger = body(stub.handle({"GET", "/ledger?reference=b1", {}, ""}));
  CHECK(ledger["count"] == 2);
  CHECK(ledger["attempts"].size() == 3);
  CHECK(ledger["attempts"][1]["outcome"] == "replayed");
  auto lookup = body(stub.handle({"GET", "/charges?idempotency_key=pi_2", {}, ""}));
  CHECK(lookup["count"] == 1);
  CHECK(body(stub.handle({"GET", "/charges?idempotency_key=nope", {}, ""}))["count"] == 0);
}

TEST_CASE("without a key, or ignoring keys, every charge is a new effect") {
  ProviderStub honest;
  honest.handle(charge(""));
  honest.handle(charge(""));
  CHECK(honest.ledger().effects(std::nullopt, std::nullopt).size() == 2);
  ProviderStub careless(/*honour_keys=*/false);
  careless.handle(charge("k"));
  careless.handle(charge("k"));
  CHECK(careless.ledger().effects(std::nullopt, std::nullopt).size() == 2);
}

TEST_CASE("faults: fail commits nothing, kill modes commit then ask for the signal, then heal") {
  ProviderStub stub;
  REQUIRE(stub.handle({"POST", "/_faults", {}, R"({"mode":"fail","status":503,"times":2})"}).response.status == 200);
  CHECK(stub.handle(charge("a")).response.status == 503);
  CHECK(stub.handle(charge("a")).response.status == 503);
  CHECK(stub.ledger().effects(std::nullopt, std::nullopt).empty());
  CHECK(stub.handle(charge("a")).response.status == 201);  // healed after `times`

  REQUIRE(stub.handle({"POST", "/_faults", {}, R"({"mode":"kill_after_commit","pid":"4242"})"}).response.status == 200);
  auto killed = stub.handle(charge("b"));
  CHECK(killed.disposition == Disposition::kill_then_close);
  CHECK(killed.pid == 4242);
  CHECK(stub.ledger().effects(std::string("b"), std::nullopt).size() == 1);

  REQUIRE(stub.handle({"POST", "/_faults", {}, R"({"mode":"kill_after_answer","pid":4243})"}).response.status == 200);
  CHECK(stub.handle(charge("c")).disposition == Disposition::stop_answer_kill);
  REQUIRE(stub.handle({"POST", "/_faults", {}, R"({"mode":"timeout","delay_ms":10})"}).response.status == 200);
  auto held = stub.handle(charge("d"));
  CHECK(held.disposition == Disposition::hold);
  CHECK(held.hold_for == std::chrono::milliseconds(10));
  CHECK(stub.faults().injected() == 5);
  CHECK(stub.handle(charge("e")).disposition == Disposition::answer);
}

TEST_CASE("a bad fault is rejected and changes nothing") {
  ProviderStub stub;
  CHECK(stub.handle({"POST", "/_faults", {}, R"({"mode":"kill_after_commit"})"}).response.status == 400);
  CHECK(stub.handle({"POST", "/_faults", {}, R"({"mode":"explode"})"}).response.status == 400);
  CHECK(stub.handle({"POST", "/_faults", {}, R"({"mode":"fail","colour":1})"}).response.status == 400);
  CHECK(stub.faults().armed().mode == FaultMode::none);
  CHECK(stub.handle(charge("x")).response.status == 201);
  CHECK(stub.handle({"POST", "/charge", {}, R"({"reference":"b1"})"}).response.status == 400);
}
