#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "literal_history.h"
#include "model/operation.h"

using namespace idemproof;
using namespace idemproof::testing;

TEST_CASE("a history round-trips through JSONL, byte for byte") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "idem-1-k1", "b1", 0, 10, Answer{201, "{\"note\":\"line\\nbreak \\u00e9\"}", {{"Location", "/orders/1"}}})
      .Lost("client-1", "create_order", "idem-1-k1", "b1", 5, 1005)
      .Send("client-0", "create_order", "", "b2", 20, 21, Answer{400, "plain <text> & \"quotes\""})
      .Records("create_order", "b1", 1, 2000)
      .Fault("proxy-drop", "start", 3)
      .Open("client-2", "create_order", "idem-1-k1", "b1", 2100);
  std::string jsonl = h.history().ToJsonl();
  auto back = History::FromJsonl(jsonl);
  REQUIRE(back.ok());
  REQUIRE(back->size() == h.history().size());
  CHECK(back->ToJsonl() == jsonl);
  for (std::size_t i = 0; i < back->size(); ++i) {
    CHECK(EventToJson(back->events()[i]) == EventToJson(h.history().events()[i]));
  }

  auto path = (std::filesystem::temp_directory_path() / ("idemproof-history-test-" + std::to_string(::getpid()) + ".jsonl")).string();
  REQUIRE(h.history().WriteJsonl(path).ok());
  auto from_file = History::ReadJsonl(path);
  REQUIRE(from_file.ok());
  CHECK(from_file->ToJsonl() == jsonl);
  std::remove(path.c_str());
}

TEST_CASE("JSONL errors name the line") {
  auto bad = History::FromJsonl(
      "{\"index\":0,\"process\":\"p\",\"type\":\"invoke\",\"f\":\"send\"}\n\nnot json\n", "h.jsonl");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().ToString() == "h.jsonl:3:1: not a JSON object");
  auto gap = History::FromJsonl("{\"index\":1,\"process\":\"p\",\"type\":\"invoke\",\"f\":\"send\"}\n", "h.jsonl");
  CHECK(gap.status().ToString().find("h.jsonl:1:1: event index 1 out of order") == 0);
  auto type = History::FromJsonl("{\"index\":0,\"process\":\"p\",\"type\":\"done\",\"f\":\"send\"}\n", "h.jsonl");
  CHECK(type.status().message().find("unknown event type 'done'") != std::string::npos);
}

TEST_CASE("operations pair invoke and completion per process") {
  LiteralHistory h;
  // Interleaved: client-0 invoke, client-1 invoke, client-1 done, client-0 done.
  History hist;
  auto ev = [&](const std::string& p, EventType t, int ms) {
    HistoryEvent e = RequestInvoke(p, event_f::kSend, {"", "k", "k", "", "", ""}, {}, -1);
    if (t != EventType::kInvoke) {
      RecordedExchange x;
      x.type = t;
      x.status = 201;
      x.headers = {{"Idempotent-Replayed", "true"}};
      x.body = "{}";
      e = RequestCompletion(e, x);
    }
    e.time_ns = ms * 1'000'000LL;
    hist.Append(e);
  };
  ev("client-0", EventType::kInvoke, 0);
  ev("client-1", EventType::kInvoke, 1);
  ev("client-1", EventType::kOk, 2);
  ev("client-0", EventType::kInfo, 3);
  ev("client-2", EventType::kInvoke, 4);
  auto ops = PairOperations(hist);
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].completion->index == 3);
  CHECK(ops[1].completion->index == 2);
  CHECK(ops[2].completion == nullptr);
  CHECK_FALSE(ops[0].completed_ok());
  CHECK_FALSE(ops[0].answer().has_value());
  REQUIRE(ops[1].answer().has_value());
  CHECK(ops[1].answer()->Header("idempotent-replayed") == std::optional<std::string>("true"));
  CHECK(IsReplayMarked(*ops[1].answer(), ShopTarget().idempotency));
  CHECK_FALSE(IsReplayMarked(*ops[1].answer(), PlainTarget().idempotency));
  CHECK(ops[2].complete_ns() == ops[2].invoke_ns());
}

namespace {

// ShopTarget() whose replays must repeat Set-Cookie too.
TargetDescription CookieTarget() {
  TargetDescription t = ShopTarget();
  t.compare_headers.push_back("Set-Cookie");
  return t;
}

History ThroughJsonl(const History& h) {
  auto back = History::FromJsonl(h.ToJsonl(), "cookies.jsonl");
  REQUIRE(back.ok());
  return std::move(back).value();
}

}  // namespace

TEST_CASE("a repeated answer header keeps every value through record, write and read") {
  const Answer first{201, R"({"id":1})", {{"Location", "/orders/1"}, {"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}}};
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, first);
  const History back = ThroughJsonl(h.history());
  const auto ops = RequestOperations(back);
  REQUIRE(ops.size() == 1);
  REQUIRE(ops[0].answer());
  const HeaderList expected = {{"Location", "/orders/1"}, {"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}};
  CHECK(ops[0].answer()->headers == expected);
  CHECK(ops[0].answer()->HeaderValues("set-cookie") == std::vector<std::string>{"a=1", "b=2"});
  // On disk: the ordered list of [name, value] pairs it saw.
  CHECK(back.ToJsonl().find(R"("headers":[["Location","/orders/1"],["Set-Cookie","a=1"],["Set-Cookie","b=2"]])") !=
        std::string::npos);
}

TEST_CASE("identical_replay compares every value of a repeated header") {
  const Answer first{201, R"({"id":1})", {{"Location", "/orders/1"}, {"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}}};
  auto replay = [](const std::string& first_cookie, const std::string& second_cookie) {
    return Answer{201, R"({"id":1})",
                  {{"Location", "/orders/1"}, {"Set-Cookie", first_cookie}, {"Set-Cookie", second_cookie},
                   {"Idempotent-Replayed", "true"}}};
  };
  auto judge = [&](const Answer& again) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k1", "b1", 0, 10, first)
        .Send("client-0", "create_order", "k1", "b1", 60, 65, again);
    return RunOracle("identical_replay", ThroughJsonl(h.history()), CookieTarget());
  };
  CHECK(judge(replay("a=1", "b=2")).status == VerdictStatus::kValid);

  // Only the second Set-Cookie differs: not identical.
  const Verdict second = judge(replay("a=1", "b=3"));
  CHECK(second.status == VerdictStatus::kInvalid);
  CHECK(second.evidence.find("header Set-Cookie 'a=1, b=3' != 'a=1, b=2'") != std::string::npos);
  // Only the first differs: a record that kept one value per name lost it.
  const Verdict first_differs = judge(replay("a=9", "b=2"));
  CHECK(first_differs.status == VerdictStatus::kInvalid);
  CHECK(first_differs.evidence.find("header Set-Cookie 'a=9, b=2' != 'a=1, b=2'") != std::string::npos);
}

TEST_CASE("a version-1 history (headers as a JSON object) reads as the ordered list") {
  const std::string v1 =
      R"({"f":"send","index":0,"process":"client-0","time_ns":1,"type":"invoke","value":{"request":{"body":"{}","headers":{"Content-Type":"application/json","Idempotency-Key":"k1"},"method":"POST","url":"http://127.0.0.1:1/orders"}}})"
      "\n"
      R"({"f":"send","index":1,"process":"client-0","time_ns":2,"type":"ok","value":{"connection_reused":false,"response":{"body":"{}","headers":{"Location":"/orders/1"},"status":201}}})"
      "\n";
  auto back = History::FromJsonl(v1, "v1.jsonl", 1);
  REQUIRE(back.ok());
  const nlohmann::json& request = back->events()[0].value["request"];
  CHECK(request["headers"] == nlohmann::json::parse(R"([["Content-Type","application/json"],["Idempotency-Key","k1"]])"));
  CHECK(back->events()[1].value["response"]["headers"] == nlohmann::json::parse(R"([["Location","/orders/1"]])"));
  // Written back, it is a version-2 history.
  auto again = History::FromJsonl(back->ToJsonl(), "v2.jsonl");
  REQUIRE(again.ok());
  CHECK(again->ToJsonl() == back->ToJsonl());
  // A format this build does not know is an error, not a guess.
  auto newer = History::FromJsonl(v1, "v3.jsonl", 3);
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().ToString().find("format 3") != std::string::npos);
}
