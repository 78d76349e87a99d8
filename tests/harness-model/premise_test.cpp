// The counting oracles' premise (issue 16, path 3): a service that executed
// nothing — every request 401 or 302 — is never judged valid; refusals the
// scenario asked for (missing key, another payload) still are judged.
#include <catch2/catch.hpp>

#include "literal_history.h"
#include "model/history_events.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {
const Answer kUnauthorized{401, R"({"title":"missing auth"})"};
const Answer kRedirect{302, "", {{"Location", "/login"}}};
}  // namespace

TEST_CASE("one_record: every request refused with 401 or 302 and no record is unknown: nothing executed") {
  for (const Answer& refusal : {kUnauthorized, kRedirect}) {
    LiteralHistory h;
    for (int i = 0; i < 8; ++i) h.Send("burst-" + std::to_string(i), "create_order", "k1", "b1", 0, 10 + i, refusal);
    h.Records("create_order", "b1", 0, 100);
    Verdict v = RunOracle("one_record", h.history());
    CHECK(v.status == VerdictStatus::kUnknown);
    CHECK(v.evidence.find("nothing executed") != std::string::npos);
    CHECK(v.evidence.find(std::to_string(refusal.status) + " x8") != std::string::npos);
  }
}

TEST_CASE("one_record: a refusal the scenario asked for (missing key) with no record is still valid") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "{}"}).Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("one_record", h.history()).status == VerdictStatus::kValid);
}

TEST_CASE("in_progress: a burst answered 401 throughout is unknown: nothing executed") {
  LiteralHistory h;
  for (int i = 0; i < 8; ++i) h.Send("burst-" + std::to_string(i), "create_order", "k1", "b1", 0, 10 + i, kUnauthorized);
  h.Records("create_order", "b1", 0, 100);
  Verdict v = RunOracle("in_progress", h.history());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("nothing executed") != std::string::npos);
}

namespace {
const Answer kCreated{201, R"({"id":1})"};
const Answer kReplayed{201, R"({"id":1})", {{"Idempotent-Replayed", "true"}}};
const Answer kBusy{409, R"({"title":"in progress"})"};
}  // namespace

TEST_CASE("lease_recovery judges a key left blocked whatever ended its owner: graceful stop and restart too") {
  for (const std::string f : {"kill", "stop", "restart", "pause"}) {
    LiteralHistory h;  // the owner ended at 300 ms mid-request; still 409 long after the 2 s lease
    h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
        .Send("client-0", "create_order", "k1", "b1", 900, 920, kBusy)
        .Send("client-0", "create_order", "k1", "b1", 2600, 2610, kBusy)
        .Records("create_order", "b1", 0, 3000);
    Verdict v = RunOracle("lease_recovery", WithControl(h.history(), f, 300), ShopTarget(), {{"lease", "2s"}});
    INFO(f << ": " << v.evidence);
    CHECK(v.status == VerdictStatus::kInvalid);
  }
}

TEST_CASE("a target that ended on its own (target_exited) makes a valid verdict unknown, with the reason") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, kReplayed)
      .Records("create_order", "b1", 1, 100);
  REQUIRE(RunOracle("one_record", h.history()).status == VerdictStatus::kValid);
  History died = h.history();
  died.Append(TargetExited(0, 42, "exited (signal 9 (Killed))"));
  Verdict v = RunOracle("one_record", died);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("exited (signal 9 (Killed)) during the scenario") != std::string::npos);
}

TEST_CASE("a truncated answer body makes the body-comparing oracles unknown, not valid") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 20, 30, kReplayed);
  REQUIRE(RunOracle("identical_replay", h.history()).status == VerdictStatus::kValid);
  // The same history with the replay's body cut at max_body.
  History truncated;
  for (HistoryEvent e : h.history().events()) {
    if (e.type == EventType::kOk && e.value.contains("response") && e.index == 3)
      e.value["response"]["truncated"] = {{"kept", 8}, {"size", 2147483648LL}, {"exact", true}};
    truncated.Append(e);
  }
  Verdict v = RunOracle("identical_replay", truncated);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("truncated") != std::string::npos);
  CHECK(v.evidence.find("of 2147483648 bytes kept") != std::string::npos);
}

TEST_CASE("an answer cut by the run's max_kept budget makes identical_replay unknown and says so") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated).Send("client-0", "create_order", "k1", "b1", 20, 30, kReplayed);
  History cut;
  for (HistoryEvent e : h.history().events()) {
    if (e.type == EventType::kOk && e.value.contains("response") && e.index == 3)
      e.value["response"]["truncated"] = {{"kept", 8}, {"size", 9000}, {"exact", false}, {"by", "max_kept"}};
    cut.Append(e);
  }
  Verdict v = RunOracle("identical_replay", cut);
  CHECK(v.status == VerdictStatus::kUnknown);
  // Raising max_body would not help: the evidence names the budget.
  CHECK(v.evidence.find("truncated at the run's max_kept (8 of more than 9000 bytes kept)") != std::string::npos);
}

// Issue 31 item 4: a reuse refused by authentication (401, 403) never reached
// the key check, whatever the declared mismatch status; a valid verdict's
// evidence quotes the statuses the judged requests got, not the contract's.
namespace {
const Answer kForbidden{403, R"({"title":"forbidden"})"};
}  // namespace

TEST_CASE("mismatch_rejected: a target answering 401 to everything is not valid: the reuses never reached the key check") {
  // changed-request-rejected's steps: two default uses, then two changed forms.
  LiteralHistory changed;
  changed.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnauthorized)
      .Send("client-0", "create_order", "k1", "b1", 60, 70, kUnauthorized)
      .Send("client-0", "create_order", "k1", "b1", 80, 90, kUnauthorized, "value_changed")
      .Send("client-0", "create_order", "k1", "b1", 100, 110, kUnauthorized, "field_removed");
  Verdict v = RunOracle("mismatch_rejected", changed.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.PremiseNotReached());
  CHECK(v.evidence.find("422") == std::string::npos);
  CHECK(v.evidence.find("401 x2") != std::string::npos);
  // key-reuse-other-payload's steps: the 401 is no wrong mismatch status either.
  LiteralHistory other;
  other.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnauthorized)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, kUnauthorized, "other");
  v = RunOracle("mismatch_rejected", other.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("401 x1") != std::string::npos);
}

TEST_CASE("identical_replay: two equal 401s are no replay: the key was never looked up") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnauthorized)
      .Send("client-0", "create_order", "k1", "b1", 60, 70, kUnauthorized)
      .Records("create_order", "b1", 0, 100);
  Verdict v = RunOracle("identical_replay", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.PremiseNotReached());
  CHECK(v.evidence.find("401 x2") != std::string::npos);
  // A 401 beside a real execution and its replay changes nothing.
  LiteralHistory mixed;
  mixed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, kUnauthorized)
      .Send("client-0", "create_order", "k1", "b1", 60, 70, kReplayed)
      .Records("create_order", "b1", 0, 100);
  v = RunOracle("identical_replay", mixed.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.premise.count == 1);
}

TEST_CASE("mismatch_rejected: a changed request answered 401 or 403 after the key executed is not judged refused") {
  for (const Answer& auth : {kUnauthorized, kForbidden}) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
        .Send("client-0", "create_order", "k1", "b1", 20, 30, auth, "value_changed");
    Verdict v = RunOracle("mismatch_rejected", h.history());
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kUnknown);
    CHECK(v.evidence.find(std::to_string(auth.status) + " x1") != std::string::npos);
  }
  // The key held by a 401 is no key: another payload executed after it proves nothing.
  LiteralHistory unheld;
  unheld.Send("client-0", "create_order", "k1", "b1", 0, 10, kUnauthorized)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":2})"}, "other");
  CHECK(RunOracle("mismatch_rejected", unheld.history()).status == VerdictStatus::kUnknown);
}

TEST_CASE("mismatch_rejected: a valid verdict quotes the statuses the reuses got") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{422, "{}"}, "other")
      .Send("client-0", "create_order", "k1", "b1", 40, 50, Answer{400, R"({"title":"qty"})"}, "value_changed")
      .Send("client-0", "create_order", "k1", "b1", 60, 70, kUnauthorized, "field_removed");
  Verdict v = RunOracle("mismatch_rejected", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("400 x1") != std::string::npos);
  CHECK(v.evidence.find("422 x1") != std::string::npos);
  CHECK(v.evidence.find("401 x1") != std::string::npos);  // named as never reaching the key check
  CHECK(v.details.tallies.answered == std::map<std::string, std::int64_t>{{"400", 1}, {"422", 1}});
  CHECK(v.premise.count == 2);
}

TEST_CASE("missing_key_rejected: a keyless request answered 401 is no wrong status and no pass: never reached the key check") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "", "b1", 0, 10, kUnauthorized);
  Verdict v = RunOracle("missing_key_rejected", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.PremiseNotReached());
  CHECK(v.evidence.find("401 x1") != std::string::npos);
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "{}"})
      .Send("client-0", "create_order", "", "b2", 20, 30, Answer{400, "{}"});
  v = RunOracle("missing_key_rejected", ok.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("400 x2") != std::string::npos);
}

TEST_CASE("in_progress: a valid verdict quotes the statuses the overlapping duplicates got") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 100, kCreated)
      .Send("client-1", "create_order", "k1", "b1", 10, 20, kBusy)
      .Send("client-2", "create_order", "k1", "b1", 15, 25, kBusy)
      .Records("create_order", "b1", 1, 200);
  Verdict v = RunOracle("in_progress", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("409 x2") != std::string::npos);
}
