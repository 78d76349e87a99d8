// Issue 33, classes 1 and 2: what the target file declares for a kill in the
// middle of work that is not an HTTP create (variants of a message's push and
// of a batch run, a probe counting a message's applications), a request
// slower than its lease ({{slow_ms}}), and how scenarios bind to every message
// and judge a batch run cut off by a kill (range_continuity).
#include <catch2/catch.hpp>

#include <algorithm>

#include "batch_history_builder.h"
#include "literal_history.h"
#include "model/binding.h"
#include "model/scenario.h"
#include "model/target.h"
#include "model/template.h"
#include "oracles/oracle.h"

using namespace idemproof;
using namespace idemproof::testing;
using nlohmann::json;

namespace {

const std::string kHead = R"(name: shop
base_url: "http://127.0.0.1:1"
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
)";

const std::string kMessages = R"(start: [/bin/true]
messages:
  credit:
    push: {method: POST, path: /inbox, json: {id: "{{key}}", amount: 5}}
    variants:
      slow: {query: {slow_ms: "1500"}}
  debit:
    push: {method: POST, path: /outbox, json: {id: "{{key}}"}}
probes:
  credits: {role: applied, of: credit, request: {path: /credits}, value: "$.applied"}
  debits: {role: applied, of: debit, request: {path: /debits}, value: "$.applied"}
)";

Result<TargetDescription> Parse(const std::string& text) { return ParseTarget(text, "t.yaml"); }

std::string Error(const std::string& text) {
  auto r = Parse(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidConfig);
  return r.status().ToString();
}

ScenarioVocabulary Vocab() { return BuiltinOracles().Vocabulary(); }

const char* kKilledConsumer = R"(layer: queue
hunts: a consumer killed mid-work
for_each:
  message: {role: message}
  applied: {role: applied, of: message}
steps:
  - probe: $applied
    as: before
  - deliver: $message
    variant: slow
    background: true
    max_attempts: 1
  - kill
  - start
  - join
  - deliver: $message
  - probe: $applied
    as: after
expect:
  - applied_once: {counter: after, before: before, actions: [$message]}
)";

}  // namespace

TEST_CASE("a message's and a batch run's variants load like an action's") {
  auto t = Parse(kHead + kMessages + R"(batch:
  run: {method: POST, path: "/jobs/{{job}}/run", body: '{"from": {{from}}, "to": {{to}}}'}
  result: {request: {path: "/jobs/{{job}}/result"}, rows: "$.rows", row_id: "$.id"}
  variants:
    slow: {query: {slow_ms: "150", job: "{{job}}"}}
)");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->messages.at("credit").variants.at("slow").query == HeaderList{{"slow_ms", "1500"}});
  CHECK(t->messages.at("debit").variants.empty());
  CHECK(t->batch->variants.at("slow").query == HeaderList{{"slow_ms", "150"}, {"job", "{{job}}"}});
  CHECK(t->probes.at("credits").role == "applied");
  CHECK(t->probes.at("credits").of == "credit");
}

TEST_CASE("message and batch variants, applied probes and slow_ms are refused with file:line:column") {
  // an unknown key in a message's variant
  CHECK(Error(kHead + R"(messages:
  credit:
    push: {method: POST, path: /inbox}
    variants:
      slow: {quary: {slow_ms: "1"}}
)") == "t.yaml:11:14: unknown key 'quary' in message 'credit' variant 'slow' (did you mean 'query'?); known keys: "
        "query, headers, patch, json, body, content_type, fields");
  // variants on a message with no push to change
  CHECK(Error(kHead + R"(messages:
  credit:
    fields: {id: "{{key}}"}
    variants: {slow: {query: {slow_ms: "1"}}}
)").rfind("t.yaml:10:15: message 'credit'.variants change its push: give push", 0) == 0);
  // a batch variant's template may use the run's variables, no others
  CHECK(Error(kHead + R"(batch:
  run: {method: POST, path: "/jobs/{{job}}/run"}
  result: {request: {path: "/jobs/{{job}}/result"}, rows: "$.rows", row_id: "$.id"}
  variants:
    slow: {query: {slow_ms: "{{fail_after}}"}}
)") == "t.yaml:11:29: unknown template variable '{{fail_after}}'");
  // an applied probe is of a message
  CHECK(Error(kHead + R"(messages:
  credit: {push: {method: POST, path: /inbox}}
probes:
  credits: {role: applied, of: credti, request: {path: /credits}}
)") == "t.yaml:10:32: probe 'credits'.of: 'credti' is not a declared message (role applied counts a message's "
        "applications) (did you mean 'credit'?)");
  // {{slow_ms}} is the lease x 1.5: no lease, no slow_ms
  CHECK(Error(kHead + R"(    variants:
      slow_past_lease: {query: {slow_ms: "{{slow_ms}}"}}
)") == "t.yaml:8:42: '{{slow_ms}}' is the declared lease x 1.5 in ms: declare idempotency.lease");
  auto with_lease = Parse(kHead + R"(    variants:
      slow_past_lease: {query: {slow_ms: "{{slow_ms}}"}}
idempotency: {lease: 2s}
)");
  INFO(with_lease.status().ToString());
  CHECK(with_lease.ok());
  CHECK(SlowMsFor(std::chrono::seconds(2)) == "3000");
  CHECK(SlowMsFor(std::chrono::milliseconds(333)) == "499");
}

TEST_CASE("a message parameter binds to every message of the target, and its applied probe to that message's") {
  auto scenario = ParseScenario(kKilledConsumer, "s.yaml", Vocab());
  INFO(scenario.status().ToString());
  REQUIRE(scenario.ok());
  auto t = Parse(kHead + kMessages);
  REQUIRE(t.ok());
  const auto bound = BindScenario(*scenario, *t);
  REQUIRE(bound.size() == 2);
  CHECK(bound[0].name == "s[credit,credits]");
  CHECK(bound[1].name == "s[debit,debits]");
  CHECK(bound[0].steps[1].Options<QueueOptions>().name == "credit");
  CHECK(bound[0].steps[1].Options<QueueOptions>().variant == "slow");
  CHECK(bound[0].steps[1].Options<QueueOptions>().background);
  CHECK(bound[0].expect[0].params["actions"] == json::array({"credit"}));
  // credit has the slow variant: runnable; debit has none: not_applicable, saying so
  const ScenarioFit credit = CheckScenarioAgainstTarget(bound[0], *t);
  for (const auto& n : credit.needs) UNSCOPED_INFO(n);
  CHECK(credit.runnable());
  const ScenarioFit debit = CheckScenarioAgainstTarget(bound[1], *t);
  for (const auto& n : debit.needs) UNSCOPED_INFO(n);
  REQUIRE(debit.needs.size() == 1);  // and nothing else: the target has a start command
  CHECK(debit.needs[0] == "a variant 'slow' of message 'debit' (messages.debit.variants)");

  // A target without messages: one unbound row naming what it lacks.
  auto none = Parse(kHead);
  REQUIRE(none.ok());
  const auto unbound = BindScenario(*scenario, *none);
  REQUIRE(unbound.size() == 1);
  const ScenarioFit fit = CheckScenarioAgainstTarget(unbound[0], *none);
  REQUIRE_FALSE(fit.needs.empty());
  CHECK(fit.needs[0] == "a message (target 'messages'), a probe with role applied of the $message message or callback");
}

TEST_CASE("message parameters are checked where a message, an action or a probe goes") {
  const std::string head = "layer: queue\nhunts: x\nfor_each:\n  m: {role: message}\n  c: {role: create}\nsteps:\n";
  auto as_action = ParseScenario(head + "  - deliver: $m\n  - send: $m\n  - send: $c\nexpect: [one_record]\n", "s.yaml",
                                 Vocab());
  REQUIRE_FALSE(as_action.ok());
  CHECK(as_action.status().ToString() == "s.yaml:8:11: step 'send': '$m' is a message parameter, not an action");
  auto as_message = ParseScenario(head + "  - deliver: $c\n  - deliver: $m\nexpect: [one_record]\n", "s.yaml", Vocab());
  REQUIRE_FALSE(as_message.ok());
  CHECK(as_message.status().ToString() == "s.yaml:7:14: step 'deliver': '$c' is not a message parameter (role message)");
  auto needs = ParseScenario("layer: queue\nhunts: x\nfor_each:\n  m: {role: message, needs: [records]}\nsteps:\n"
                             "  - deliver: $m\nexpect: [one_record]\n",
                             "s.yaml", Vocab());
  REQUIRE_FALSE(needs.ok());
  CHECK(needs.status().ToString() == "s.yaml:4:29: parameter 'm': a message parameter has no 'needs'");
}

TEST_CASE("wait: past_lease, a batch run's variant and slow_past_lease need what the target declares") {
  auto scenario = ParseScenario(R"(layer: side-effect
hunts: x
steps:
  - cause: slow_past_lease
  - send: create_order
    background: true
  - wait: past_lease
  - send: create_order
  - run_batch: j1
    from: 0
    to: 10
    variant: slow
    background: true
expect: [one_record]
)",
                                "s.yaml", Vocab());
  INFO(scenario.status().ToString());
  REQUIRE(scenario.ok());
  CHECK(scenario->steps[2].Options<WaitOptions>().past_lease);
  auto bare = Parse(kHead);
  REQUIRE(bare.ok());
  const auto bound = BindScenario(*scenario, *bare);
  REQUIRE(bound.size() == 1);
  const ScenarioFit fit = CheckScenarioAgainstTarget(bound[0], *bare);
  std::string needs;
  for (const auto& n : fit.needs) needs += n + "\n";
  CHECK(needs ==
        "capability slow_past_lease (the next request's business step outlasts the declared lease ({{slow_ms}})): "
        "a variant 'slow_past_lease' of action 'create_order'\n"
        "an in-progress lease (idempotency.lease) of at most 10m for 'wait: past_lease'\n"
        "a batch section (target 'batch') for step 'run_batch'\n");
}

// A run cut off by a kill (no answer) is a failed run: the rerun after the
// restart must resume it, and a partition marked with no rows is lost.
TEST_CASE("range_continuity judges a batch run cut off by a kill like a run that failed") {
  const auto check = [](const History& h) { return RunOracle("range_continuity", h, BatchTarget(), json::object()); };
  // The correct service: partitions 0-29 committed with their markers when the kill came.
  {
    BatchHistory h;
    h.Run("j1", "run", 0, 100, std::nullopt, 0);
    json done = RowsJson(0, 100, 1);
    auto r = h.Run("j1", "rerun", 0, 100, std::nullopt, 200);
    h.Result("j1", r, done, MarkersJson(done, 0, 100));
    auto c = h.Run("j2", "clean", 0, 100, std::nullopt, 200, false, "j1");
    h.Result("j2", c, done, MarkersJson(done, 0, 100));
    const Verdict v = check(h.history());
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
    CHECK(v.evidence.find("was cut off (no answer: killed)") != std::string::npos);
  }
  // marker-before-rows: partition 3's marker committed, its rows never; the rerun skipped it.
  {
    BatchHistory h;
    h.Run("j1", "run", 0, 100, std::nullopt, 0);
    json rows = Concat({RowsJson(0, 30, 1), RowsJson(40, 100, 2)});
    json markers = MarkersJson(Concat({RowsJson(0, 100, 1)}), 0, 100);
    auto r = h.Run("j1", "rerun", 0, 100, std::nullopt, 200);
    h.Result("j1", r, rows, markers);
    auto c = h.Run("j2", "clean", 0, 100, std::nullopt, 200, false, "j1");
    json done = RowsJson(0, 100, 1);
    h.Result("j2", c, done, MarkersJson(done, 0, 100));
    const Verdict v = check(h.history());
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("10 rows missing in 30–39 (partition 3)") != std::string::npos);
  }
}

// Issue 33, class 2: a request slower than its lease in a live process.
TEST_CASE("key_released: once every request of a key was answered, the key is not in progress") {
  const Answer lost{409, R"({"title":"Lease lost"})"};
  const Answer busy{409, R"({"title":"Request in progress"})"};
  // An owner that outlived its lease and was rolled back; the duplicate that
  // took the key over outlived its own: the retry after both is refused.
  {
    LiteralHistory h;
    h.Send("client-1", "create_order", "k1", "b1", 0, 3058, lost);
    h.Send("client-0", "create_order", "k1", "b1", 2453, 5458, lost);
    h.Send("client-0", "create_order", "k1", "b1", 5460, 8462, lost);
    const Verdict v = RunOracle("key_released", h.history(), ShopTarget(), {{"actions", {"create_order"}}});
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("the key stays blocked after its owner finished") != std::string::npos);
    CHECK(v.premise.count == 1);
  }
  // A renewed lease: the duplicate while the owner ran is refused, the retry after it replays.
  {
    LiteralHistory h;
    h.Send("client-1", "create_order", "k1", "b1", 0, 3050, Answer{});
    h.Send("client-0", "create_order", "k1", "b1", 2453, 2460, busy);
    h.Send("client-0", "create_order", "k1", "b1", 3060, 3070, Replay());
    const Verdict v = RunOracle("key_released", h.history());
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
    CHECK(v.premise.count == 1);
  }
  // Only overlapping requests: nothing to judge.
  {
    LiteralHistory h;
    h.Send("client-1", "create_order", "k1", "b1", 0, 3050, Answer{});
    h.Send("client-0", "create_order", "k1", "b1", 100, 110, busy);
    const Verdict v = RunOracle("key_released", h.history());
    CHECK(v.status == VerdictStatus::kUnknown);
  }
  // After a kill the dead owner's claim may hold until its lease ends: not judged here.
  {
    LiteralHistory h;
    h.Send("client-1", "create_order", "k1", "b1", 0, 50, lost);
    h.Send("client-0", "create_order", "k1", "b1", 400, 410, busy);
    const Verdict v = RunOracle("key_released", WithControl(h.history(), "kill", 300));
    CHECK(v.status == VerdictStatus::kUnknown);
  }
}

namespace {

// A consumer with nothing of the reference's names: message `deposit`,
// probe `deposits_seen`, callbacks `paid_event` / `refund_event`.
const std::string kRenamed = R"(name: shop
base_url: "http://127.0.0.1:1"
start: [/bin/true]
actions:
  place:
    role: create
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
  paid_event: {role: callback, of: place, request: {method: POST, path: /cb, json: {seq: "{{key}}", e: paid}}}
  refund_event: {role: callback, of: paid_event, request: {method: POST, path: /cb, json: {seq: "{{key}}", e: refund}}}
messages:
  deposit:
    fields: {id: "{{key}}", amount: "5"}
    variants:
      slow: {fields: {slow_ms: "1500"}}
      die_before_ack: {fields: {die_before_ack: "1"}}
probes:
  deposits_seen: {role: applied, of: deposit, request: {path: /deposits}, value: "$.applied"}
  paid_seen: {role: applied, of: paid_event, request: {path: /cb}, value: "$.applied"}
  refunds_seen: {role: applied, of: refund_event, request: {path: /cb}, value: "$.applied"}
broker: {redis: "127.0.0.1:1", stream: s, group: g}
)";

Scenario SuiteScenario(const std::string& file) {
  auto s = LoadScenarioFile(std::string(IDEMPROOF_SOURCE_DIR) + "/scenarios/" + file, Vocab());
  INFO(file << ": " << s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

// The one bound row of `file` against `t`, with the needs it has there.
std::pair<Scenario, ScenarioFit> BindOne(const std::string& file, const TargetDescription& t) {
  const auto bound = BindScenario(SuiteScenario(file), t);
  REQUIRE(bound.size() == 1);
  const ScenarioFit fit = CheckScenarioAgainstTarget(bound[0], t);
  for (const auto& n : fit.needs) UNSCOPED_INFO(file << " needs " << n);
  return {bound[0], fit};
}

}  // namespace

// Issue 33 (and 34's first bullet): the stream and callback scenarios of the
// suite bind by role to a target that shares none of the reference's names;
// die_before_ack is a capability a message variant (broker fields) or a hook
// provides; a target with neither is not applicable, naming it.
TEST_CASE("the stream and callback scenarios bind by role, die_before_ack is a capability") {
  auto t = Parse(kRenamed);
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->messages.at("deposit").variants.at("slow").fields == HeaderList{{"slow_ms", "1500"}});

  for (const char* file : {"queue/stream-redelivery.yaml", "queue/stream-kill-before-ack.yaml",
                           "queue/stream-consumer-killed-mid-work.yaml"}) {
    auto [row, fit] = BindOne(file, *t);
    CHECK(row.binding == std::map<std::string, std::string>{{"message", "deposit"}, {"applied", "deposits_seen"}});
    CHECK(fit.runnable());
  }
  // die_before_ack by the message's variant, on the publish right after it
  auto [kill, kill_fit] = BindOne("queue/stream-kill-before-ack.yaml", *t);
  const auto step = std::find_if(kill.steps.begin(), kill.steps.end(), [](const Step& s) {
    return s.Find<CauseOptions>() != nullptr && s.Options<CauseOptions>().capability == "die_before_ack";
  });
  REQUIRE(step != kill.steps.end());
  const CauseOptions& cause = step->Options<CauseOptions>();
  CHECK(cause.resolved);
  CHECK(cause.variant == "die_before_ack");
  CHECK(cause.action == "deposit");
  CHECK(cause.hook.empty());

  auto [paid, paid_fit] = BindOne("side-effect/repeated-callback.yaml", *t);
  CHECK(paid.binding.at("callback") == "paid_event");
  CHECK(paid.binding.at("applied") == "paid_seen");
  CHECK(paid_fit.runnable());
  auto [refund, refund_fit] = BindOne("side-effect/repeated-follow-up-callback.yaml", *t);
  CHECK(refund.binding.at("then") == "refund_event");
  CHECK(refund.binding.at("applied") == "refunds_seen");
  CHECK(refund_fit.runnable());

  // Without the variants, and no hook: each row says what it lacks.
  std::string bare = kRenamed;
  const std::string variants =
      "    variants:\n      slow: {fields: {slow_ms: \"1500\"}}\n      die_before_ack: {fields: {die_before_ack: \"1\"}}\n";
  bare.erase(bare.find(variants), variants.size());
  auto plain = Parse(bare);
  REQUIRE(plain.ok());
  auto [k, kfit] = BindOne("queue/stream-kill-before-ack.yaml", *plain);
  REQUIRE(kfit.needs.size() == 1);
  CHECK(kfit.needs[0] ==
        "capability die_before_ack (the consumer dies after applying the next published message, before "
        "acknowledging it): a variant 'die_before_ack' with broker fields of message 'deposit' or a hook "
        "'die_before_ack'");
  auto [w, wfit] = BindOne("queue/stream-consumer-killed-mid-work.yaml", *plain);
  REQUIRE(wfit.needs.size() == 1);
  CHECK(wfit.needs[0] == "a variant 'slow' of message 'deposit' that changes its broker entry "
                         "(messages.deposit.variants.slow.fields)");
  // The hook provides it as well.
  auto hooked = Parse(bare + "hooks:\n  die_before_ack: {request: {method: POST, path: /chaos}}\n");
  REQUIRE(hooked.ok());
  auto [h, hfit] = BindOne("queue/stream-kill-before-ack.yaml", *hooked);
  CHECK(hfit.runnable());
}

TEST_CASE("a message variant's broker fields need the message's fields, its push changes a push") {
  CHECK(Error(kHead + R"(messages:
  m:
    push: {method: POST, path: /inbox}
    variants:
      slow: {fields: {slow_ms: "1"}}
)").rfind("t.yaml:11:22: message 'm'.variants.slow.fields change its broker entry: give fields", 0) == 0);
  CHECK(Error(kHead + R"(messages:
  m:
    fields: {id: "{{key}}"}
    variants:
      slow: {query: {slow_ms: "1"}, fields: {slow_ms: "1"}}
)").rfind("t.yaml:11:7: message 'm'.variants change its push: give push", 0) == 0);
  CHECK(Error(kHead + R"(probes:
  p: {role: applied, of: create_order, request: {path: /x}}
)").find("is not a declared message") != std::string::npos);
}

// Issue 33, class 1 at the side-effect boundary: a kill right after EACH http
// downstream an action calls answered (scenarios/side-effect/kill-after-downstream.yaml).
namespace {

const std::string kDownstreams = R"(name: shop
base_url: "http://127.0.0.1:1"
start: [/bin/true]
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
    records: {request: {path: "/orders?biz={{biz}}"}, count: "$.count"}
  pay:
    role: pay
    request: {method: POST, path: /payments, json: {biz: "{{biz}}"}}
  ship:
    role: put
    of: create_order
    request: {method: PUT, path: /orders/1/ship}
    calls: [carrier, mailer]
probes:
  charges: {role: ledger, of: pay, egress: provider, match: {method: POST, path: /charge}, value: "$.answer.id"}
egress:
  provider: {upstream: "http://127.0.0.1:2"}
  carrier: {upstream: "http://127.0.0.1:3"}
  mailer: {upstream: "http://127.0.0.1:4"}
  store: {protocol: tcp, upstream: "127.0.0.1:5"}
)";

const char* kKillAfterDownstream = R"(layer: side-effect
hunts: a kill right after a downstream answered
for_each:
  act: {role: any, needs: [calls]}
faults:
  killed: {kind: kill-after-answer, on: downstream, first: 1}
steps:
  - fault: killed
  - send: $act
  - restart
  - send: $act
expect:
  - downstream_once: {fault: killed, actions: [$act]}
)";

}  // namespace

TEST_CASE("an action's calls: name the http downstreams its work calls, a ledger probe's egress by default") {
  auto t = Parse(kDownstreams);
  REQUIRE(t.ok());
  CHECK(t->DownstreamsOf("pay") == std::vector<std::string>{"provider"});  // from its ledger probe
  CHECK(t->DownstreamsOf("ship") == std::vector<std::string>{"carrier", "mailer"});
  CHECK(t->DownstreamsOf("create_order").empty());
  // `calls: []` says the action calls none, whatever its ledger probe's egress.
  std::string none = kDownstreams;
  none.replace(none.find("    request: {method: POST, path: /payments"), 0, "    calls: []\n");
  auto n = Parse(none);
  REQUIRE(n.ok());
  CHECK(n->DownstreamsOf("pay").empty());
  // A store is no downstream to call, a typo names the close one.
  std::string store = kDownstreams;
  store.replace(store.find("[carrier, mailer]"), 17, "[carrier, store]");
  CHECK(Error(store).find("calls: 'store' is a tcp egress") != std::string::npos);
  std::string typo = kDownstreams;
  typo.replace(typo.find("[carrier, mailer]"), 17, "[carier]");
  CHECK(Error(typo).find("t.yaml:16:13: calls: 'carier' is not a downstream declared under 'egress' (did you mean "
                         "'carrier'?)") != std::string::npos);
}

TEST_CASE("a fault on: downstream binds once per http downstream each action calls, role any to every action") {
  auto t = Parse(kDownstreams);
  REQUIRE(t.ok());
  auto s = ParseScenario(kKillAfterDownstream, "s.yaml", Vocab());
  REQUIRE(s.ok());
  std::map<std::string, const FaultDeclaration*> bound;
  const auto scenarios = BindScenario(*s, *t);
  for (const auto& b : scenarios) bound[b.name] = &b.faults.at("killed");
  REQUIRE(bound.size() == 3);  // pay once, ship once per downstream; create_order calls none
  CHECK(bound.at("s[pay]")->on == "egress.provider");
  // The kill strikes the call the action's ledger probe declares as its effect.
  CHECK(bound.at("s[pay]")->params.at("match") == json({{"method", "POST"}, {"path", "/charge"}}));
  CHECK(bound.at("s[ship]@carrier")->on == "egress.carrier");
  CHECK(bound.at("s[ship]@mailer")->on == "egress.mailer");
  CHECK_FALSE(bound.at("s[ship]@mailer")->params.contains("match"));  // no ledger: its first call
  for (const auto& b : scenarios) CHECK(CheckScenarioAgainstTarget(b, *t).runnable());
  // A target no action of which calls an http downstream: not applicable, naming it.
  auto bare = Parse(kHead + "start: [/bin/true]\n");
  REQUIRE(bare.ok());
  const auto unbound = BindScenario(*s, *bare);
  REQUIRE(unbound.size() == 1);
  const ScenarioFit fit = CheckScenarioAgainstTarget(unbound[0], *bare);
  REQUIRE(fit.needs.size() == 1);
  CHECK(fit.needs[0] == "an action with a role that calls an http egress downstream (target 'egress', named by the "
                        "action's 'calls:' or a ledger probe with egress: of it)");
  // role any and need calls are checked like the others.
  std::string bad = kKillAfterDownstream;
  bad.replace(bad.find("needs: [calls]"), 14, "needs: [cals]");
  auto e = ParseScenario(bad, "s.yaml", Vocab());
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().find("unknown need 'cals' (did you mean 'calls'?)") != std::string::npos);
}

TEST_CASE("downstream_once counts the struck call's 2xx answers in the egress proxy's record") {
  const auto egress = [](History& h, const std::string& method, const std::string& target, int status, int t) {
    HistoryEvent e = EgressEvent({{"egress", "provider"}, {"method", method}, {"path", target.substr(0, target.find('?'))},
                                  {"target", target}, {"status", status}, {"answer", {{"id", "ch_" + std::to_string(t)}}}});
    e.time_ns = std::int64_t{t} * 1000000;
    h.Append(e);
  };
  const auto struck = [](History& h, int t, const std::string& missed = "") {
    json v = {{"fault", "kill-after-answer"}, {"name", "killed"}, {"phase", "injected"}, {"on", "egress.provider"},
              {"request", {{"method", "POST"}, {"target", "/charge?x=1"}, {"body", "{}"}}}};
    if (!missed.empty()) v["missed"] = missed;
    HistoryEvent e = InjectorEvent(v);
    e.time_ns = std::int64_t{t} * 1000000;
    h.Append(e);
  };
  const json params = {{"fault", "killed"}, {"actions", {"create_order"}}};
  LiteralHistory requests;
  requests.Lost("client-0", "create_order", "k1", "b1", 0, 100);
  requests.Send("client-0", "create_order", "k1", "b1", 2500, 2600, Answer{});
  // The retry charged again: two 2xx calls of the struck POST /charge.
  {
    History h = requests.history();
    egress(h, "POST", "/charge?x=1", 200, 50);
    struck(h, 60);
    egress(h, "POST", "/charge", 200, 2550);
    const Verdict v = RunOracle("downstream_once", h, ShopTarget(), params);
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.rfind("2 calls of POST /charge at downstream provider answered 2xx", 0) == 0);
  }
  // The retry reconciled (a read: another method) and a failed call charged nothing.
  {
    History h = requests.history();
    egress(h, "POST", "/charge", 200, 50);
    struck(h, 60);
    egress(h, "GET", "/charge", 200, 2540);
    egress(h, "POST", "/charge", 503, 2550);
    const Verdict v = RunOracle("downstream_once", h, ShopTarget(), params);
    INFO(v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
  }
  // The kill never struck: nothing proven.
  {
    History h = requests.history();
    egress(h, "POST", "/charge", 200, 50);
    struck(h, 60, "the downstream did not answer: nothing killed");
    const Verdict v = RunOracle("downstream_once", h, ShopTarget(), params);
    CHECK(v.status == VerdictStatus::kUnknown);
    CHECK(v.evidence.find("nothing killed") != std::string::npos);
  }
}
