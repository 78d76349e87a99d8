// intent_reconciled, lease_recovery and applied_once on literal histories:
// the correct reference's timelines hold; each flaw's timeline is caught;
// timelines with nothing to judge never come out valid.
#include <catch2/catch.hpp>

#include "literal_history.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

const Answer kPaid{201, R"({"biz_no":"b1","transaction_id":"txn-1"})"};
const Answer kPaidReplay{201, R"({"biz_no":"b1","transaction_id":"txn-1"})", {{"Idempotent-Replayed", "true"}}};
const Answer kConflict{409, R"({"title":"in progress"})", {{"Retry-After", "1"}}};
const Answer kOk{200, R"({"applied":true})"};

History WithDelivery(const History& base, const std::string& f, const std::string& message, int t,
                     EventType outcome) {
  History h = base;
  const RequestSubject subject{"", message, message, "", "", ""};
  HistoryEvent e = f == event_f::kDeliver ? DeliverInvoke(subject, 0, {"POST", "http://127.0.0.1:1/push", {}, "{}"},
                                                          {{"message", message}}, -1)
                                          : PublishInvoke(subject, nlohmann::json::object(), "stream", 0, -1);
  e.time_ns = std::int64_t{t} * 1000000;
  h.Append(e);
  HistoryEvent done = CompletionOf(e, outcome);
  if (f == event_f::kDeliver) {
    RecordedExchange x;
    x.type = outcome;
    x.status = 200;
    x.body = "{}";
    done = DeliverCompletion(e, x, false);
  }
  done.time_ns += 1000000;
  h.Append(done);
  return h;
}

// A publish of `message` into the broker (entry `entry_id`) at `t` ms, then
// the runtime's settle note: `pending_ids` still unacknowledged (none: settled).
History WithPublish(const History& base, const std::string& message, const std::string& entry_id, int t,
                    const std::vector<std::string>& pending_ids) {
  History h = base;
  const RequestSubject subject{"credit", message, message, "", "", ""};
  HistoryEvent e = PublishInvoke(subject, nlohmann::json::object(), "stream", 0, -1);
  e.time_ns = std::int64_t{t} * 1000000;
  h.Append(e);
  HistoryEvent done = CompletionOf(e, EventType::kOk);
  done.value["entry_id"] = entry_id;
  h.Append(done);
  HistoryEvent note = MessageNote(subject, -1,
                                  {{"note", pending_ids.empty() ? "broker settled" : "broker did not settle"},
                                   {"group", {{"exists", true}, {"pending", pending_ids.size()}}}});
  note.time_ns = e.time_ns + 1000000;
  if (!pending_ids.empty()) note.value["group"]["pending_ids"] = pending_ids;
  h.Append(note);
  return h;
}

}  // namespace

TEST_CASE("applied_once counts the broker's redelivery of an entry whose consumer died before its ack") {
  auto run = [](bool restart_between, int applied_at_end) {
    LiteralHistory probes;
    probes.Probe("inbox_applied", "before", 0, 0);
    History h = WithPublish(probes.history(), "m1", "1-0", 10, {"1-0"});  // applied, never acked
    if (restart_between) h = WithControl(h, "restart", 100);
    h = WithPublish(h, "m2", "2-0", 200, {});  // the group settles: m1 was delivered again
    LiteralHistory end;
    end.Probe("inbox_applied", "after", applied_at_end, 300);
    for (const auto& e : end.history().events()) h.Append(e);
    return RunOracle("applied_once", h, ShopTarget(), {{"counter", "after"}, {"before", "before"}});
  };
  Verdict once = run(true, 2);
  CHECK(once.status == VerdictStatus::kValid);
  CHECK(once.details.counts.broker_redeliveries == 1);
  CHECK(once.details.counts.deliveries == 3);
  CHECK(run(true, 3).status == VerdictStatus::kInvalid);
  // Pending, then settled without a restart: the same consumer acked late, no redelivery.
  Verdict slow = run(false, 2);
  CHECK(slow.status == VerdictStatus::kUnknown);
  CHECK(slow.details.counts.broker_redeliveries == 0);
}

TEST_CASE("intent_reconciled holds for one charge, recorded, after a kill and a retry") {
  LiteralHistory h;
  h.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 2500, 2510, kPaid)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1"}), 2600)
      .Probe("payment", "payment", nlohmann::json::array({"txn-1"}), 2610);
  Verdict v = RunOracle("intent_reconciled", h.history(), ShopTarget(), {{"record", "payment"}});
  CHECK(v.status == VerdictStatus::kValid);
}

TEST_CASE("intent_reconciled catches a second charge (no-intent)") {
  LiteralHistory h;
  h.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 2500, 2510, Answer{201, R"({"transaction_id":"txn-2"})"})
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1", "txn-2"}), 2600);
  Verdict v = RunOracle("intent_reconciled", h.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("2 external effects") != std::string::npos);
}

TEST_CASE("intent_reconciled catches a record naming another effect, and success without effect") {
  LiteralHistory a;
  a.Send("client-0", "create_order", "k1", "b1", 0, 10, kPaid)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-9"}), 20)
      .Probe("payment", "payment", nlohmann::json::array({"txn-1"}), 30);
  CHECK(RunOracle("intent_reconciled", a.history(), ShopTarget(), {{"record", "payment"}}).status ==
        VerdictStatus::kInvalid);
  LiteralHistory b;
  b.Send("client-0", "create_order", "k1", "b1", 0, 10, kPaid).Probe("ledger", "ledger", 0, 20);
  CHECK(RunOracle("intent_reconciled", b.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("intent_reconciled without evidence is never valid") {
  LiteralHistory lost;  // no success, no effect
  lost.Lost("client-0", "create_order", "k1", "b1", 0, 30).Probe("ledger", "ledger", nlohmann::json::array(), 40);
  CHECK(RunOracle("intent_reconciled", lost.history()).status == VerdictStatus::kUnknown);
  LiteralHistory no_probe;  // the ledger probe never ran, and the target declares none
  no_probe.Send("client-0", "create_order", "k1", "b1", 0, 10, kPaid);
  CHECK(RunOracle("intent_reconciled", no_probe.history()).status == VerdictStatus::kNotApplicable);
}

TEST_CASE("lease_recovery holds: in progress before expiry, one completion after") {
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2700, kPaid)
      .Send("client-0", "create_order", "k1", "b1", 2800, 2810, kPaidReplay)
      .Records("create_order", "b1", 1, 3000);
  History full = WithControl(h.history(), "kill", 300);
  Verdict v = RunOracle("lease_recovery", full, ShopTarget(), {{"lease", "2s"}});
  CHECK(v.status == VerdictStatus::kValid);
}

TEST_CASE("lease_recovery on a target that marks no replays: equal 2xx answers are one completion") {
  TargetDescription unmarked = ShopTarget();
  unmarked.idempotency.replay.reset();
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2700, kPaid)
      .Send("client-0", "create_order", "k1", "b1", 2800, 2810, kPaid)  // the replay, unmarked
      .Records("create_order", "b1", 1, 3000);
  CHECK(RunOracle("lease_recovery", WithControl(h.history(), "kill", 300), unmarked, {{"lease", "2s"}}).status ==
        VerdictStatus::kValid);

  LiteralHistory twice;  // a resumed owner completing too: two different answers
  twice.Send("client-1", "create_order", "k1", "b1", 0, 5000, Answer{201, R"({"id":1})"})
      .Send("client-0", "create_order", "k1", "b1", 2600, 2700, Answer{201, R"({"id":2})"});
  Verdict v = RunOracle("lease_recovery", WithControl(twice.history(), "pause", 300), unmarked, {{"lease", "2s"}});
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("completed more than once") != std::string::npos);
}

TEST_CASE("lease_recovery catches a key blocked forever (no-lease-expiry)") {
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2610, kConflict)
      .Records("create_order", "b1", 0, 3000);
  Verdict v = RunOracle("lease_recovery", WithControl(h.history(), "kill", 300), ShopTarget(), {{"lease", "2s"}});
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("still in progress after its lease ended") != std::string::npos);
}

TEST_CASE("lease_recovery catches a resumed owner completing too (unfenced-takeover)") {
  LiteralHistory h;
  h.Send("client-1", "create_order", "k1", "b1", 0, 5000, Answer{201, R"({"id":1})"})
      .Send("client-0", "create_order", "k1", "b1", 2600, 2700, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 6000);
  Verdict v = RunOracle("lease_recovery", WithControl(h.history(), "pause", 300), ShopTarget(), {{"lease", "2s"}});
  CHECK(v.status == VerdictStatus::kInvalid);
}

TEST_CASE("lease_recovery catches an execution while the lease is live, once the claim was shown") {
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 700, 720, kConflict)  // the claim holds ...
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kPaid)      // ... and is taken over early
      .Send("client-0", "create_order", "k1", "b1", 2600, 2610, kPaidReplay);
  Verdict v = RunOracle("lease_recovery", WithControl(h.history(), "kill", 300), ShopTarget(), {{"lease", "2s"}});
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("while the crashed request's lease was live") != std::string::npos);
}

TEST_CASE("lease_recovery: a kill before the request claimed its key lets the retry execute") {
  // Found by explore's generated background sends on the correct reference:
  // `send_background; kill; restart; send` - the kill came a moment after the
  // send, before its claim, so nothing was in progress and the retry rightly
  // executed. Without an in-progress answer the early rule cannot be judged.
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 2)
      .Send("client-0", "create_order", "k1", "b1", 600, 620, kPaid)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2610, kPaidReplay)
      .Records("create_order", "b1", 1, 3000);
  Verdict v = RunOracle("lease_recovery", WithControl(h.history(), "kill", 2), ShopTarget(), {{"lease", "2s"}});
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.records.key_rows.value()[0].contains("early_unjudged"));
  // Two completions are still caught without the claim shown.
  LiteralHistory twice = h;
  twice.Send("client-0", "create_order", "k1", "b1", 2700, 2710, Answer{201, R"({"biz_no":"b1","transaction_id":"txn-2"})"});
  CHECK(RunOracle("lease_recovery", WithControl(twice.history(), "kill", 2), ShopTarget(), {{"lease", "2s"}})
            .status == VerdictStatus::kInvalid);
}

TEST_CASE("lease_recovery without a crash or a retry after expiry is never valid") {
  LiteralHistory h;
  h.Lost("client-1", "create_order", "k1", "b1", 0, 300).Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict);
  CHECK(RunOracle("lease_recovery", h.history(), ShopTarget(), {{"lease", "2s"}}).status == VerdictStatus::kUnknown);
  const Verdict no_retry = RunOracle("lease_recovery", WithControl(h.history(), "kill", 300), ShopTarget(), {{"lease", "2s"}});
  CHECK(no_retry.status == VerdictStatus::kUnknown);
  // Nothing retried after the lease: recovery was never tested (explore's
  // `kill` plans without a late retry are unexercised, not undecided) ...
  CHECK(no_retry.PremiseNotReached());
  // ... while a late retry answered with a retryable failure leaves it open.
  LiteralHistory open = h;
  open.Send("client-0", "create_order", "k1", "b1", 2600, 2610, Answer{503, R"({"title":"try again"})"});
  const Verdict unsettled = RunOracle("lease_recovery", WithControl(open.history(), "kill", 300), ShopTarget(), {{"lease", "2s"}});
  CHECK(unsettled.status == VerdictStatus::kUnknown);
  CHECK_FALSE(unsettled.PremiseNotReached());
  // No lease declared: judged against idempotency.recovery_bound (30 s), which
  // these retries never reached — undecided, never not_applicable.
  CHECK(RunOracle("lease_recovery", WithControl(h.history(), "kill", 300)).status == VerdictStatus::kUnknown);
}

TEST_CASE("applied_once holds when redeliveries change nothing, and catches a second application") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "m1", "b1", 0, 10, kOk)
      .Send("client-0", "create_order", "m1", "b1", 20, 30, kOk)
      .Send("client-0", "create_order", "m2", "b1", 40, 50, kOk);
  LiteralHistory once = h, twice = h;
  once.Probe("balance", "applied", 2, 100);
  twice.Probe("balance", "applied", 3, 100);
  CHECK(RunOracle("applied_once", once.history(), ShopTarget(), {{"counter", "applied"}}).status ==
        VerdictStatus::kValid);
  Verdict v = RunOracle("applied_once", twice.history(), ShopTarget(), {{"counter", "applied"}});
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("applied 3 times for 2") != std::string::npos);
}

TEST_CASE("applied_once counts broker publishes and deliveries, unacked messages widen the bound") {
  LiteralHistory base;
  base.Probe("balance", "before", 5, 0);
  History h = WithDelivery(base.history(), "publish", "m1", 10, EventType::kOk);
  h = WithDelivery(h, "deliver", "m1", 20, EventType::kInfo);  // a redelivery whose ack was lost
  h = WithDelivery(h, "deliver", "m2", 30, EventType::kInfo);  // never acknowledged
  auto with_counter = [&](int value) {
    History out = h;
    HistoryEvent e = ProbeInvoke("balance", "after", -1);
    e.time_ns = 90000000;
    out.Append(e);
    HistoryEvent done = CompletionOf(e, EventType::kOk);
    done.value["value"] = value;
    out.Append(done);
    return out;
  };
  const nlohmann::json params = {{"counter", "after"}, {"before", "before"}};
  CHECK(RunOracle("applied_once", with_counter(6), ShopTarget(), params).status == VerdictStatus::kValid);
  CHECK(RunOracle("applied_once", with_counter(7), ShopTarget(), params).status == VerdictStatus::kValid);
  CHECK(RunOracle("applied_once", with_counter(8), ShopTarget(), params).status == VerdictStatus::kInvalid);
  CHECK(RunOracle("applied_once", with_counter(5), ShopTarget(), params).status == VerdictStatus::kInvalid);
}

TEST_CASE("applied_once without a redelivery or a counter is never valid") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "m1", "b1", 0, 10, kOk).Probe("balance", "applied", 1, 100);
  CHECK(RunOracle("applied_once", h.history(), ShopTarget(), {{"counter", "applied"}}).status ==
        VerdictStatus::kUnknown);
  CHECK(RunOracle("applied_once", h.history(), ShopTarget(), {{"counter", "nothing"}}).status ==
        VerdictStatus::kNotApplicable);
}

// Issue 46: no excuse where a contract can speak. A key blocked past the
// recovery bound was a deviation (exit 0) when no lease was declared; it is a
// violation now, the default bound named (a target that blocks keys longer
// declares idempotency.recovery_bound).
TEST_CASE("lease_recovery with no lease declared: blocked past the recovery bound is a violation") {
  TargetDescription no_lease = ShopTarget();  // declares no lease
  no_lease.idempotency.recovery_bound = std::chrono::seconds(2);
  LiteralHistory blocked;
  blocked.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2610, kConflict)
      .Records("create_order", "b1", 0, 3000);
  Verdict v = RunOracle("lease_recovery", WithControl(blocked.history(), "kill", 300), no_lease);
  CHECK(v.is_violation());
  CHECK(v.evidence.find("no lease declared") != std::string::npos);
  CHECK(v.evidence.find("the default 2s holds") != std::string::npos);

  LiteralHistory recovered;  // freed early (no lease promised): fine
  recovered.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kPaid)
      .Send("client-0", "create_order", "k1", "b1", 1300, 1310, kPaidReplay)
      .Records("create_order", "b1", 1, 3000);
  CHECK(RunOracle("lease_recovery", WithControl(recovered.history(), "kill", 300), no_lease).status ==
        VerdictStatus::kValid);

  LiteralHistory twice;  // two completions stay a violation without a lease
  twice.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kPaid)
      .Send("client-0", "create_order", "k1", "b1", 1300, 1310, Answer{201, R"({"id":2})"})
      .Records("create_order", "b1", 2, 3000);
  CHECK(RunOracle("lease_recovery", WithControl(twice.history(), "kill", 300), no_lease).is_violation());

  LiteralHistory short_retries;  // retries stopped before the bound: undecided, never n/a or valid
  short_retries.Lost("client-1", "create_order", "k1", "b1", 0, 300)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, kConflict);
  CHECK(RunOracle("lease_recovery", WithControl(short_retries.history(), "kill", 300), no_lease).status ==
        VerdictStatus::kUnknown);
}

TEST_CASE("intent_reconciled: a retry that never connected repeats nothing, a refused retry is judged by the record") {
  // Charged, then the target died (no answer); the retry found nobody listening.
  LiteralHistory unsent;
  unsent.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .NotSent("client-0", "create_order", "k1", "b1", 40, 41)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1"}), 2600)
      .Probe("payment", "payment", nlohmann::json::array({"txn-1"}), 2610);
  Verdict v = RunOracle("intent_reconciled", unsent.history(), ShopTarget(), {{"record", "payment"}});
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.PremiseNotReached());
  // The retry reached the target and got 409 while the lease lived: the
  // target's record names the one effect, so the property is judged.
  LiteralHistory refused;
  refused.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, kConflict)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1"}), 2600)
      .Probe("payment", "payment", nlohmann::json::array({"txn-1"}), 2610);
  CHECK(RunOracle("intent_reconciled", refused.history(), ShopTarget(), {{"record", "payment"}}).status ==
        VerdictStatus::kValid);
  // Nothing recorded yet: undecided, and said so (a retry was made).
  LiteralHistory unrecorded;
  unrecorded.Lost("client-0", "create_order", "k1", "b1", 0, 30)
      .Send("client-0", "create_order", "k1", "b1", 100, 110, kConflict)
      .Probe("ledger", "ledger", nlohmann::json::array({"txn-1"}), 2600)
      .Probe("payment", "payment", nlohmann::json::array(), 2610);
  Verdict u = RunOracle("intent_reconciled", unrecorded.history(), ShopTarget(), {{"record", "payment"}});
  CHECK(u.status == VerdictStatus::kUnknown);
  CHECK_FALSE(u.PremiseNotReached());
}
