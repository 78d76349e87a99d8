// Every oracle on literal histories: ones that must hold, ones that must be
// caught (each a real flaw of the reference service, written by hand), and
// ones with nothing to judge, which must never come out valid.
#include <catch2/catch.hpp>

#include "literal_history.h"
#include "model/answer_diff.h"
#include "model/finding.h"
#include "model/operation.h"
#include "model/results_json.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {
const Answer kCreated{201, R"({"id":1,"biz_no":"b1","trace":"a"})", {{"Location", "/orders/1"}}};
Answer Replayed(const std::string& body = R"({"id":1,"biz_no":"b1","trace":"zzz"})") {
  return Answer{201, body, {{"Location", "/orders/1"}, {"Idempotent-Replayed", "true"}}};
}
const Answer kConflict{409, R"({"title":"in progress"})", {{"Retry-After", "1"}}};
const Answer kUnavailable{503, R"({"title":"downstream"})", {{"Retry-After", "1"}}};
}  // namespace

TEST_CASE("one_record holds for one record after a double submit") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed())
      .Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("one_record", h.history());
  CHECK(v.status == VerdictStatus::kValid);
}

TEST_CASE("one_record catches a second order (check-then-insert)") {
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 0, 11, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 100);
  Verdict v = RunOracle("one_record", h.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("2 records") != std::string::npos);
  CHECK(v.details.Findings().size() == 1);
}

TEST_CASE("one_record catches a 2xx with no record, and a record behind rejected requests") {
  LiteralHistory lost;
  lost.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("one_record", lost.history()).status == VerdictStatus::kInvalid);

  LiteralHistory rejected;
  rejected.Send("client-0", "create_order", "", "b2", 0, 10, Answer{400, "{}"}).Records("create_order", "b2", 1, 100);
  Verdict v = RunOracle("one_record", rejected.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("every request was rejected") != std::string::npos);
}

TEST_CASE("one_record without evidence is never valid") {
  LiteralHistory noprobe;  // no records probe ran
  noprobe.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("one_record", noprobe.history()).status == VerdictStatus::kUnknown);

  LiteralHistory undeclared;  // cancel_order declares no records probe
  undeclared.Send("client-0", "cancel_order", "k1", "b1", 0, 10, Answer{200, "{}"});
  CHECK(RunOracle("one_record", undeclared.history()).status == VerdictStatus::kNotApplicable);

  LiteralHistory lost_only;  // only an unknown outcome and 0 records: consistent but undecided
  lost_only.Lost("client-0", "create_order", "k1", "b1", 0, 10).Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("one_record", lost_only.history()).status == VerdictStatus::kUnknown);

  CHECK(RunOracle("one_record", History()).status == VerdictStatus::kUnknown);
}

TEST_CASE("one_record counts as repeats only requests that reached the target") {
  // A lost request, then a retry that could not connect: one delivery, nothing repeated.
  LiteralHistory unsent;
  unsent.Lost("client-0", "create_order", "k1", "b1", 0, 10)
      .NotSent("client-0", "create_order", "k1", "b1", 20, 21)
      .Records("create_order", "b1", 1, 100);
  Verdict once = RunOracle("one_record", unsent.history());
  CHECK(once.status == VerdictStatus::kUnknown);
  CHECK(once.PremiseNotReached());
  // Two lost deliveries: repeated, and undecided (no decisive answer).
  LiteralHistory twice;
  twice.Lost("client-0", "create_order", "k1", "b1", 0, 10)
      .Lost("client-0", "create_order", "k1", "b1", 20, 30)
      .Records("create_order", "b1", 1, 100);
  Verdict repeated = RunOracle("one_record", twice.history());
  CHECK(repeated.status == VerdictStatus::kUnknown);
  CHECK_FALSE(repeated.PremiseNotReached());
  // A lost owner and a retry refused as in progress (explore's in-flight
  // plans `send; kill; restart`): the refusal reached the dedup, the count decides.
  LiteralHistory refused;
  refused.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, Answer{409, R"({"title":"in progress"})", {{"Retry-After", "1"}}});
  LiteralHistory one = refused, two = refused;
  one.Records("create_order", "b1", 1, 400);
  two.Records("create_order", "b1", 2, 400);
  CHECK(RunOracle("one_record", one.history()).status == VerdictStatus::kValid);
  CHECK(RunOracle("one_record", two.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("identical_replay holds when replays equal the first answer minus volatile paths") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed())
      .Send("client-0", "create_order", "k1", "b1", 70, 75, Replayed());
  Verdict v = RunOracle("identical_replay", h.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.replays_checked == 2);
}

TEST_CASE("identical_replay catches the empty replay, a changed body, a lost header and a missing marker") {
  auto check = [](const Answer& replay, const std::string& expect) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 60, 65, replay);
    Verdict v = RunOracle("identical_replay", h.history());
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find(expect) != std::string::npos);
  };
  check(Answer{200, R"({"status":"duplicate"})", {{"Idempotent-Replayed", "true"}}}, "status 200 != 201");
  check(Replayed(R"({"id":1,"biz_no":"b1","created_at":"later"})"), "body differs");
  check(Answer{201, kCreated.body, {{"Idempotent-Replayed", "true"}}}, "header Location");
  check(Answer{201, kCreated.body, {{"Location", "/orders/1"}}}, "marker");
}

// Issue 49 item 3: the evidence names the member that differs, with both
// values, and cuts both bodies around it, not before it.
TEST_CASE("identical_replay names the one nested member that differs deep in a long body, and shows it") {
  std::string lines;
  for (int i = 0; i < 60; ++i)
    lines += std::string(i ? "," : "") + R"({"sku":"sku-)" + std::to_string(i) + R"(","qty":1,"note":"gift wrap"})";
  const auto body = [&](const std::string& status) {
    return R"({"id":"ord_7","customer":"biz-1","lines":[)" + lines + R"(],"order":{"payment":{"status":")" + status +
           R"("}}})";
  };
  const Answer first{201, body("paid"), {{"Location", "/orders/1"}}};
  const Answer replay{201, body("cancelled"), {{"Location", "/orders/1"}, {"Idempotent-Replayed", "true"}}};
  REQUIRE(first.body.size() > 2000);
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, first).Send("client-0", "create_order", "k1", "b1", 60, 65, replay);
  Verdict v = RunOracle("identical_replay", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find(R"(body differs at $.order.payment.status: "paid" → "cancelled")") != std::string::npos);
  // Both bodies shown around the member, not cut before it.
  CHECK(v.evidence.find(R"("status":"cancelled")") != std::string::npos);
  CHECK(v.evidence.find(R"("status":"paid")") != std::string::npos);
  CHECK(v.evidence.find(R"(201 {"id":"ord_7")") == std::string::npos);
  const nlohmann::json f = FindingToJson(v.details.Findings().at(0));
  CHECK(f["differences"][0] == R"(body differs at $.order.payment.status: "paid" → "cancelled")");
}

TEST_CASE("answer differences name a member added, an element missing, and a non-JSON body's byte") {
  const HttpAnswer a{200, {}, R"({"items":[1,2,3],"meta":{"a":1}})"};
  const HttpAnswer b{200, {}, R"({"items":[1,2],"meta":{"a":1,"b":"x"}})"};
  CHECK(AnswerDifferences(a, b, {}, {}) == std::vector<std::string>{"body differs at $.items[2]: 3 → <absent>"});
  const HttpAnswer c{200, {}, R"({"items":[1,2,3],"meta":{"a":1,"b":"x"}})"};
  CHECK(AnswerDifferences(a, c, {}, {}) == std::vector<std::string>{R"(body differs at $.meta.b: <absent> → "x")"});
  CHECK(AnswerDifferences(HttpAnswer{200, {}, "hello world"}, HttpAnswer{200, {}, "hello there"}, {}, {}) ==
        std::vector<std::string>{"body differs at byte 6"});
  // Equal minus a volatile path: no difference at all.
  auto vol = JsonPath::Parse("$.meta.b");
  REQUIRE(vol.ok());
  CHECK(AnswerDifferences(c, HttpAnswer{200, {}, R"({"items":[1,2,3],"meta":{"a":1,"b":"y"}})"}, {*vol}, {}).empty());
}

TEST_CASE("identical_replay: the first answer must not carry the marker, unless an attempt before it was lost") {
  LiteralHistory marked_first;
  marked_first.Send("client-0", "create_order", "k1", "b1", 0, 10, Replayed())
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed());
  CHECK(RunOracle("identical_replay", marked_first.history()).status == VerdictStatus::kInvalid);

  LiteralHistory after_lost;  // gateway case: the first answer was lost, the retry gets the replay
  after_lost.Lost("client-0", "create_order", "k1", "b1", 0, 1000)
      .Send("client-0", "create_order", "k1", "b1", 1000, 1005, Replayed())
      .Send("client-0", "create_order", "k1", "b1", 1100, 1105, Replayed());
  CHECK(RunOracle("identical_replay", after_lost.history()).status == VerdictStatus::kValid);
}

TEST_CASE("identical_replay with the marker in the body: compared without it, required on replays") {
  // Many APIs say "replayed" inside the JSON they return, not in a header.
  const Answer first{201, R"({"id":1,"biz_no":"b1","meta":{"replayed":false}})", {{"Location", "/orders/1"}}};
  const Answer marked{201, R"({"id":1,"biz_no":"b1","meta":{"replayed":true}})", {{"Location", "/orders/1"}}};
  LiteralHistory good;
  good.Send("client-0", "create_order", "k1", "b1", 0, 10, first).Send("client-0", "create_order", "k1", "b1", 60, 65, marked);
  Verdict v = RunOracle("identical_replay", good.history(), BodyMarkedTarget());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("carry body $.meta.replayed") != std::string::npos);

  LiteralHistory unmarked;  // equal body, but the replay does not say so
  unmarked.Send("client-0", "create_order", "k1", "b1", 0, 10, first).Send("client-0", "create_order", "k1", "b1", 60, 65, first);
  v = RunOracle("identical_replay", unmarked.history(), BodyMarkedTarget());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("replay marker body $.meta.replayed = true missing") != std::string::npos);

  LiteralHistory changed;  // marked, but the rest of the body differs
  changed.Send("client-0", "create_order", "k1", "b1", 0, 10, first)
      .Send("client-0", "create_order", "k1", "b1", 60, 65,
            Answer{201, R"({"id":2,"biz_no":"b1","meta":{"replayed":true}})", {{"Location", "/orders/1"}}});
  v = RunOracle("identical_replay", changed.history(), BodyMarkedTarget());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("body differs") != std::string::npos);

  // A header marker means nothing to this target, and the body one nothing to the shop.
  CHECK_FALSE(IsReplayMarked(HttpAnswer{201, {{"Idempotent-Replayed", "true"}}, first.body},
                             BodyMarkedTarget().idempotency));
  CHECK_FALSE(IsReplayMarked(HttpAnswer{201, {}, marked.body}, ShopTarget().idempotency));
  CHECK_FALSE(IsReplayMarked(HttpAnswer{201, {}, "not json"}, BodyMarkedTarget().idempotency));
}

TEST_CASE("identical_replay with a single answer is unknown, not valid") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("identical_replay", h.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("mismatch_rejected holds for 422 and catches the first result replayed (no-fingerprint)") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{422, "{}"}, "other");
  CHECK(RunOracle("mismatch_rejected", ok.history()).status == VerdictStatus::kValid);

  LiteralHistory flaw;
  flaw.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Replayed(), "other");
  Verdict v = RunOracle("mismatch_rejected", flaw.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("got the first result") != std::string::npos);

  LiteralHistory executed;
  executed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{201, R"({"id":2})"}, "other");
  CHECK(RunOracle("mismatch_rejected", executed.history()).evidence.find("was executed") != std::string::npos);
}

TEST_CASE("mismatch_rejected: 409 allowed only while the first still runs, nothing to judge is unknown") {
  LiteralHistory running;
  running.Send("client-0", "create_order", "k1", "b1", 0, 100, kCreated)
      .Send("client-1", "create_order", "k1", "b1", 20, 25, kConflict, "other");
  CHECK(RunOracle("mismatch_rejected", running.history()).status == VerdictStatus::kValid);

  LiteralHistory finished;
  finished.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, kConflict, "other");
  CHECK(RunOracle("mismatch_rejected", finished.history()).status == VerdictStatus::kInvalid);

  LiteralHistory none;
  none.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("mismatch_rejected", none.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("mismatch_rejected: a key whose earlier uses stored nothing may be taken by another payload") {
  // The first use failed retryably (a correct target releases the key) or was
  // lost: executing the other payload then proves nothing either way.
  LiteralHistory released;
  released.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{503, "{}"})
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{201, R"({"id":2})"}, "other");
  Verdict v = RunOracle("mismatch_rejected", released.history());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.details.counts.undecided == 1);

  LiteralHistory lost;
  lost.Lost("client-0", "create_order", "k1", "b1", 0, 10)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{201, R"({"id":2})"}, "other");
  CHECK(RunOracle("mismatch_rejected", lost.history()).status == VerdictStatus::kUnknown);

  // Once a later default use stored a result, the next other payload is judged.
  LiteralHistory stored;
  stored.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{503, "{}"})
      .Send("client-0", "create_order", "k1", "b1", 20, 30, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 40, 45, Answer{201, R"({"id":2})"}, "other");
  CHECK(RunOracle("mismatch_rejected", stored.history()).status == VerdictStatus::kInvalid);

  // Two payloads executed under one key at the same time: wrong in any order.
  LiteralHistory both;
  both.Send("client-0", "create_order", "k1", "b1", 0, 100, kCreated)
      .Send("client-1", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":2})"}, "other");
  CHECK(RunOracle("mismatch_rejected", both.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("missing_key_rejected") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "{}"});
  CHECK(RunOracle("missing_key_rejected", ok.history()).status == VerdictStatus::kValid);

  LiteralHistory executed;
  executed.Send("client-0", "create_order", "", "b1", 0, 10, kCreated);
  Verdict v = RunOracle("missing_key_rejected", executed.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("without Idempotency-Key was executed") != std::string::npos);

  LiteralHistory with_key;
  with_key.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("missing_key_rejected", with_key.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("in_progress holds for 409 or a waited-for identical answer") {
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5, kConflict)
      .Send("burst-2", "create_order", "k1", "b1", 2, 201, Replayed())
      .Records("create_order", "b1", 1, 300);
  Verdict v = RunOracle("in_progress", h.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.overlapping_duplicates == 2);
}

TEST_CASE("in_progress catches an empty success and a second execution") {
  LiteralHistory empty;
  empty.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 5, Answer{200, R"({"status":"duplicate"})", {{"Idempotent-Replayed", "true"}}});
  Verdict v = RunOracle("in_progress", empty.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  // Issue 46: a 200 with a body is "another success", never "an empty" one.
  CHECK(v.evidence.find("another success 200") != std::string::npos);

  LiteralHistory twice;
  twice.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 201, Answer{201, R"({"id":2})", {{"Location", "/orders/2"}}})
      .Records("create_order", "b1", 2, 300);
  Verdict t = RunOracle("in_progress", twice.history());
  CHECK(t.status == VerdictStatus::kInvalid);
  CHECK(t.evidence.find("executed 2 times") != std::string::npos);
}

TEST_CASE("in_progress without overlap is unknown") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 20, 25, Replayed());
  CHECK(RunOracle("in_progress", h.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("retryable_released holds when the retry after a 503 executes") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, kCreated)
      .Records("create_order", "b1", 1, 100);
  CHECK(RunOracle("retryable_released", h.history()).status == VerdictStatus::kValid);
}

TEST_CASE("retryable_released catches a stored failure (cache-retryable) and a still-claimed key") {
  LiteralHistory cached;
  cached.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("client-0", "create_order", "k1", "b1", 20, 22, Answer{503, kUnavailable.body, {{"Idempotent-Replayed", "true"}}})
      .Records("create_order", "b1", 0, 100);
  Verdict v = RunOracle("retryable_released", cached.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("stored") != std::string::npos);

  LiteralHistory claimed;
  claimed.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("client-0", "create_order", "k1", "b1", 20, 22, kConflict);
  CHECK(RunOracle("retryable_released", claimed.history()).status == VerdictStatus::kInvalid);

  LiteralHistory no_record;  // the retry says 201 but nothing was written
  no_record.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, kCreated)
      .Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("retryable_released", no_record.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("retryable_released: a concurrent duplicate that ran after the release makes the later replay right") {
  // Found by `idemproof explore` against the correct service: in a burst one
  // request gets the 503 (the key is released), another burst member then
  // executes (201, unmarked), and the later retry replays that execution.
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("burst-1", "create_order", "k1", "b1", 1, 15, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 22, Replayed())
      .Records("create_order", "b1", 1, 100);
  CHECK(RunOracle("retryable_released", h.history()).status == VerdictStatus::kValid);

  // Without that execution, a replayed 201 after the 503 has nothing behind
  // it but a stored answer: still invalid.
  LiteralHistory stored;
  stored.Send("burst-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("client-0", "create_order", "k1", "b1", 20, 22, Replayed())
      .Records("create_order", "b1", 1, 100);
  CHECK(RunOracle("retryable_released", stored.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("retryable_released knows the window: the retry past it rightly writes a second record") {
  // Found by 2,000 create-order trials against the correct service (seed 7,
  // trial 815): send; 503 armed; wait past the 4s window; send (503); send
  // (201). The key had expired, so the retry executed anew: two records.
  // ShopTarget declares window 4s; the 503 comes at `t` ms.
  auto history = [](int t, int records) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
        .Send("client-0", "create_order", "k1", "b1", t, t + 10, kUnavailable)
        .Send("client-0", "create_order", "k1", "b1", t + 20, t + 30, Answer{201, R"({"id":2})"})
        .Records("create_order", "b1", records, 5000);
    return RunOracle("retryable_released", h.history());
  };
  CHECK(history(4500, 2).status == VerdictStatus::kValid);

  Verdict inside = history(1000, 2);  // inside the window: the first record was written twice
  CHECK(inside.status == VerdictStatus::kInvalid);
  CHECK(inside.evidence.find("(expected 1)") != std::string::npos);

  Verdict three = history(4500, 3);  // two windows allow two records, not three
  CHECK(three.status == VerdictStatus::kInvalid);
  CHECK(three.evidence.find("1 to 2") != std::string::npos);
}

TEST_CASE("a request the scenario made fail (fails_retryably) is no attempt: retryable_released and one_record") {
  // Found by 2,000 create-order trials against the correct service (seed 7,
  // trial 1608): cause retryable_failure; send; cause retryable_failure;
  // send. Both 503s were the harness's doing: nothing was attempted, so the
  // trial is unexercised, not undecided.
  // Two 503s for k1, each request with `variant` ("" = none).
  auto two_503s = [](const std::string& variant, int records) {
    LiteralHistory h;
    h.Variant(variant)
        .Send("client-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
        .Send("client-0", "create_order", "k1", "b1", 20, 30, kUnavailable)
        .Records("create_order", "b1", records, 100);
    return h;
  };
  for (const char* oracle : {"retryable_released", "one_record"}) {
    INFO(oracle);
    Verdict on_purpose = RunOracle(oracle, two_503s("fails_retryably", 0).history());
    CHECK(on_purpose.status == VerdictStatus::kUnknown);
    CHECK(on_purpose.PremiseNotReached());
    // The same 503s from the target on its own stay undecided: the
    // downstream may still be failing, and the next retry decides.
    Verdict own = RunOracle(oracle, two_503s("", 0).history());
    CHECK(own.status == VerdictStatus::kUnknown);
    CHECK_FALSE(own.PremiseNotReached());
  }

  // A failed-on-purpose retry passes the question on: the retry after it is
  // judged, and a stored failure is still caught.
  LiteralHistory stored = two_503s("fails_retryably", 0);
  stored.Variant("").Send("client-0", "create_order", "k1", "b1", 40, 42,
                          Answer{503, kUnavailable.body, {{"Idempotent-Replayed", "true"}}});
  CHECK(RunOracle("retryable_released", stored.history()).status == VerdictStatus::kInvalid);

  // Records written though every request was made to fail: still counted.
  CHECK(RunOracle("one_record", two_503s("fails_retryably", 2).history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("retryable_released on a target without a replay marker: a repeated 503 is undecided, and says why") {
  // Found with the foreign Python target (--no-replay-marker, bug store-5xx):
  // the stored 503 comes back unmarked, exactly as a downstream still failing
  // would. Never a pass; unknown, naming the missing marker.
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnavailable)
      .Send("client-0", "create_order", "k1", "b1", 20, 22, kUnavailable)
      .Records("create_order", "b1", 0, 100);
  Verdict v = RunOracle("retryable_released", h.history(), PlainTarget());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("marks no replays") != std::string::npos);
  CHECK(RunOracle("retryable_released", h.history()).evidence.find("marks no replays") == std::string::npos);
}

TEST_CASE("retryable_released without a retryable answer is unknown") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  Verdict v = RunOracle("retryable_released", h.history());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("no retryable answer") != std::string::npos);
}

TEST_CASE("no_false_dedup") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Replayed())
      .Records("create_order", "b1", 1, 100);
  CHECK(RunOracle("no_false_dedup", ok.history()).status == VerdictStatus::kValid);

  LiteralHistory flaw;  // a "duplicate" answer although nothing was ever created
  flaw.Lost("client-0", "create_order", "k1", "b1", 0, 10)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Replayed())
      .Records("create_order", "b1", 0, 100);
  Verdict v = RunOracle("no_false_dedup", flaw.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("no record") != std::string::npos);

  LiteralHistory replayed_400;  // a stored validation failure has no record by design
  replayed_400.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{400, "{}"})
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{400, "{}", {{"Idempotent-Replayed", "true"}}})
      .Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("no_false_dedup", replayed_400.history()).status == VerdictStatus::kUnknown);

  CHECK(RunOracle("no_false_dedup", ok.history(), PlainTarget()).status == VerdictStatus::kNotApplicable);
}

// ---- new_key_executes (issue 33, the false-duplicate side) ----

TEST_CASE("new_key_executes holds when the same body under a new key is a second order") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b1", 20, 30, Answer{201, R"({"id":2,"biz_no":"b1"})"})
      .Records("create_order", "b1", 2, 100);
  Verdict v = RunOracle("new_key_executes", h.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence == "1 request(s) under a new key executed, none swallowed as a replay");
}

TEST_CASE("new_key_executes catches a new key swallowed as a replay (body-hash-key)") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b1", 20, 30, Replayed())
      .Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("new_key_executes", h.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("new key k2") != std::string::npos);
  CHECK(v.evidence.find("marked as a replay: a new request swallowed as a replay of an older one (key k1's") !=
        std::string::npos);
  // Without a marker: the second key got the first key's answer byte for byte.
  LiteralHistory plain;
  plain.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b1", 20, 30, kCreated)
      .Records("create_order", "b1", 1, 100);
  Verdict p = RunOracle("new_key_executes", plain.history(), PlainTarget());
  CHECK(p.status == VerdictStatus::kInvalid);
  CHECK(p.evidence.find("byte for byte") != std::string::npos);
}

TEST_CASE("new_key_executes catches a key merged with another sharing its prefix (key-truncate)") {
  LiteralHistory h;  // another business id under the new key, refused as a reuse of the first key
  const std::string prefix = "idem-run-" + std::string(244, 'x');
  h.Send("client-0", "create_order", prefix + "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", prefix + "k2", "b2", 20, 30, Answer{422, R"({"title":"key reused"})"})
      .Records("create_order", "b1", 1, 100)
      .Records("create_order", "b2", 0, 100);
  Verdict v = RunOracle("new_key_executes", h.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("as a reuse of another key, though no earlier key carried its business id b2") !=
        std::string::npos);
  // The evidence names the cause: the shared prefix, the long keys shortened.
  CHECK(v.evidence.find("new key idem-run-xxxxxxxxxxxxxxx...xxxxxxk2 (255 characters), sharing its first 254 "
                        "characters with key idem-run-xxxxxxxxxxxxxxx...xxxxxxk1 (255 characters))") != std::string::npos);
  REQUIRE(v.details.Findings().size() == 1);
}

TEST_CASE("new_key_executes catches a 2xx under a new key with no order behind it") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b1", 20, 30, Answer{201, R"({"id":2,"biz_no":"b1"})"})
      .Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("new_key_executes", h.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("has 1 record(s) behind 2 keys answered 2xx") != std::string::npos);
}

TEST_CASE("new_key_executes does not judge a refusal of another business request, and never passes on nothing") {
  // Issue 46: the same request refused under a new key (a 409 "exists" for
  // the same business id) is no longer excused: a violation unless the
  // target declares idempotency.natural_key (oracle_answers_test.cpp). A
  // refusal of ANOTHER business request (here a 400 for biz b2) says nothing
  // about keys, so nothing judged: unknown, not invalid, not valid.
  LiteralHistory refused;
  refused.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b2", 20, 30, Answer{400, R"({"title":"invalid"})"})
      .Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("new_key_executes", refused.history());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("every new key's first request was refused (400 x1)") != std::string::npos);

  LiteralHistory raced;  // a burst of the new key: its first invoke lost the race to a copy, rightly a replay
  raced.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("burst-0", "create_order", "k2", "b1", 20, 40, Replayed(R"({"id":2,"biz_no":"b1"})"))
      .Send("burst-1", "create_order", "k2", "b1", 21, 30, Answer{201, R"({"id":2,"biz_no":"b1"})"})
      .Records("create_order", "b1", 2, 100);
  CHECK(RunOracle("new_key_executes", raced.history()).status == VerdictStatus::kUnknown);

  LiteralHistory one;  // one key only
  one.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 20, 30,
                                                                         Replayed());
  CHECK(RunOracle("new_key_executes", one.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("action_scope") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "cancel_order", "k1", "b1", 20, 25, Answer{200, R"({"status":"cancelled"})"});
  CHECK(RunOracle("action_scope", ok.history()).status == VerdictStatus::kValid);

  LiteralHistory flaw;  // the key is global: cancelling got create's stored answer
  flaw.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "cancel_order", "k1", "b1", 20, 25, Replayed());
  Verdict v = RunOracle("action_scope", flaw.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("cancel_order did not execute") != std::string::npos);

  // Issue 46: the key reused on another route refused with the mismatch
  // status is allowed (the draft's and Stripe's fingerprint cover the route);
  // refused with any other status, the action was skipped with no reason.
  LiteralHistory mismatch;
  mismatch.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "cancel_order", "k1", "b1", 20, 25, Answer{422, "{}"});
  Verdict m = RunOracle("action_scope", mismatch.history());
  INFO(m.evidence);
  CHECK(m.status == VerdictStatus::kValid);
  CHECK(m.evidence.find("refused the reused key with the mismatch status 422") != std::string::npos);
  LiteralHistory skipped;
  skipped.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "cancel_order", "k1", "b1", 20, 25, kConflict)
      .Lost("client-0", "cancel_order", "k1", "b1", 30, 60);
  Verdict k = RunOracle("action_scope", skipped.history());
  INFO(k.evidence);
  CHECK(k.status == VerdictStatus::kInvalid);
  CHECK(k.evidence.find("cancel_order did not execute") != std::string::npos);
  CHECK(k.evidence.find("; 1 answer(s) set aside: no answer x1") != std::string::npos);

  LiteralHistory unshared;
  unshared.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("action_scope", unshared.history()).status == VerdictStatus::kUnknown);

  // A target that marks no replays (found with the foreign Python target,
  // bug key-only-cache): the cancel got create's answer again, unmarked.
  // Equal to the other action's answer is a replay of it, not an execution.
  LiteralHistory unmarked_copy;
  unmarked_copy.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "cancel_order", "k1", "b1", 20, 25, kCreated);
  Verdict copy = RunOracle("action_scope", unmarked_copy.history(), PlainTarget());
  CHECK(copy.status == VerdictStatus::kInvalid);
  CHECK(copy.evidence.find("a replay of another action") != std::string::npos);
  CHECK(!copy.details.Findings().at(0).OpsOf(FindingRole::kReplayOf).empty());
  CHECK(RunOracle("action_scope", ok.history(), PlainTarget()).status == VerdictStatus::kValid);

  // Found by the hunt phase on the correct reference: a callback sent with
  // the key executed; the pay's first answer was lost (a gateway fault), so
  // its retry is a replay of that lost pay, not of the callback. Whether pay
  // executed is not decided by the history: the callback's execution is
  // judged, pay's left undecided, never a violation.
  LiteralHistory lost_own;
  lost_own.Send("client-0", "payment_paid", "k1", "b1", 0, 10, Answer{200, R"({"applied":true})"})
      .Lost("client-0", "pay", "k1", "b1", 20, 30)
      .Send("client-0", "pay", "k1", "b1", 40, 45, Replayed());
  Verdict lost = RunOracle("action_scope", lost_own.history());
  INFO(lost.evidence);
  CHECK(lost.status == VerdictStatus::kValid);
  CHECK(lost.details.counts.judged == 1);
  CHECK(lost.details.counts.undecided == 1);
  // A lost answer of the other action excuses nothing.
  LiteralHistory lost_other;
  lost_other.Lost("client-0", "payment_paid", "k1", "b1", 0, 3)
      .Send("client-0", "create_order", "k1", "b1", 5, 10, kCreated)
      .Send("client-0", "cancel_order", "k1", "b1", 20, 25, Replayed());
  CHECK(RunOracle("action_scope", lost_other.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("window: retries inside the window are recognised, outside are not judged") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 3000, 3005, Replayed())
      .Send("client-0", "create_order", "k1", "b1", 9000, 9005, Answer{201, R"({"id":9})"})  // after 4s: not judged
      .Records("create_order", "b1", 1, 2500);
  Verdict v = RunOracle("window", ok.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.retries_in_window == 1);

  LiteralHistory short_ttl;  // the record expired after 40ms: a retry at 1s executes again
  short_ttl.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 1000, 1005, Answer{201, R"({"id":2})", {{"Location", "/orders/2"}}})
      .Records("create_order", "b1", 2, 2000);
  Verdict f = RunOracle("window", short_ttl.history());
  CHECK(f.status == VerdictStatus::kInvalid);
  CHECK(f.details.Findings().size() == 2);  // unrecognised retry + second record

  // A narrower window passed as parameter excludes the 1s retry.
  CHECK(RunOracle("window", short_ttl.history(), ShopTarget(), {{"window", "500ms"}}).status ==
        VerdictStatus::kUnknown);
  CHECK(RunOracle("window", ok.history(), PlainTarget()).status == VerdictStatus::kNotApplicable);
}

TEST_CASE("window without a marker compares with the first answer") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 100, 105, kCreated);
  CHECK(RunOracle("window", ok.history(), PlainTarget(), {{"window", "1s"}}).status == VerdictStatus::kValid);
  LiteralHistory bad;
  bad.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 100, 105, Answer{201, R"({"id":2})"});
  CHECK(RunOracle("window", bad.history(), PlainTarget(), {{"window", "1s"}}).status == VerdictStatus::kInvalid);

  // A retry answered "in progress" (a copy of it still running) recognised
  // the key, marker or not: without a marker it used to count as executed
  // again because it differs from the first answer.
  LiteralHistory busy;
  busy.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-1", "create_order", "k1", "b1", 100, 400, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 150, 155, kConflict);
  CHECK(RunOracle("window", busy.history(), PlainTarget(), {{"window", "1s"}}).status == VerdictStatus::kValid);
}

TEST_CASE("probe_equal") {
  LiteralHistory ok;
  ok.Probe("stock", "before", 1000, 0).Probe("stock", "after", 1000, 100);
  CHECK(RunOracle("probe_equal", ok.history(), ShopTarget(), {{"a", "before"}, {"b", "after"}}).status ==
        VerdictStatus::kValid);

  LiteralHistory twice_released;  // delete-releases-twice: stock went up
  twice_released.Probe("stock", "before", 1000, 0).Probe("stock", "after", 1001, 100);
  Verdict v = RunOracle("probe_equal", twice_released.history(), ShopTarget(), {{"a", "before"}, {"b", "after"}});
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence == "probe 'before' = 1000 but probe 'after' = 1001");
  // Its finding carries both values as read (the report shows them from it).
  const Finding f = v.details.Findings().at(0);
  CHECK(f.values == std::vector<FindingValue>{{"before", 1000}, {"after", 1001}});

  LiteralHistory put;  // declared volatile $.updated_at of probe "order" is ignored; the address is not
  put.Probe("order", "p1", {{"address", "1 Main St"}, {"updated_at", "t1"}}, 0)
      .Probe("order", "p2", {{"address", "1 Main St"}, {"updated_at", "t2"}}, 10)
      .Probe("order", "p3", {{"address", "1 Main St1 Main St"}, {"updated_at", "t3"}}, 20);
  CHECK(RunOracle("probe_equal", put.history(), ShopTarget(), {{"a", "p1"}, {"b", "p2"}}).status == VerdictStatus::kValid);
  CHECK(RunOracle("probe_equal", put.history(), ShopTarget(), {{"a", "p2"}, {"b", "p3"}}).status ==
        VerdictStatus::kInvalid);
  CHECK(RunOracle("probe_equal", put.history(), ShopTarget(), {{"a", "p1"}, {"b", "missing"}}).status ==
        VerdictStatus::kUnknown);
}

TEST_CASE("a crashing oracle is unknown, never valid, an unknown name is unknown") {
  OracleRegistry r;
  REQUIRE(r.Register({"boom", "throws", {}}, [](const OracleInput&) -> Verdict { throw std::runtime_error("kaput"); })
              .ok());
  CHECK_FALSE(r.Register({"boom", "again", {}}, [](const OracleInput&) { return Verdict(); }).ok());
  Scenario s;
  OracleSpec spec;
  spec.name = "boom";
  Verdict v = r.Check(spec, s, ShopTarget(), History());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("kaput") != std::string::npos);
  spec.name = "nope";
  CHECK(r.Check(spec, s, ShopTarget(), History()).status == VerdictStatus::kUnknown);
  // probe_equal without its required params throws inside: still unknown.
  CHECK(RunOracle("probe_equal", History()).status == VerdictStatus::kUnknown);
}

TEST_CASE("the builtin registry lists every documented oracle") {
  std::vector<std::string> names;
  for (const auto& s : BuiltinOracles().Signatures()) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"action_scope", "answer_after_abort", "applied_once", "caller_scope",
                                          "downstream_once", "empty_key_rejected", "identical_replay", "in_progress",
                                          "intent_reconciled", "key_released", "key_syntax_rejected",
                                          "keyless_executes", "lease_recovery", "long_key_rejected",
                                          "mismatch_rejected", "missing_key_rejected", "new_key_executes",
                                          "no_false_dedup", "one_record", "probe_equal", "problem_details",
                                          "range_continuity", "retry_after", "retryable_released", "route_spelling",
                                          "window"});
}

// ---- contract options (issue 15 item 2) ----

namespace {
TargetDescription WithRetryAfter(IdempotencyContract::RetryAfter mode) {
  TargetDescription t = ShopTarget();
  t.idempotency.retry_after = mode;
  return t;
}
const Answer kConflictBare{409, R"({"title":"in progress"})"};
}  // namespace

TEST_CASE("retry_after: a missing Retry-After is a violation when required, a deviation when recommended") {
  LiteralHistory bare;
  bare.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 0, 20, kConflictBare);
  Verdict required = RunOracle("retry_after", bare.history(), WithRetryAfter(IdempotencyContract::RetryAfter::kRequired));
  CHECK(required.status == VerdictStatus::kInvalid);
  CHECK(required.is_violation());
  CHECK(required.evidence.find("without Retry-After") != std::string::npos);
  Verdict recommended =
      RunOracle("retry_after", bare.history(), WithRetryAfter(IdempotencyContract::RetryAfter::kRecommended));
  CHECK(recommended.is_deviation());
  CHECK(std::string(recommended.Label()) == "deviation");
  CHECK(VerdictToJson(recommended)["severity"] == "deviation");
  CHECK(RunOracle("retry_after", bare.history(), WithRetryAfter(IdempotencyContract::RetryAfter::kNone)).status ==
        VerdictStatus::kNotApplicable);

  LiteralHistory with;  // delay-seconds and an HTTP-date both count
  with.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 0, 20, kConflict)
      .Send("burst-2", "create_order", "k1", "b1", 0, 30,
            Answer{409, "{}", {{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"}}});
  CHECK(RunOracle("retry_after", with.history(), WithRetryAfter(IdempotencyContract::RetryAfter::kRequired)).status ==
        VerdictStatus::kValid);
  LiteralHistory garbage;
  garbage.Send("burst-1", "create_order", "k1", "b1", 0, 20, Answer{409, "{}", {{"Retry-After", "soon"}}});
  CHECK(RunOracle("retry_after", garbage.history(), WithRetryAfter(IdempotencyContract::RetryAfter::kRequired))
            .evidence.find("unusable Retry-After 'soon'") != std::string::npos);
}

TEST_CASE("retry_after with no in-progress answer is never valid") {
  LiteralHistory waited;  // the target waited: both got the first answer
  waited.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 0, 210, Replayed());
  Verdict v = RunOracle("retry_after", waited.history(), WithRetryAfter(IdempotencyContract::RetryAfter::kRequired));
  CHECK(v.status == VerdictStatus::kNotApplicable);
  CHECK(v.evidence.find("no in-progress answer") != std::string::npos);
}

TEST_CASE("in-progress and mismatch lists: every listed status is accepted") {
  TargetDescription t = ShopTarget();
  t.idempotency.in_progress_also = {425};
  t.idempotency.retry_after = IdempotencyContract::RetryAfter::kRequired;
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 200, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 0, 20, Answer{425, "{}"})
      .Records("create_order", "b1", 1, 300);
  CHECK(RunOracle("in_progress", h.history(), t).status == VerdictStatus::kValid);
  CHECK(RunOracle("retry_after", h.history(), t).is_violation());  // the 425 is in progress: judged

  TargetDescription m = ShopTarget();
  m.idempotency.mismatch_also = {409};
  LiteralHistory other;
  other.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 50, 60, Answer{409, "{}"}, "other");
  CHECK(RunOracle("mismatch_rejected", other.history(), m).status == VerdictStatus::kValid);
  CHECK(RunOracle("mismatch_rejected", other.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("identical_replay: a completed key retried and answered otherwise is a violation, not no replay") {
  for (const Answer& wrong : {Answer{422, R"({"title":"mismatch"})"}, Answer{409, R"({"title":"in progress"})"},
                              Answer{500, R"({"title":"boom"})"}}) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
        .Send("client-0", "create_order", "k1", "b1", 60, 65, wrong);
    Verdict v = RunOracle("identical_replay", h.history());
    INFO(wrong.status);
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("instead of the stored answer") != std::string::npos);
  }
  LiteralHistory lost;  // a retry with no answer says nothing
  lost.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Lost("client-0", "create_order", "k1", "b1", 60, 70);
  CHECK(RunOracle("identical_replay", lost.history()).status == VerdictStatus::kUnknown);
  LiteralHistory after_window;  // ShopTarget's window is 4s: a retry after it is not judged
  after_window.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 5000, 5010, Answer{422, "{}"});
  CHECK(RunOracle("identical_replay", after_window.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("one_record knows the window: a re-execution after it is expected, inside it a violation") {
  // ShopTarget declares window 4s.
  LiteralHistory after;
  after.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 5000);
  Verdict v = RunOracle("one_record", after.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.records.judged_rows.value()[0]["window_executions"] == 2);

  LiteralHistory inside;
  inside.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 3000, 3010, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 5000);
  CHECK(RunOracle("one_record", inside.history()).status == VerdictStatus::kInvalid);

  LiteralHistory three;  // two windows allow two executions, not three
  three.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 3, 5000);
  CHECK(RunOracle("one_record", three.history()).status == VerdictStatus::kInvalid);

  LiteralHistory no_window;  // PlainTarget declares no window: the late execution is a second record
  no_window.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 5000);
  CHECK(RunOracle("one_record", no_window.history(), PlainTarget()).status == VerdictStatus::kInvalid);
}

TEST_CASE("one_record allows one record per key: the same business id under two keys is two executions") {
  // explore's pairing: free sends k1/b1 and k2/b1 (the same body under a new
  // key, issue #33 class 4): each key rightly executes once.
  LiteralHistory two_keys;
  two_keys.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k2", "b1", 60, 70, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 100);
  Verdict v = RunOracle("one_record", two_keys.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);

  LiteralHistory three;  // two keys allow two executions, not three
  three.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":3})"})
      .Send("client-0", "create_order", "k2", "b1", 60, 70, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 3, 100);
  Verdict w = RunOracle("one_record", three.history());
  CHECK(w.status == VerdictStatus::kInvalid);
  CHECK(w.evidence.find("2 keys") != std::string::npos);
}

TEST_CASE("missing key: a 5xx is a violation whether the key is required or optional") {
  LiteralHistory boom;
  boom.Send("client-0", "create_order", "", "b1", 0, 10, Answer{500, "{}"});
  CHECK(RunOracle("missing_key_rejected", boom.history()).status == VerdictStatus::kInvalid);
  TargetDescription optional = ShopTarget();
  optional.idempotency.key_optional = true;
  CHECK(RunOracle("keyless_executes", boom.history(), optional).status == VerdictStatus::kInvalid);
}

TEST_CASE("keyless_executes: with key optional a keyless request executes and is never a replay") {
  TargetDescription optional = ShopTarget();
  optional.idempotency.key_optional = true;
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "", "b2", 20, 30, Answer{201, R"({"id":2})"});
  CHECK(RunOracle("keyless_executes", ok.history(), optional).status == VerdictStatus::kValid);
  Verdict na = RunOracle("missing_key_rejected", ok.history(), optional);
  CHECK(na.status == VerdictStatus::kNotApplicable);
  CHECK(RunOracle("keyless_executes", ok.history()).status == VerdictStatus::kNotApplicable);  // key required

  LiteralHistory replayed;  // the empty key deduplicated the second keyless request
  replayed.Send("client-0", "create_order", "", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "", "b2", 20, 30, Replayed());
  Verdict v = RunOracle("keyless_executes", replayed.history(), optional);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("answered as a replay") != std::string::npos);

  LiteralHistory refused;
  refused.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "{}"});
  CHECK(RunOracle("keyless_executes", refused.history(), optional).status == VerdictStatus::kInvalid);
  CHECK(RunOracle("keyless_executes", History(), optional).status == VerdictStatus::kUnknown);
}

namespace {
// The execution after ShopTarget's 4s window: a second order.
const Answer kCreatedAgain{201, R"({"id":2,"biz_no":"b1","trace":"b"})", {{"Location", "/orders/2"}}};
const Answer kReplayedAgain{201, R"({"id":2,"biz_no":"b1","trace":"c"})",
                            {{"Location", "/orders/2"}, {"Idempotent-Replayed", "true"}}};

// One order at 0-10 ms, then at 4500 ms (past the 4s window) a burst of 5:
// `executions` of them unmarked 2xx, the rest in progress; `records` after.
LiteralHistory BurstAfterWindow(int executions, int records) {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  for (int i = 0; i < 5; ++i)
    h.Send("burst-" + std::to_string(i), "create_order", "k1", "b1", 4500, 4520 + i,
           i < executions ? Answer{201, R"({"id":)" + std::to_string(2 + i) + R"(,"biz_no":"b1"})"} : kConflict);
  h.Records("create_order", "b1", records, 5000);
  return h;
}
}  // namespace

TEST_CASE("a burst after the window is one window with one more execution and not one per request") {
  Verdict ok = RunOracle("one_record", BurstAfterWindow(1, 2).history());
  CHECK(ok.status == VerdictStatus::kValid);
  CHECK(ok.details.records.judged_rows.value()[0]["window_executions"] == 2);
  Verdict raced = RunOracle("one_record", BurstAfterWindow(5, 6).history());  // expiry-race
  CHECK(raced.status == VerdictStatus::kInvalid);
  CHECK(raced.evidence.find("6 records") != std::string::npos);

  Verdict in_progress = RunOracle("in_progress", BurstAfterWindow(1, 2).history());
  CHECK(in_progress.status == VerdictStatus::kValid);
  CHECK(in_progress.details.counts.overlapping_duplicates == 4);
  Verdict twice = RunOracle("in_progress", BurstAfterWindow(5, 6).history());
  CHECK(twice.status == VerdictStatus::kInvalid);
  CHECK(twice.evidence.find("executed 5 times inside one retry window") != std::string::npos);
  // Without the window each execution after the first is one too many.
  CHECK(RunOracle("in_progress", BurstAfterWindow(1, 2).history(), PlainTarget()).status == VerdictStatus::kInvalid);
}

TEST_CASE("identical_replay judges each window after the first against its own execution") {
  LiteralHistory ok;  // re-executed after the window, then replayed inside the new one
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, kReplayedAgain);
  Verdict v = RunOracle("identical_replay", ok.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.replays_checked == 1);

  LiteralHistory kept;  // the record outlived its promise: every answer replays the first
  kept.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, Replayed())
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, Replayed());
  CHECK(RunOracle("identical_replay", kept.history()).status == VerdictStatus::kValid);

  LiteralHistory stale;  // after the new execution completed, the old answer again
  stale.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, Replayed());
  Verdict s = RunOracle("identical_replay", stale.history());
  CHECK(s.status == VerdictStatus::kInvalid);
  CHECK(s.evidence.find("after the window") != std::string::npos);

  LiteralHistory blocked;  // the new execution completed, yet the key answers in progress
  blocked.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, kConflict);
  Verdict b = RunOracle("identical_replay", blocked.history());
  CHECK(b.status == VerdictStatus::kInvalid);
  CHECK(b.evidence.find("instead of the stored answer") != std::string::npos);

  LiteralHistory raced;  // two unmarked answers in one window: the second is no replay
  raced.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("burst-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("burst-1", "create_order", "k1", "b1", 4500, 4512, Answer{201, R"({"id":3,"biz_no":"b1"})"});
  Verdict r = RunOracle("identical_replay", raced.history());
  CHECK(r.status == VerdictStatus::kInvalid);
  CHECK(r.evidence.find("replay marker") != std::string::npos);
}

TEST_CASE("identical_replay without a replay marker judges each later window by equality (issue 31)") {
  // ShopTarget's 4s window without the marker (foreign-python-unmarked.yaml):
  // the retry inside the new window must equal the retry that executed after
  // the old one; it used to be "no replay happened", so the correct service
  // could never pass retry-after-window.
  TargetDescription unmarked = ShopTarget();
  unmarked.idempotency.replay.reset();
  const Answer again_replayed{201, R"({"id":2,"biz_no":"b1","trace":"c"})", {{"Location", "/orders/2"}}};

  LiteralHistory ok;  // re-executed after the window, then replayed inside the new one
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, again_replayed);
  Verdict v = RunOracle("identical_replay", ok.history(), unmarked);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.replays_checked == 1);

  LiteralHistory kept;  // the record outlived its promise, then expired: each answer replays its record
  kept.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4610, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4700, 4705, again_replayed);
  Verdict k = RunOracle("identical_replay", kept.history(), unmarked);
  CHECK(k.status == VerdictStatus::kValid);
  CHECK(k.details.counts.replays_checked == 2);

  LiteralHistory stale;  // after the new execution completed, the old answer again
  stale.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, kCreated);
  Verdict s = RunOracle("identical_replay", stale.history(), unmarked);
  CHECK(s.status == VerdictStatus::kInvalid);
  CHECK(s.evidence.find("after the window") != std::string::npos);

  LiteralHistory regenerated;  // the replay inside the new window made up a new answer
  regenerated.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605,
            Answer{201, R"({"id":3,"biz_no":"b1"})", {{"Location", "/orders/3"}}});
  CHECK(RunOracle("identical_replay", regenerated.history(), unmarked).status == VerdictStatus::kInvalid);

  LiteralHistory blocked;  // the new execution completed, yet the key answers in progress
  blocked.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, kConflict);
  Verdict b = RunOracle("identical_replay", blocked.history(), unmarked);
  CHECK(b.status == VerdictStatus::kInvalid);
  CHECK(b.evidence.find("instead of the stored answer") != std::string::npos);

  LiteralHistory raced;  // a burst after the window executed twice: two new answers in one window
  raced.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("burst-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("burst-1", "create_order", "k1", "b1", 4500, 4512,
            Answer{201, R"({"id":3,"biz_no":"b1"})", {{"Location", "/orders/3"}}});
  Verdict r = RunOracle("identical_replay", raced.history(), unmarked);
  CHECK(r.status == VerdictStatus::kInvalid);
  CHECK(r.evidence.find("(burst-0) answered") != std::string::npos);  // shown against the window's execution

  LiteralHistory waited;  // the burst's copies waited in progress, then a retry replayed its one execution
  waited.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("burst-0", "create_order", "k1", "b1", 4500, 4510, kCreatedAgain)
      .Send("burst-1", "create_order", "k1", "b1", 4500, 4505, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 4600, 4605, again_replayed);
  CHECK(RunOracle("identical_replay", waited.history(), unmarked).status == VerdictStatus::kValid);
}

TEST_CASE("a property whose premise never occurred is unknown: premise not reached") {
  // One request and one record: one_record has nothing repeated to count.
  LiteralHistory once;
  once.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("one_record", once.history());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.PremiseNotReached());
  CHECK(v.evidence.rfind(kPremiseNotReached, 0) == 0);
  CHECK(v.premise.what == "repeated deliveries (or keyless requests)");

  // The double submit reaches it once.
  LiteralHistory twice;
  twice.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed())
      .Records("create_order", "b1", 1, 100);
  v = RunOracle("one_record", twice.history());
  CHECK(v.status == VerdictStatus::kValid);
  REQUIRE(v.premise.count);
  CHECK(*v.premise.count == 1);
  v = RunOracle("identical_replay", twice.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.premise.what == "replays");
  CHECK(v.premise.count == std::optional<std::int64_t>(1));

  // The oracles' own "nothing to judge" is the premise not reached too.
  for (const char* name : {"identical_replay", "in_progress", "mismatch_rejected", "retryable_released", "window"}) {
    INFO(name);
    Verdict u = RunOracle(name, once.history());
    CHECK(u.status == VerdictStatus::kUnknown);
    CHECK(u.PremiseNotReached());
  }
  // In-progress answers to overlapping duplicates are counted apart.
  LiteralHistory overlap;
  overlap.Send("client-0", "create_order", "k1", "b1", 0, 100, kCreated)
      .Send("client-1", "create_order", "k1", "b1", 10, 15, kConflict)
      .Records("create_order", "b1", 1, 200);
  v = RunOracle("in_progress", overlap.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.premise.count == std::optional<std::int64_t>(1));
  CHECK(v.details.counts.in_progress_answers == 1);
}

TEST_CASE("the registry turns a valid verdict without its premise count into unknown") {
  OracleRegistry registry;
  REQUIRE(registry.Register({"counted", "test", {}, false, "widgets"},
                            [](const OracleInput& in) {
                              const int n = in.params.value("n", -1);
                              Verdict v = Verdict::Valid("counted", "held");
                              return n < 0 ? v : std::move(v).Counted(n);
                            })
              .ok());
  REQUIRE(registry.Register({"plain", "test", {}}, [](const OracleInput&) { return Verdict::Valid("plain", "held"); })
              .ok());
  Scenario s;
  const TargetDescription target = ShopTarget();
  const History h;
  auto check = [&](const std::string& name, nlohmann::json params) {
    OracleSpec spec;
    spec.name = name;
    spec.params = std::move(params);
    return registry.Check(spec, s, target, h);
  };
  Verdict forgot = check("counted", nlohmann::json::object());
  CHECK(forgot.status == VerdictStatus::kUnknown);
  CHECK(forgot.evidence == "premise not reached: no widgets in this run");
  CHECK(check("counted", {{"n", 0}}).PremiseNotReached());
  Verdict held = check("counted", {{"n", 3}});
  CHECK(held.status == VerdictStatus::kValid);
  CHECK(held.premise.what == "widgets");
  // An oracle without a premise is judged as before.
  Verdict plain = check("plain", nlohmann::json::object());
  CHECK(plain.status == VerdictStatus::kValid);
  CHECK(plain.premise.what.empty());
}

TEST_CASE("a semantics profile names the rule of each verdict and sets MUST or SHOULD") {
  // Refused with 400 where ietf expects 422: right effect, wrong status: a SHOULD.
  LiteralHistory refused;
  refused.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{400, R"({"title":"key reused"})"}, "other");
  Verdict v = RunOracle("mismatch_rejected", refused.history());
  CHECK(v.is_deviation());
  CHECK(v.rule.id == "ietf/mismatch-status");
  CHECK(v.rule.level == "SHOULD");
  // Stripe v1 answers exactly that: held, by its own rule.
  v = RunOracle("mismatch_rejected", refused.history(), ShopTargetUnder("stripe-v1"));
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.rule.id == "stripe-v1/changed-request-refused");
  CHECK(v.rule.level == "MUST");
  // ...where the same 422 the reference sends is a MUST miss.
  LiteralHistory unprocessable;
  unprocessable.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{422, "{}"}, "other");
  v = RunOracle("mismatch_rejected", unprocessable.history(), ShopTargetUnder("stripe-v1"));
  CHECK(v.is_violation());
  CHECK(v.rule.id == "stripe-v1/mismatch-status");
  // Executing the changed request breaks the effect rule: a MUST everywhere.
  LiteralHistory executed;
  executed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{201, R"({"id":2})"}, "other");
  for (const char* profile : {"ietf", "stripe-v1", "stripe-v2", "store-2xx-only"}) {
    INFO(profile);
    v = RunOracle("mismatch_rejected", executed.history(), ShopTargetUnder(profile));
    CHECK(v.is_violation());
    CHECK(v.rule.id == std::string(profile) + "/changed-request-refused");
  }
}

TEST_CASE("profiles differ on what is stored: a replayed 500 is right for stripe-v1, a stored failure for ietf") {
  const Answer failed{500, R"({"error":"downstream"})"};
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, failed)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{500, failed.body, {{"Idempotent-Replayed", "true"}}})
      .Records("create_order", "b1", 0, 100);
  // ietf: the failure must be released, so replaying it is the cache-retryable flaw.
  Verdict ietf = RunOracle("retryable_released", h.history());
  CHECK(ietf.is_violation());
  CHECK(ietf.rule.id == "ietf/failure-released");
  // stripe-v1 saves the 500: nothing is released, and the replay is judged as a replay.
  const TargetDescription stripe = ShopTargetUnder("stripe-v1");
  CHECK(stripe.idempotency.stores_5xx);
  CHECK(RunOracle("retryable_released", h.history(), stripe).status == VerdictStatus::kNotApplicable);
  Verdict replay = RunOracle("identical_replay", h.history(), stripe);
  CHECK(replay.status == VerdictStatus::kValid);
  CHECK(replay.rule.id == "stripe-v1/same-answer");

  // store-2xx-only: a 4xx is released like a 5xx, so its replay is a stored failure.
  LiteralHistory rejected;
  rejected.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{404, R"({"title":"no such item"})"})
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{404, R"({"title":"no such item"})", {{"Idempotent-Replayed", "true"}}})
      .Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("retryable_released", rejected.history()).status == VerdictStatus::kUnknown);  // ietf: a 404 is final
  Verdict released = RunOracle("retryable_released", rejected.history(), ShopTargetUnder("store-2xx-only"));
  CHECK(released.is_violation());
  CHECK(released.rule.id == "store-2xx-only/failure-released");
}

TEST_CASE("caller_scope: one key from two callers is two keys") {
  const TargetDescription& target = CallersTarget();
  // Each caller got its own execution: held; the per-caller groups replay alone.
  LiteralHistory ok;
  ok.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .As("bob").Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":2,"biz_no":"b1","trace":"b"})"})
      .Send("client-0", "create_order", "k1", "b1", 40, 45, Replay(201, R"({"id":2,"biz_no":"b1","trace":"c"})"));
  Verdict v = RunOracle("caller_scope", ok.history(), target);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.premise.count == std::optional<std::int64_t>(1));
  CHECK(RunOracle("identical_replay", ok.history(), target).status == VerdictStatus::kValid);

  // Bob gets Alice's order, replay-marked: a leak (cross-caller-replay).
  LiteralHistory leak;
  leak.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .As("bob").Send("client-0", "create_order", "k1", "b1", 20, 30, Replayed());
  v = RunOracle("caller_scope", leak.history(), target);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("caller alice, reused by caller bob") != std::string::npos);
  CHECK(v.evidence.find("a data leak") != std::string::npos);
  // The same without a marker: an answer equal to Alice's.
  LiteralHistory copied;
  copied.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .As("bob").Send("client-0", "create_order", "k1", "b1", 20, 30, kCreated);
  v = RunOracle("caller_scope", copied.history(), CallersTarget(false));
  CHECK(v.is_violation());
  CHECK(v.evidence.find("got the answer of alice's request") != std::string::npos);

  // Bob's different request under Alice's key refused as a mismatch: blocked.
  LiteralHistory blocked;
  blocked.As("alice").Send("client-0", "create_order", "k2", "b2", 0, 10, kCreated)
      .As("bob").Send("client-0", "create_order", "k2", "b3", 20, 30, Answer{422, R"({"title":"key reused"})"});
  v = RunOracle("caller_scope", blocked.history(), target);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("one caller's key blocks another's") != std::string::npos);

  // Alice's session cookie handed to Bob with his own order.
  LiteralHistory cookie;
  cookie.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{201, R"({"id":1})", {{"Set-Cookie", "sid=alice"}}})
      .As("bob").Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":2})", {{"Set-Cookie", "sid=alice"}}});
  v = RunOracle("caller_scope", cookie.history(), target);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("another caller's Set-Cookie") != std::string::npos);

  // Nothing shared: the premise not reached; no callers declared: not applicable.
  LiteralHistory alone;
  alone.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("caller_scope", alone.history(), target).PremiseNotReached());
  CHECK(RunOracle("caller_scope", alone.history()).status == VerdictStatus::kNotApplicable);
}

TEST_CASE("caller_scope: a key refused to its first caller too is not blamed on the other caller") {
  // cross-caller-key on a target that truncates keys: k2 shares k1's long
  // prefix, so Alice's own first k2 request is refused as a mismatch (k1's
  // twin holds it), and so is Bob's. Nothing of Alice's use of k2 held the
  // key: the refusal happens without the other caller.
  const TargetDescription& target = CallersTarget();
  const Answer refused{422, R"({"title":"key reused"})"};
  LiteralHistory twin;
  twin.As("alice").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .As("bob").Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":2,"biz_no":"b1"})"})
      .As("alice").Send("client-0", "create_order", "k2", "b2", 40, 50, refused)
      .As("bob").Send("client-0", "create_order", "k2", "b3", 60, 70, refused);
  Verdict v = RunOracle("caller_scope", twin.history(), target);
  INFO(v.evidence);
  CHECK_FALSE(v.is_violation());
  CHECK(v.evidence.find("because caller alice used the key") == std::string::npos);
  CHECK(v.evidence.find("not the other caller's doing") != std::string::npos);
  CHECK(v.details.lists.not_the_other_caller.value_or(std::vector<std::string>{}).size() == 1);
  // Only k2 was refused without Alice holding it: k1 was judged and held.
  CHECK(v.status == VerdictStatus::kValid);

  // Alice's k2 executed first: Bob's refusal is hers, and the evidence names her request.
  LiteralHistory held;
  held.As("alice").Send("client-0", "create_order", "k2", "b2", 40, 50, kCreated)
      .As("bob").Send("client-0", "create_order", "k2", "b3", 60, 70, refused);
  v = RunOracle("caller_scope", held.history(), target);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("because caller alice used the key (request #") != std::string::npos);
}

TEST_CASE("mismatch_rejected: another payload after the window may take the key (found by explore)") {
  // ShopTarget's window is 4s: the stored result may have expired by 5s.
  LiteralHistory late;
  late.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 5000, 5010, Answer{201, R"({"id":2})"}, "other");
  Verdict v = RunOracle("mismatch_rejected", late.history());
  CHECK(v.status == VerdictStatus::kUnknown);  // not judged: the premise (a reuse inside the record's life) never came
  CHECK(v.details.counts.past_window == 1);
  // Inside the window the same reuse is still the no-fingerprint flaw.
  LiteralHistory early;
  early.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 3000, 3010, Answer{201, R"({"id":2})"}, "other");
  CHECK(RunOracle("mismatch_rejected", early.history()).is_violation());

  // The other payload that took the expired key owns its new window: the
  // first payload is now the mismatch (422), and the other's retry is a
  // replay, not a reuse (2,000 clean trials of create-order.yaml, trial 392).
  LiteralHistory retaken = late;
  retaken.Send("client-0", "create_order", "k1", "b1", 5100, 5110, Answer{422, R"({"title":"mismatch"})"})
      .Send("client-0", "create_order", "k1", "b1", 5200, 5210, Answer{201, R"({"id":2})", {{"Idempotent-Replayed", "true"}}},
            "other");
  Verdict replayed = RunOracle("mismatch_rejected", retaken.history());
  CHECK_FALSE(replayed.is_violation());
  CHECK(replayed.details.counts.past_window == 2);
}

TEST_CASE("window: an execution after the window has passed is no second record inside it (found by explore)") {
  // ShopTarget's window is 4s: a retry inside it replays, one at 5s executes again.
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, Replayed())
      .Send("client-0", "create_order", "k1", "b1", 5000, 5010, Answer{201, R"({"id":2,"biz_no":"b1"})"})
      .Records("create_order", "b1", 2, 6000);
  CHECK(RunOracle("window", h.history()).status == VerdictStatus::kValid);
  // Two records with every request inside the window is still caught.
  LiteralHistory inside;
  inside.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, Replayed())
      .Records("create_order", "b1", 2, 200);
  CHECK(RunOracle("window", inside.history()).is_violation());
}

TEST_CASE("in_progress: another payload rightly executed after the window is no second execution of the burst (found by explore)") {
  // ShopTarget's window is 4s; records count by biz, so the late other payload's record counts too.
  LiteralHistory h;
  h.Send("burst-0", "create_order", "k1", "b1", 0, 100, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 10, 20, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 5000, 5010, Answer{201, R"({"id":2})"}, "other")
      .Records("create_order", "b1", 2, 6000);
  CHECK(RunOracle("in_progress", h.history()).status == VerdictStatus::kValid);
  // Without the late request the second record is a second execution.
  LiteralHistory twice;
  twice.Send("burst-0", "create_order", "k1", "b1", 0, 100, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 10, 20, kConflict)
      .Records("create_order", "b1", 2, 200);
  CHECK(RunOracle("in_progress", twice.history()).is_violation());
}

// lease_recovery judges a key's life with every request of the key in view:
// the simulation (harness/sim) found each shape below on the correct core,
// where another request of the key explains the answer the crashed request
// alone does not. Lease 2 s; the crash at 300 ms (or 2 ms) ends r1.
namespace {
const Answer kMismatch{422, R"({"title":"key reused with another payload"})"};
Verdict Lease(const History& h) { return RunOracle("lease_recovery", h, ShopTarget(), {{"lease", "2s"}}); }
}  // namespace

TEST_CASE("lease_recovery: a 409 after the lease behind a concurrent retry's claim is no blocked key") {
  // r2, sent after the crash, claims the lapsed key and runs until 2600;
  // r3 (after the lease surely ended, 2300) meets r2's claim.
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 2100, 2600, kCreated)
      .Send("client-3", "create_order", "k1", "b1", 2400, 2410, kConflict)
      .Send("client-4", "create_order", "k1", "b1", 2700, 2710, Replayed())
      .Records("create_order", "b1", 1, 3000);
  Verdict v = Lease(WithControl(h.history(), "kill", 300));
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  // Still caught: the claimer answered before the 409 (nothing held the key) ...
  LiteralHistory alone;
  alone.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-3", "create_order", "k1", "b1", 2400, 2410, kConflict)
      .Send("client-5", "create_order", "k1", "b1", 2450, 2460, kConflict);
  Verdict blocked = Lease(WithControl(alone.history(), "kill", 300));
  CHECK(blocked.status == VerdictStatus::kInvalid);
  CHECK(blocked.evidence.find("still in progress after its lease ended") != std::string::npos);
  // ... and a second execution after the claim.
  LiteralHistory twice = h;
  twice.Send("client-5", "create_order", "k1", "b1", 2800, 2810, Answer{201, R"({"id":2})"});
  Verdict second = Lease(WithControl(twice.history(), "kill", 300));
  CHECK(second.status == VerdictStatus::kInvalid);
  CHECK(second.evidence.find("completed more than once") != std::string::npos);
}

TEST_CASE("lease_recovery: a 409 behind a retry that claimed and crashed again is no blocked key") {
  // r2 claims after the first crash and dies in the second (2200): its own
  // lease holds the key until 4200 at most.
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Lost("client-2", "create_order", "k1", "b1", 2100, 2200)
      .Send("client-3", "create_order", "k1", "b1", 2400, 2410, kConflict)
      .Send("client-4", "create_order", "k1", "b1", 4500, 4600, kCreated)
      .Records("create_order", "b1", 1, 5000);
  Verdict v = Lease(WithControl(WithControl(h.history(), "kill", 300), "kill", 2200));
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  // Still caught: blocked past the second request's lease too.
  LiteralHistory stuck;
  stuck.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Lost("client-2", "create_order", "k1", "b1", 2100, 2200)
      .Send("client-3", "create_order", "k1", "b1", 2400, 2410, kConflict)
      .Send("client-4", "create_order", "k1", "b1", 4500, 4510, kConflict);
  Verdict blocked = Lease(WithControl(WithControl(stuck.history(), "kill", 300), "kill", 2200));
  CHECK(blocked.status == VerdictStatus::kInvalid);
  CHECK(blocked.evidence.find("(request #") != std::string::npos);
  // A retry the client gave up on (no second crash) holds the key at most a
  // lease past that: it never excuses a key blocked for good.
  LiteralHistory gave_up;
  gave_up.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Lost("client-2", "create_order", "k1", "b1", 2100, 2200)
      .Send("client-3", "create_order", "k1", "b1", 2400, 2410, kConflict)
      .Send("client-4", "create_order", "k1", "b1", 4500, 4510, kConflict);
  Verdict timed_out = Lease(WithControl(gave_up.history(), "kill", 300));
  CHECK(timed_out.status == VerdictStatus::kInvalid);
  CHECK(timed_out.evidence.find("client-4") != std::string::npos);
}

TEST_CASE("lease_recovery: a mismatch after the lease, once the other payload took the key, is no finding") {
  // After the lease r3 (the other payload) claims first; r2, the crashed
  // request's retry, is rightly refused as a mismatch.
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 2400, 2430, kMismatch)
      .Send("client-3", "create_order", "k1", "b1", 2410, 2420, kCreated, "other")
      .Records("create_order", "b1", 1, 3000);
  Verdict v = Lease(WithControl(h.history(), "kill", 300));
  INFO(v.evidence);
  CHECK(v.status != VerdictStatus::kInvalid);
  // Still caught: a mismatch no other payload explains.
  LiteralHistory alone;
  alone.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 2400, 2430, kMismatch)
      .Send("client-3", "create_order", "k1", "b1", 2500, 2510, kMismatch, "other");
  Verdict wrong = Lease(WithControl(alone.history(), "kill", 300));
  CHECK(wrong.status == VerdictStatus::kInvalid);
  INFO(wrong.evidence);
  CHECK(wrong.evidence.find("(client-2), a retry after the lease ended, was answered 422 mismatch: the key was already "
                            "used with another request") != std::string::npos);
}

TEST_CASE("lease_recovery: a 422 to a retry of the crashed request names the mismatch, not the lease") {
  // The retry differs from the crashed request (here: a variant); the target
  // refuses it as a reuse of the key with another request. That is the
  // answer's cause: the lease held (the 409 showed the claim) and ended.
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 500, 510, kConflict)
      .Variant("traced")
      .Send("client-3", "create_order", "k1", "b1", 2400, 2430, kMismatch)
      .Records("create_order", "b1", 0, 3000);
  Verdict v = Lease(WithControl(h.history(), "kill", 300));
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("after the lease ended got mismatch") == std::string::npos);
  CHECK(v.evidence.find("was answered 422 mismatch: the key was already used with another request") !=
        std::string::npos);
  CHECK(v.evidence.find("they differ: variant none against traced") != std::string::npos);
  CHECK(v.evidence.find("not a lease failure") != std::string::npos);
  // The same 422 while the lease was live: refused, so the key was held; not an early takeover either.
  LiteralHistory early;
  early.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 500, 510, kConflict)
      .Send("client-3", "create_order", "k1", "b1", 900, 910, kMismatch)
      .Send("client-4", "create_order", "k1", "b1", 2400, 2410, kCreated)
      .Records("create_order", "b1", 1, 3000);
  v = Lease(WithControl(early.history(), "kill", 300));
  INFO(v.evidence);
  CHECK(v.evidence.find("while the crashed request's lease was live, was answered 422 mismatch") != std::string::npos);
  CHECK(v.evidence.find("was answered mismatch while the crashed request's lease was live") == std::string::npos);
}

TEST_CASE("lease_recovery: a retry's 201 is no early takeover when the 409 that showed the claim was another retry's") {
  // r1 died before its claim (kill at 2 ms); r2 claims and executes, r3
  // meets r2's claim, not r1's.
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 2)
      .Send("client-2", "create_order", "k1", "b1", 600, 900, kCreated)
      .Send("client-3", "create_order", "k1", "b1", 700, 710, kConflict)
      .Send("client-4", "create_order", "k1", "b1", 2600, 2610, Replayed())
      .Records("create_order", "b1", 1, 3000);
  Verdict v = Lease(WithControl(h.history(), "kill", 2));
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  // Still caught: the 409 came before the executing retry was sent.
  LiteralHistory early;
  early.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-3", "create_order", "k1", "b1", 700, 720, kConflict)
      .Send("client-2", "create_order", "k1", "b1", 900, 920, kCreated)
      .Send("client-4", "create_order", "k1", "b1", 2600, 2610, Replayed());
  Verdict taken = Lease(WithControl(early.history(), "kill", 300));
  CHECK(taken.status == VerdictStatus::kInvalid);
  CHECK(taken.evidence.find("while the crashed request's lease was live") != std::string::npos);
}

TEST_CASE("every violation an oracle lists is a Finding whose ops point at the history's requests in their roles") {
  LiteralHistory replay;  // identical_replay: first and replay
  replay.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Answer{200, R"({"status":"duplicate"})"});
  LiteralHistory burst;  // one_record: every request of the business id ("ops")
  burst.Send("burst-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 0, 11, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 100);
  LiteralHistory twice;  // in_progress: the executions of one key
  twice.Send("burst-0", "create_order", "k1", "b1", 0, 50, kCreated)
      .Send("burst-1", "create_order", "k1", "b1", 1, 51, Answer{201, R"({"id":2})", {{"Location", "/orders/2"}}});
  struct Case {
    std::string oracle;
    const History& history;
    std::vector<FindingRole> roles;
  };
  const std::vector<Case> cases = {
      {"identical_replay", replay.history(), {FindingRole::kFirst, FindingRole::kReplay}},
      {"one_record", burst.history(), {FindingRole::kOps, FindingRole::kOps}},
      {"in_progress", twice.history(), {FindingRole::kExecutions, FindingRole::kExecutions}},
  };
  for (const Case& c : cases) {
    INFO(c.oracle);
    const Verdict v = RunOracle(c.oracle, c.history);
    REQUIRE(v.status == VerdictStatus::kInvalid);
    REQUIRE(v.details.violations.has_value());
    const nlohmann::json json = FindingToJson(v.details.Findings().at(0));
    const Finding f = FindingFromJson(json);
    CHECK(f.problem == v.evidence);
    CHECK(FindingToJson(f) == json);  // one codec: what is read writes back the same
    std::vector<FindingRole> roles;
    for (const FindingOp& op : f.ops) {
      roles.push_back(op.role);
      REQUIRE(op.index() >= 0);
      REQUIRE(op.index() < static_cast<std::int64_t>(c.history.size()));
      const HistoryEvent& e = c.history.events()[static_cast<std::size_t>(op.index())];
      CHECK(e.is_request());
      CHECK(e.type == EventType::kInvoke);
    }
    CHECK(roles == c.roles);
  }
}

TEST_CASE("a finding keeps what is not a request of the history out of its ops") {
  // An answer a proxy swallowed has no history index: evidence, not an op.
  Finding f = MakeFinding("p", {{"key", "k1"}})
                  .With(FindingRole::kFirst, {{"swallowed_by", "drop-response"}, {"status", 201}})
                  .With(FindingRole::kReplay, {{"index", 4}, {"process", "client-0"}})
                  .With(FindingRole::kDuplicate, nullptr);
  f.rule = "status";
  f.records = 2;
  f.differences = {"status 200 != 201"};
  REQUIRE(f.ops.size() == 1);
  CHECK(f.ops[0].role == FindingRole::kReplay);
  CHECK(f.ops[0].index() == 4);
  const nlohmann::json j = FindingToJson(f);
  CHECK(j == nlohmann::json::parse(R"({"key":"k1","problem":"p","rule":"status",
      "first":{"swallowed_by":"drop-response","status":201},"replay":{"index":4,"process":"client-0"},
      "differences":["status 200 != 201"],"records":2})"));
  const Finding back = FindingFromJson(j);
  CHECK(back.ops.size() == 1);
  CHECK(back.subject.contains("first"));
  CHECK(back.rule == "status");
  CHECK(back.records == std::optional<std::int64_t>(2));
  CHECK(FindingToJson(back) == j);
}

TEST_CASE("lease_recovery and probe_equal carry what broke as a Finding with its requests in their roles") {
  // lease_recovery: the crashed request and the retry after the lease; when
  // the key completed twice, the completions too.
  LiteralHistory alone;
  alone.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-3", "create_order", "k1", "b1", 2400, 2410, kConflict);
  LiteralHistory twice;
  twice.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-2", "create_order", "k1", "b1", 2100, 2600, kCreated)
      .Send("client-4", "create_order", "k1", "b1", 2700, 2710, Replayed())
      .Send("client-5", "create_order", "k1", "b1", 2800, 2810, Answer{201, R"({"id":2})"});
  struct Case {
    History history;
    // The process of each op, in the codec's role order.
    std::vector<std::pair<FindingRole, std::string>> ops;
  };
  const std::vector<Case> cases = {
      {WithControl(alone.history(), "kill", 300),
       {{FindingRole::kRetry, "client-3"}, {FindingRole::kRequest, "client-1"}}},
      {WithControl(twice.history(), "kill", 300),
       {{FindingRole::kRetry, "client-4"},
        {FindingRole::kRequest, "client-1"},
        {FindingRole::kExecutions, "client-2"},
        {FindingRole::kExecutions, "client-5"}}},
  };
  for (const Case& c : cases) {
    const Verdict v = Lease(c.history);
    INFO(v.evidence);
    REQUIRE(v.status == VerdictStatus::kInvalid);
    REQUIRE(v.details.violations.has_value());
    REQUIRE(v.details.Findings().size() == 1);
    const nlohmann::json json = FindingToJson(v.details.Findings().at(0));
    const Finding f = FindingFromJson(json);
    CHECK(f.problem == v.evidence);
    CHECK(FindingToJson(f) == json);
    CHECK(f.subject.value("key", "") == "k1");
    std::vector<std::pair<FindingRole, std::string>> ops;
    for (const FindingOp& op : f.ops) {
      REQUIRE(op.index() >= 0);
      REQUIRE(op.index() < static_cast<std::int64_t>(c.history.size()));
      const HistoryEvent& e = c.history.events()[static_cast<std::size_t>(op.index())];
      CHECK(e.is_request());
      CHECK(e.type == EventType::kInvoke);
      ops.emplace_back(op.role, e.process);
    }
    CHECK(ops == c.ops);
  }

  // probe_equal: no request, the two values' differences.
  LiteralHistory released;
  released.Probe("stock", "before", 1000, 0).Probe("stock", "after", 1001, 100);
  const Verdict v = RunOracle("probe_equal", released.history(), ShopTarget(), {{"a", "before"}, {"b", "after"}});
  REQUIRE(v.status == VerdictStatus::kInvalid);
  REQUIRE(v.details.violations.has_value());
  REQUIRE(v.details.Findings().size() == 1);
  const Finding f = v.details.Findings().at(0);
  CHECK(f.problem == v.evidence);
  CHECK(f.ops.empty());
  CHECK(f.differences == std::vector<std::string>{"$: 1000 != 1001"});
}

// Issue 33, class 9: a retry that is not the same request proves something
// else than a retry; every verdict about its key says how it differed.
TEST_CASE("every verdict about a key whose requests differ names the difference", "[oracles][request-differences]") {
  LiteralHistory h;
  h.Carrying({"POST", "http://127.0.0.1:1/orders?slow_ms=1500",
              {{"Content-Type", "application/json"}, {"Idempotency-Key", "k1"}}, R"({"biz_no":"b1","qty":1})"})
      .Send("client-1", "create_order", "k1", "b1", 0, 1500, kCreated)
      // the same request on another instance, members reordered and respaced, header names lower-cased
      .Carrying({"POST", "http://127.0.0.1:2/orders", {{"content-type", "application/json"}, {"idempotency-key", "k1"}},
                 "{\n  \"qty\": 1,\n  \"biz_no\": \"b1\"\n}\n"})
      .Send("client-0", "create_order", "k1", "b1", 300, 310, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 1600, 1610, Replayed())
      .Records("create_order", "b1", 1, 2000);
  const std::string said = "requests of key k1 (create_order) differ: #0 has query slow_ms=1500, #2, #4 have none";
  for (const char* oracle : {"identical_replay", "one_record", "in_progress"}) {
    Verdict v = RunOracle(oracle, h.history());
    INFO(oracle << ": " << v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
    CHECK(v.evidence.find(said) != std::string::npos);
    REQUIRE(v.details.lists.request_differences.value_or(std::vector<std::string>{}).size() == 1);  // the query alone: the rest is spelling
    CHECK(v.details.lists.request_differences->at(0) == said);
  }
}

TEST_CASE("requests that are the same, or differ only as their forms say, are not called different",
          "[oracles][request-differences]") {
  LiteralHistory same;
  same.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed());
  Verdict v = RunOracle("identical_replay", same.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("differ") == std::string::npos);
  CHECK_FALSE(v.details.lists.request_differences.has_value());

  // Another payload and a changed value under one key differ on purpose.
  LiteralHistory changed;
  changed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Carrying({"POST", "http://127.0.0.1:1/orders", {}, R"({"biz_no":"b1","qty":2})"})
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Answer{422, "{}"}, "other")
      .Carrying({"POST", "http://127.0.0.1:1/orders", {}, R"({"biz_no":"b1","qty":3})"})
      .Send("client-0", "create_order", "k1", "b1", 70, 75, Answer{422, "{}"}, "value_changed");
  Verdict m = RunOracle("mismatch_rejected", changed.history());
  CHECK(m.status == VerdictStatus::kValid);
  CHECK(m.evidence.find("differ") == std::string::npos);
}

// Issue 35: every request carries its own span (traceparent): the harness's
// header, not a difference between a key's requests.
TEST_CASE("requests that differ only in their traceparent span are not called different",
          "[oracles][request-differences]") {
  LiteralHistory h;
  h.Carrying({"POST", "http://127.0.0.1:1/orders",
              {{"Idempotency-Key", "k1"}, {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
              R"({"biz_no":"b1","qty":1})"})
      .Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Carrying({"POST", "http://127.0.0.1:1/orders",
                 {{"Idempotency-Key", "k1"}, {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"}},
                 R"({"biz_no":"b1","qty":1})"})
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed());
  Verdict v = RunOracle("identical_replay", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK_FALSE(v.details.lists.request_differences.has_value());
}

// Issue 33, class 6: a failed request repeated unchanged gets the stored
// failure unchanged, Retry-After included.
TEST_CASE("identical_replay: a stored failure repeated must come back unchanged, Retry-After included",
          "[oracles][stored-failure]") {
  const Answer rejected{402, R"({"title":"Downstream rejected"})", {{"Retry-After", "30"}}};
  auto judge = [&](const Answer& repeat) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k1", "b1", 0, 10, rejected).Send("client-0", "create_order", "k1", "b1", 60, 65, repeat);
    return RunOracle("identical_replay", h.history(), ShopTarget(), {{"failures", true}});
  };
  CHECK(judge(Answer{402, rejected.body, {{"Retry-After", "30"}, {"Idempotent-Replayed", "true"}}}).status ==
        VerdictStatus::kValid);
  Verdict lost = judge(Answer{402, rejected.body, {{"Idempotent-Replayed", "true"}}});
  CHECK(lost.status == VerdictStatus::kInvalid);
  CHECK(lost.evidence.find("Retry-After") != std::string::npos);
  Verdict generic = judge(Answer{402, R"({"title":"Request failed"})", {{"Retry-After", "30"}, {"Idempotent-Replayed", "true"}}});
  CHECK(generic.status == VerdictStatus::kInvalid);
  CHECK(generic.evidence.find("body differs") != std::string::npos);

  // failures: true judges only failed keys: a success replay is no premise.
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed());
  Verdict none = RunOracle("identical_replay", ok.history(), ShopTarget(), {{"failures", true}});
  CHECK(none.status == VerdictStatus::kUnknown);
  CHECK(none.evidence.find("no stored failure") != std::string::npos);
}

namespace {
// A queue consumer whose account balance adds each message's amount
// (`counts:` / `sums:` on its probe), as a target file declares it.
TargetDescription InboxTarget(const std::string& probe_keys) {
  auto t = ParseTarget(R"(name: inbox
base_url: "http://127.0.0.1:{{port}}"
actions:
  create_order: {role: create, request: {method: POST, path: /orders}}
messages:
  credit:
    push: {method: POST, path: /inbox, json: {message_id: "{{key}}", amount: 5}}
    fields: {message_id: "{{key}}", amount: "5"}
probes:
  balance: {request: {path: /accounts}, value: "$.balance")" + probe_keys + R"(}
)",
                       "inbox.yaml");
  if (!t.ok()) FAIL(t.status().ToString());
  return *t;
}

// Deliveries of messages as the deliverer records them (push body with the
// amount), each acknowledged (200) unless `lost`; then the balance probe.
History CreditDeliveries(const std::vector<std::pair<std::string, int>>& pushes, std::int64_t balance) {
  History h;
  int t = 0;
  auto probe = [&](const std::string& label, std::int64_t value) {
    LiteralHistory p;
    p.Probe("balance", label, value, t++);
    for (const auto& e : p.history().events()) h.Append(e);
  };
  probe("before", 0);
  for (const auto& [message, amount] : pushes) {
    const RequestSubject subject{"credit", message, message, "", "", ""};
    const std::string body = R"({"message_id":")" + message + R"(","amount":)" + std::to_string(amount) + "}";
    HistoryEvent e = DeliverInvoke(subject, 0, {"POST", "http://127.0.0.1:1/inbox", {}, body}, {{"message", message}}, -1);
    e.time_ns = std::int64_t{t++} * 1000000;
    RecordedExchange x;
    x.type = EventType::kOk;
    x.status = 200;
    x.body = "{}";
    HistoryEvent done = DeliverCompletion(e, x, false);
    done.time_ns = std::int64_t{t++} * 1000000;
    h.Append(e);
    h.Append(done);
  }
  probe("after", balance);
  return h;
}
}  // namespace

TEST_CASE("applied_once: a counter that sums the messages' amounts is judged in amounts, not applications") {
  // m1 delivered twice (a redelivery), m2 once, 5 each: a balance of 10 is
  // each applied once. Read as a count of applications, 10 > 2 messages was
  // a violation the consumer did not earn.
  const nlohmann::json params = {{"counter", "after"}, {"before", "before"}, {"actions", {"credit"}}};
  const History once = CreditDeliveries({{"m1", 5}, {"m1", 5}, {"m2", 5}}, 10);
  const TargetDescription sums = InboxTarget(R"(, sums: "$.amount")");
  REQUIRE(sums.probes.at("balance").sums);
  Verdict v = RunOracle("applied_once", once, sums, params);
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("the counter moved by 10 (summing $.amount) for 2 distinct message(s)") != std::string::npos);
  // The redelivery applied again: 15, said in amounts.
  v = RunOracle("applied_once", CreditDeliveries({{"m1", 5}, {"m1", 5}, {"m2", 5}}, 15), sums, params);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("moved by 15 for 2 distinct message(s) worth 10") != std::string::npos);
  // An acknowledged message lost: 5.
  v = RunOracle("applied_once", CreditDeliveries({{"m1", 5}, {"m1", 5}, {"m2", 5}}, 5), sums, params);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("worth 10: one was lost") != std::string::npos);
  // A probe counting applications (the default, or said) reads the same 10 as ten applications.
  for (const std::string& keys : {std::string(), std::string(", counts: applications")}) {
    const TargetDescription counts = InboxTarget(keys);
    CHECK_FALSE(counts.probes.at("balance").sums);
    CHECK(RunOracle("applied_once", once, counts, params).is_violation());
    CHECK(RunOracle("applied_once", CreditDeliveries({{"m1", 5}, {"m1", 5}, {"m2", 5}}, 2), counts, params).status ==
          VerdictStatus::kValid);
  }
  // A message without the member summed: undecided, never a guess.
  const TargetDescription other = InboxTarget(R"(, sums: "$.delta")");
  v = RunOracle("applied_once", once, other, params);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("sums $.delta") != std::string::npos);
}

namespace {
// `base` with every request of `process` marked as sent by a client that
// honours Retry-After (`send` with `every: retry_after`), as the runtime marks them.
History Honouring(const History& base, const std::string& process) {
  History out;
  for (HistoryEvent e : base.events()) {
    if (e.process == process && e.type == EventType::kInvoke) e.value["honours_retry_after"] = true;
    out.Append(e);
  }
  return out;
}
}  // namespace

TEST_CASE("retry_after: a Retry-After under the minimum is a violation quoting it, and a client waiting as told must "
          "make progress") {
  const TargetDescription required = WithRetryAfter(IdempotencyContract::RetryAfter::kRequired);
  REQUIRE(required.idempotency.retry_after_min == std::chrono::seconds(1));  // the documented default
  // "0" says retry at once: for as long as the work runs, forever.
  LiteralHistory zero;
  zero.Send("client-1", "create_order", "k1", "b1", 0, 1500, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 300, 310, Answer{409, "{}", {{"Retry-After", "0"}}});
  Verdict v = RunOracle("retry_after", zero.history(), required);
  INFO(v.evidence);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("with 'Retry-After: 0', a delay under the minimum of 1s") != std::string::npos);
  CHECK(v.evidence.find("request #") == 0);
  // A declared minimum of 2s makes "1" too short.
  TargetDescription two = required;
  two.idempotency.retry_after_min = std::chrono::seconds(2);
  LiteralHistory one;
  one.Send("client-0", "create_order", "k1", "b1", 300, 310, kConflict);
  CHECK(RunOracle("retry_after", one.history(), required).status == VerdictStatus::kValid);
  CHECK(RunOracle("retry_after", one.history(), two).evidence.find("'Retry-After: 1', a delay under the minimum of 2s") !=
        std::string::npos);

  // A client that waited 1 s as told, twice, then got the replay: progress.
  LiteralHistory told;
  told.Send("client-1", "create_order", "k1", "b1", 0, 1500, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 300, 310, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 1310, 1320, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2320, 2330, Replayed());
  v = RunOracle("retry_after", Honouring(told.history(), "client-0"), required);
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.honouring_clients == 1);
  CHECK(v.evidence.find("1 client(s) that waited as told made progress") != std::string::npos);
  // Told "1" every time and still in progress when its retries ran out: the key never moved.
  LiteralHistory stuck;
  stuck.Send("client-0", "create_order", "k1", "b1", 300, 310, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 1310, 1320, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2320, 2330, kConflict);
  v = RunOracle("retry_after", Honouring(stuck.history(), "client-0"), required);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("a client that waited as each answer's Retry-After told it made no progress: its 3 "
                        "request(s) of key k1") == 0);
  CHECK(v.evidence.find("told Retry-After 1, 1, 1") != std::string::npos);
}

// ---- route_spelling (issue 33: another spelling of a keyed route) ----

namespace {
// The shop with path_equivalence: a trailing slash is another route, the
// query order the same one; the case undeclared.
TargetDescription SpellingTarget() {
  TargetDescription t = ShopTarget();
  t.idempotency.path_equivalence.trailing_slash = PathEquivalence::Spelling::kDistinct;
  t.idempotency.path_equivalence.query_order = PathEquivalence::Spelling::kSame;
  return t;
}
}  // namespace

TEST_CASE("route_spelling holds when each spelling is answered as the target declares it") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated, "spelling")
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{404, R"({"title":"not found"})"},
            "spelling_trailing_slash")
      .Send("client-0", "create_order", "k1", "b1", 40, 50, Replayed(), "spelling_query_order")
      .Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("route_spelling", h.history(), SpellingTarget());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.rfind("2 request(s) under another spelling", 0) == 0);
  // Nothing declared to judge: never valid.
  LiteralHistory none;
  none.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated, "spelling")
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Replayed(), "spelling_case");
  CHECK(RunOracle("route_spelling", none.history(), SpellingTarget()).status == VerdictStatus::kUnknown);
}

TEST_CASE("route_spelling catches a same spelling executed again and a distinct one given the stored answer") {
  // key-includes-query: the query reordered is another key, a second order.
  LiteralHistory again;
  again.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated, "spelling")
      .Send("client-0", "create_order", "k1", "b1", 20, 30,
            Answer{201, R"({"id":2,"biz_no":"b1","trace":"b"})", {{"Location", "/orders/2"}}}, "spelling_query_order")
      .Records("create_order", "b1", 2, 100);
  Verdict v = RunOracle("route_spelling", again.history(), SpellingTarget());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("(query_order: same, idempotency.path_equivalence) was answered 201") != std::string::npos);
  CHECK(v.evidence.find("not the first answer replayed") != std::string::npos);
  CHECK(v.details.Findings().size() == 2);  // and a second record
  // A distinct route answered with the first route's replay.
  LiteralHistory swallowed;
  swallowed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated, "spelling")
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Replayed(), "spelling_trailing_slash")
      .Records("create_order", "b1", 1, 100);
  Verdict d = RunOracle("route_spelling", swallowed.history(), SpellingTarget());
  CHECK(d.status == VerdictStatus::kInvalid);
  CHECK(d.evidence.find("(trailing_slash: distinct, idempotency.path_equivalence) was answered 201") !=
        std::string::npos);
  CHECK(d.evidence.find("another route answered with the first route's stored answer") != std::string::npos);
}

// Issue 49 item 4: the empty-replay flaw under a `same` spelling. The key
// was recognised (the answer is marked as a replay), so the spelling holds;
// that the replay is 200 {"status":"duplicate"} instead of the first answer
// is identical_replay's finding, on the plain replays of the same flaw.
TEST_CASE("route_spelling does not diagnose an empty replay as a spelling problem, identical_replay does") {
  const Answer empty{200, R"({"status":"duplicate"})", {{"Idempotent-Replayed", "true"}}};
  LiteralHistory spelled;
  spelled.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated, "spelling")
      .Send("client-0", "create_order", "k1", "b1", 40, 50, empty, "spelling_query_order")
      .Records("create_order", "b1", 1, 100);
  Verdict v = RunOracle("route_spelling", spelled.history(), SpellingTarget());
  INFO(v.evidence << "\n" << VerdictDetailsToJson(v.details).dump(2));
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("taken for another request") == std::string::npos);
  CHECK(v.details.records.judged_rows.value()[0]["judged_by"].get<std::string>().rfind("identical_replay", 0) == 0);
  CHECK(v.details.records.judged_rows.value()[0]["replay_differs"][0] == "status 200 != 201");
  // Without a marker and without records to decide: still judged by the answer, as before.
  TargetDescription unmarked = SpellingTarget();
  unmarked.idempotency.replay.reset();
  for (auto& [name, action] : unmarked.actions) action.records.reset();
  LiteralHistory plain;
  plain.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated, "spelling")
      .Send("client-0", "create_order", "k1", "b1", 40, 50, Answer{200, R"({"status":"duplicate"})"},
            "spelling_query_order");
  CHECK(RunOracle("route_spelling", plain.history(), unmarked).status == VerdictStatus::kInvalid);
  // The same flaw on plain replays: identical_replay names it.
  LiteralHistory replays;
  replays.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 65, empty);
  Verdict r = RunOracle("identical_replay", replays.history());
  CHECK(r.status == VerdictStatus::kInvalid);
  CHECK(r.evidence.find("status 200 != 201") != std::string::npos);
}

TEST_CASE("identical_replay: a retry failed retryably while the target's own store was down is not judged") {
  // The explore file between-the-cases.yaml drew `send k1; fault store_down:
  // send k1` on the correct box office: its store reset, the retry got 503
  // store_unavailable, and this oracle called it a lost replay.
  TargetDescription target = ShopTarget();
  EgressDescription store;
  store.name = "store";
  store.upstream = "127.0.0.1:6379";
  store.tcp = true;
  target.egress["store"] = store;
  Scenario s;
  s.name = "literal";
  s.hunts = "test";
  FaultDeclaration down;
  down.name = "store_down";
  down.kind = "reset";
  down.on = "egress.store";
  down.params = nlohmann::json{{"window", "600ms"}};
  s.faults["store_down"] = down;
  OracleSpec spec;
  spec.name = "identical_replay";
  auto judge = [&](const History& h) { return BuiltinOracles().Check(spec, s, target, h); };

  LiteralHistory during;  // the 503 came while the store was down, the replay after it came back
  during.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Fault("store_down", "start", 100)
      .Send("client-0", "create_order", "k1", "b1", 200, 210, kUnavailable)
      .Fault("store_down", "heal", 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 910, Replayed());
  Verdict v = judge(during.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.counts.failed_during_store_outage == 1);

  LiteralHistory after;  // the store was back: a 503 for a completed key is no replay
  after.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Fault("store_down", "start", 100)
      .Fault("store_down", "heal", 150)
      .Send("client-0", "create_order", "k1", "b1", 200, 210, kUnavailable);
  CHECK(judge(after.history()).status == VerdictStatus::kInvalid);

  LiteralHistory windowed;  // no heal step: the declared 600 ms window ends the outage
  windowed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Fault("store_down", "start", 100)
      .Send("client-0", "create_order", "k1", "b1", 800, 810, kUnavailable);
  CHECK(judge(windowed.history()).status == VerdictStatus::kInvalid);

  // window alike: the hunt's own store reset made the correct Ruby box
  // office answer 500 to a retry inside the window; set aside, counted.
  OracleSpec window_spec;
  window_spec.name = "window";
  Verdict w = BuiltinOracles().Check(window_spec, s, target, during.history());
  INFO(w.evidence);
  CHECK(w.status == VerdictStatus::kValid);
  CHECK(w.evidence.find("; 1 answer(s) set aside: 503 while the store was down x1") != std::string::npos);
  CHECK(BuiltinOracles().Check(window_spec, s, target, after.history()).status == VerdictStatus::kInvalid);

  s.faults["store_down"].on = "";  // a fault on the client's hop is no store outage
  CHECK(judge(during.history()).status == VerdictStatus::kInvalid);
}

// Issue 46, a client abort: what a retry after the client gave up gets.
TEST_CASE("answer_after_abort catches an empty or cut stored answer after a client gave up, and holds for the real one") {
  auto after_abort = [](const Answer& retry) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k0", "b0", 0, 10, kCreated)  // received whole: the action's shape
        .Lost("client-0", "create_order", "k1", "b1", 20, 220)        // the client gave up
        .Send("client-0", "create_order", "k1", "b1", 230, 240, kConflict)
        .Send("client-0", "create_order", "k1", "b1", 900, 910, retry);
    return RunOracle("answer_after_abort", h.history());
  };
  CHECK(after_abort(Replayed()).status == VerdictStatus::kValid);
  Verdict empty = after_abort(Answer{200, "", {{"Idempotent-Replayed", "true"}}});
  CHECK(empty.status == VerdictStatus::kInvalid);
  CHECK(empty.evidence.find("answered 200 with an empty body marked as a replay after the client gave up") !=
        std::string::npos);
  Verdict cut = after_abort(Replayed(R"({"id":1,"biz_)"));
  CHECK(cut.status == VerdictStatus::kInvalid);
  CHECK(cut.evidence.find("not whole JSON") != std::string::npos);
  // Nothing to judge is never valid: no abort; an abort with no 2xx after it;
  // no answer of the action received whole to compare with.
  LiteralHistory no_abort;
  no_abort.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 60, 65, Replayed());
  CHECK(RunOracle("answer_after_abort", no_abort.history()).status == VerdictStatus::kUnknown);
  LiteralHistory blocked;
  blocked.Send("client-0", "create_order", "k0", "b0", 0, 10, kCreated)
      .Lost("client-0", "create_order", "k1", "b1", 20, 220)
      .Send("client-0", "create_order", "k1", "b1", 230, 240, kConflict);
  CHECK(RunOracle("answer_after_abort", blocked.history()).status == VerdictStatus::kUnknown);
  LiteralHistory no_shape;
  no_shape.Lost("client-0", "create_order", "k1", "b1", 20, 220)
      .Send("client-0", "create_order", "k1", "b1", 900, 910, Answer{200, "", {{"Idempotent-Replayed", "true"}}});
  CHECK(RunOracle("answer_after_abort", no_shape.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("window: a changed request after another payload took the expired key is no retry of it (found by the hunt)") {
  // ShopTarget's window is 4s. The other payload rightly took the expired key
  // at 5s; a value_changed request (another request again) is then rightly
  // refused 422: it is no retry of the other payload's request.
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 5000, 5010, Answer{201, R"({"id":2})"}, "other")
      .Send("client-0", "create_order", "k1", "b1", 5100, 5110, Answer{422, R"({"title":"mismatch"})"},
            "value_changed");
  Verdict v = RunOracle("window", h.history());
  INFO(v.evidence);
  CHECK_FALSE(v.is_violation());
  CHECK(v.details.counts.retries_in_window == 0);
  // The changed request's own retry inside its window is still judged.
  LiteralHistory again;
  again.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 5000, 5010, Answer{201, R"({"id":2})"}, "value_changed")
      .Send("client-0", "create_order", "k1", "b1", 5100, 5110, Answer{201, R"({"id":3})"}, "value_changed");
  CHECK(RunOracle("window", again.history()).is_violation());
  // mismatch_rejected still judges the changed request as a reuse of the default's key.
  LiteralHistory reused;
  reused.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, Answer{201, R"({"id":2})"}, "value_changed");
  CHECK(RunOracle("mismatch_rejected", reused.history()).is_violation());
}
