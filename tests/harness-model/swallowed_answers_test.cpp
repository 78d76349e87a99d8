// Oracles over histories where a proxy fault swallowed answers (a dropped
// response, the first answer of a gateway replay, a losing hedge copy): the
// swallowed answers, recorded on the "proxy" lane, count as answers of
// their key. Literal histories, times in ms.
#include <catch2/catch.hpp>

#include "literal_history.h"
#include "oracles/swallowed_answers.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

// What the runtime records when a proxy fault fires: the request it acted
// on (key header as sent) and the answers the client never saw.
History WithProxyEvent(const LiteralHistory& literal, const std::string& fault, const std::string& key, int t,
                       std::vector<Answer> swallowed) {
  History h = literal.history();
  const std::int64_t at_ns = static_cast<std::int64_t>(t) * 1'000'000;
  nlohmann::json upstream = nlohmann::json::array();
  for (const auto& a : swallowed) {
    nlohmann::json headers = nlohmann::json::array();
    for (const auto& [k, v] : a.headers) headers.push_back({k, v});
    upstream.push_back({{"status", a.status}, {"headers", headers}, {"body", a.body}, {"at_ns", at_ns}});
  }
  HistoryEvent e = InjectorEvent(
      {{"fault", fault},
       {"name", fault},
       {"phase", "injected"},
       {"request", {{"method", "POST"}, {"target", "/orders"}, {"headers", {{"Idempotency-Key", key}}}, {"body", "{}"}}},
       {"upstream", upstream}});
  e.time_ns = at_ns;
  h.Append(e);
  return h;
}

Verdict Judge(const std::string& oracle, const History& h) { return RunOracle(oracle, h); }

}  // namespace

TEST_CASE("swallowed answers are attributed to their key's requests") {
  LiteralHistory l;
  l.Lost("client-0", "create_order", "k1", "b1", 0, 10);
  History h = WithProxyEvent(l, "drop-response", "k1", 5, {Answer{}});
  auto s = oracles::SwallowedAnswers(h, ShopTarget().idempotency);
  REQUIRE(s.size() == 1);
  CHECK(s[0].key == "k1");
  CHECK(s[0].action == "create_order");
  CHECK(s[0].biz == "b1");
  CHECK(s[0].answer.status == 201);
  CHECK(s[0].at_ns == 5'000'000);
  // Another key's request gets nothing; a start/heal event is no firing.
  History other = WithProxyEvent(l, "drop-response", "k9", 5, {Answer{}});
  CHECK(oracles::SwallowedAnswers(other, ShopTarget().idempotency).at(0).action.empty());
}

TEST_CASE("a retry after a dropped answer is judged against the answer the client never saw") {
  LiteralHistory l;
  l.Lost("client-0", "create_order", "k1", "b1", 0, 10).Send("client-0", "create_order", "k1", "b1", 100, 110, Replay());
  l.Records("create_order", "b1", 1, 200);
  SECTION("without the proxy's record nothing can be compared") {
    CHECK(Judge("identical_replay", l.history()).status == VerdictStatus::kUnknown);
  }
  SECTION("the stored answer replayed: valid") {
    History h = WithProxyEvent(l, "drop-response", "k1", 5, {Answer{}});
    Verdict v = Judge("identical_replay", h);
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
    CHECK(v.details.counts.replays_checked == 1);
    CHECK(Judge("one_record", h).status == VerdictStatus::kValid);
  }
  SECTION("a replay that differs from the lost answer: invalid") {
    History h = WithProxyEvent(l, "drop-response", "k1", 5, {Answer{201, R"({"id":2})"}});
    Verdict v = Judge("identical_replay", h);
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("swallowed by drop-response") != std::string::npos);
  }
}

TEST_CASE("the retry executed again: two unmarked answers and two records") {
  LiteralHistory l;
  l.Lost("client-0", "create_order", "k1", "b1", 0, 10)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 200);
  History h = WithProxyEvent(l, "drop-response", "k1", 5, {Answer{}});
  Verdict replay = Judge("identical_replay", h);
  CHECK(replay.status == VerdictStatus::kInvalid);
  CHECK(replay.evidence.find("marker") != std::string::npos);
  CHECK(Judge("one_record", h).status == VerdictStatus::kInvalid);
}

TEST_CASE("a gateway replay the client never saw: the client's only answer is the replay") {
  LiteralHistory l;
  l.Send("client-0", "create_order", "k1", "b1", 0, 20, Replay()).Records("create_order", "b1", 1, 100);
  // The client's marked answer alone would be a marked first answer.
  CHECK(Judge("identical_replay", l.history()).status == VerdictStatus::kInvalid);
  History h = WithProxyEvent(l, "replay-upstream", "k1", 20, {Answer{}});
  Verdict v = Judge("identical_replay", h);
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
}

TEST_CASE("a hedge whose winning copy got 409: the swallowed 201 shows the execution") {
  LiteralHistory l;
  l.Send("client-0", "create_order", "k1", "b1", 0, 3, Answer{409, R"({"error":"in progress"})"})
      .Records("create_order", "b1", 1, 100);
  CHECK(Judge("one_record", l.history()).status == VerdictStatus::kUnknown);
  History h = WithProxyEvent(l, "hedge", "k1", 8, {Answer{}});
  CHECK(Judge("one_record", h).status == VerdictStatus::kValid);
  // Two records behind it: a second execution.
  LiteralHistory two;
  two.Send("client-0", "create_order", "k1", "b1", 0, 3, Answer{}).Records("create_order", "b1", 2, 100);
  CHECK(Judge("one_record", WithProxyEvent(two, "hedge", "k1", 4, {Answer{}})).status == VerdictStatus::kInvalid);
}

TEST_CASE("with key_header: none a swallowed answer is attributed by the key its request carried in the body") {
  // Found with the foreign Python target (--key-in body): the key is a body
  // member, so the proxied request carries no key header.
  auto target = ParseTarget(R"(name: body-key
base_url: "http://127.0.0.1:1"
idempotency: {key_header: none}
actions:
  create_order: {role: create, request: {method: POST, path: /orders, json: {request_key: "{{key}}", biz: "{{biz}}"}}}
)", "t.yaml");
  REQUIRE(target.ok());
  LiteralHistory l;
  l.Lost("client-0", "create_order", "k1", "b1", 0, 10).Lost("client-0", "create_order", "k10", "b2", 20, 30);
  History h = l.history();
  HistoryEvent e =
      InjectorEvent({{"fault", "drop-response"},
                     {"phase", "injected"},
                     {"request", {{"method", "POST"}, {"target", "/orders"}, {"headers", nlohmann::json::array()},
                                  {"body", R"({"request_key":"k10","biz":"b2"})"}}},
                     {"upstream", {{{"status", 201}, {"headers", nlohmann::json::array()}, {"body", "{}"}}}}});
  e.time_ns = 25'000'000;
  h.Append(e);
  auto s = oracles::SwallowedAnswers(h, target->idempotency);
  REQUIRE(s.size() == 1);
  CHECK(s[0].key == "k10");  // not "k1", its prefix
  CHECK(s[0].biz == "b2");
}
