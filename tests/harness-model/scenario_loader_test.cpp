#include <catch2/catch.hpp>

#include "literal_history.h"
#include "model/capabilities.h"
#include "model/scenario.h"
#include "oracles/oracle.h"

using namespace idemproof;
using namespace std::chrono_literals;

namespace {
ScenarioVocabulary Vocab() {
  ScenarioVocabulary v = BuiltinOracles().Vocabulary();
  v.fault_kinds = std::vector<std::string>{"drop_response", "delay"};
  return v;
}

std::string ErrorOf(const std::string& text) {
  auto r = ParseScenario(text, "s.yaml", Vocab());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidConfig);
  return r.status().ToString();
}

const std::string kHead = "layer: client\nhunts: a double click creates two orders\n";
}  // namespace

TEST_CASE("a scenario with every step kind loads") {
  auto r = ParseScenario(R"(# hunts: everything at once
name: everything
layer: gateway
hunts: a lost answer makes the caller create a second order
faults:
  lose: {kind: drop_response, count: 1, after_ms: 5}
steps:
  - probe: stock
    as: before
  - send: create_order
  - send: create_order
    key: k1
    biz: b2
    payload: other
    after: 50ms
    repeat: 3
    every: 10ms
    background: true
    timeout: 2s
    label: impatient caller
  - burst: create_order
    n: 8
    mode: threads
    key: none
  - wait: 1500ms
  - hook: slow_business
  - fault: lose
  - heal: lose
  - join
  - kill
  - start:
    after: 1s
  - stop
  - restart
expect:
  - one_record
  - identical_replay: {actions: [create_order]}
  - window: {window: 2s}
  - probe_equal: {a: before, b: before}
)", "everything.yaml", Vocab());
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  const Scenario& s = *r;
  CHECK(s.name == "everything");
  CHECK(s.layer == Layer::kGateway);
  CHECK(s.faults.at("lose").kind == "drop_response");
  CHECK(s.faults.at("lose").params == nlohmann::json{{"count", 1}, {"after_ms", 5}});
  REQUIRE(s.steps.size() == 13);
  CHECK(s.steps[0].KindName() == "probe");
  CHECK(s.steps[0].label == "before");
  CHECK(s.steps[1].Options<SendOptions>().key == "k1");
  CHECK(s.steps[1].Options<SendOptions>().biz == "b1");
  const Step& send_step = s.steps[2];
  const SendOptions& send = send_step.Options<SendOptions>();
  CHECK(send.biz == "b2");
  CHECK(send.payload == PayloadVariant::kOther);
  CHECK(send_step.after == 50ms);
  CHECK(send.repeat == 3);
  CHECK(send.every == 10ms);
  CHECK(send.background);
  CHECK(send.timeout == Duration(2s));
  CHECK(send_step.label == "impatient caller");
  CHECK(send_step.mark.line == 11);
  CHECK(send_step.mark.column == 5);
  CHECK(s.steps[3].KindName() == "burst");
  CHECK(s.steps[3].Options<SendOptions>().n == 8);
  CHECK(s.steps[3].Options<SendOptions>().mode == BurstMode::kThreads);
  CHECK(s.steps[3].Options<SendOptions>().key == kNoKey);
  CHECK(s.steps[4].Options<WaitOptions>().duration == 1500ms);
  CHECK(s.steps[5].Options<HookOptions>().name == "slow_business");
  CHECK(s.steps[6].KindName() == "fault");
  CHECK(s.steps[7].KindName() == "heal");
  CHECK(s.steps[8].KindName() == "join");
  CHECK(s.steps[9].KindName() == "kill");
  CHECK(s.steps[10].KindName() == "start");
  CHECK(s.steps[10].after == 1s);
  CHECK(s.steps[12].KindName() == "restart");
  REQUIRE(s.expect.size() == 4);
  CHECK(s.expect[1].params == nlohmann::json{{"actions", {"create_order"}}});
  CHECK(s.expect[2].params == nlohmann::json{{"window", "2s"}});
  CHECK(s.ActionsUsed() == std::vector<std::string>{"create_order"});
}

TEST_CASE("the scenario name defaults to the file stem") {
  auto r = ParseScenario(kHead + "steps: [{send: create_order}]\nexpect: [one_record]\n", "dir/double-submit.yaml", Vocab());
  REQUIRE(r.ok());
  CHECK(r->name == "double-submit");
}

TEST_CASE("scenario errors name file:line:column and what is wrong") {
  const std::string expect = "expect: [one_record]\n";
  CHECK(ErrorOf(kHead + "steps:\n  - sned: create_order\n" + expect).rfind(
            "s.yaml:4:5: unknown step kind 'sned' (did you mean 'send'?)", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - kil\n" + expect) == "s.yaml:4:5: unknown step kind 'kil' (did you mean 'kill'?)");
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    after: 50\n" + expect).rfind(
            "s.yaml:5:12: step 'send'.after: bad duration '50': missing unit", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    repeat: many\n" + expect) ==
        "s.yaml:5:13: step 'send'.repeat must be an integer, found 'many'");
  CHECK(ErrorOf(kHead + "steps:\n  - wait: 1s\n    key: k1\n" + expect).rfind(
            "s.yaml:5:5: unknown key 'key' in step 'wait'", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    kye: k1\n" + expect).rfind(
            "s.yaml:5:5: unknown key 'kye' in step 'send' (did you mean 'key'?)", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    wait: 1s\n" + expect) ==
        "s.yaml:5:5: a step has exactly one kind, found 'send' and 'wait'");
  CHECK(ErrorOf(kHead + "steps:\n  - send:\n" + expect) == "s.yaml:4:5: step 'send' needs an action name");
  CHECK(ErrorOf(kHead + "steps:\n  - burst: create_order\n    mode: lastbyte\n" + expect) ==
        "s.yaml:5:11: step 'burst'.mode must be 'last_byte' or 'threads', found 'lastbyte' (did you mean 'last_byte'?)");
  CHECK(ErrorOf(kHead + "steps: [{send: a}]\nexpect: [one_recrod]\n").rfind(
            "s.yaml:4:10: unknown oracle 'one_recrod' (did you mean 'one_record'?); known: ", 0) == 0);
  CHECK(ErrorOf(kHead + "steps: [{send: a}]\nexpect:\n  - probe_equal: {a: x, c: y}\n").rfind(
            "s.yaml:5:25: unknown key 'c' in oracle 'probe_equal' parameters (did you mean 'a'?)", 0) == 0);
  CHECK(ErrorOf(kHead + "steps: [{send: a}]\nexpect:\n  - probe_equal: {a: x}\n") ==
        "s.yaml:5:5: oracle 'probe_equal': missing required parameter 'b'");
  CHECK(ErrorOf(kHead + "steps: [{send: a}]\nexpect:\n  - one_record: {count: one}\n") ==
        "s.yaml:5:25: oracle 'one_record' parameter 'count' must be an integer, found 'one'");
  CHECK(ErrorOf(kHead + "steps: [{send: a}]\nexpect:\n  - window: {window: soon}\n").rfind(
            "s.yaml:5:22: oracle 'window' parameter 'window': bad duration 'soon'", 0) == 0);
  CHECK(ErrorOf(kHead + "steps: [{send: a}]\nexpect:\n  - action_scope: {x: 1}\n") ==
        "s.yaml:5:19: oracle 'action_scope' takes no parameters");
  CHECK(ErrorOf("layer: client\nsteps: [{send: a}]\n" + expect) == "s.yaml:1:1: scenario: missing required key 'hunts'");
  CHECK(ErrorOf("layer: clinet\nhunts: x\nsteps: [{send: a}]\n" + expect).rfind(
            "s.yaml:1:8: unknown layer 'clinet' (did you mean 'client'?)", 0) == 0);
  CHECK(ErrorOf(kHead + "stpes: []\n" + expect).rfind("s.yaml:3:1: unknown key 'stpes' in scenario (did you mean 'steps'?)", 0) == 0);
  CHECK(ErrorOf(kHead + "steps: []\n" + expect) == "s.yaml:3:8: steps must be a non-empty list");
  CHECK(ErrorOf(kHead + "steps:\n  - fault: lose\n" + expect) ==
        "s.yaml:4:12: step 'fault': fault 'lose' is not declared under 'faults'");
  CHECK(ErrorOf(kHead + "faults:\n  lose: {kind: drop_respons}\nsteps:\n  - fault: lose\n" + expect).rfind(
            "s.yaml:4:16: unknown fault kind 'drop_respons' (did you mean 'drop_response'?)", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    key: \"k 1\"\n" + expect) ==
        "s.yaml:5:10: step 'send'.key: bad name 'k 1' (letters, digits, _ . -)");
  CHECK(ErrorOf(kHead + "steps: [{send: a}\n" + expect).rfind("s.yaml:4:1: YAML syntax error: ", 0) == 0);
  // An empty step is an error at its place (it crashed the loader).
  CHECK(ErrorOf(kHead + "steps:\n  - {}\n" + expect) ==
        "s.yaml:4:5: a step must be a map like '{send: ACTION}' or a bare word like 'kill'");
}

TEST_CASE("without a fault-kind list, any fault kind is accepted") {
  auto r = ParseScenario(kHead + "faults:\n  x: {kind: anything}\nsteps: [{fault: x}]\nexpect: [one_record]\n", "s.yaml",
                         BuiltinOracles().Vocabulary());
  REQUIRE(r.ok());
  CHECK(r->faults.at("x").kind == "anything");
}

TEST_CASE("a scenario is checked against a target separately") {
  auto r = ParseScenario(kHead + R"(steps:
  - send: create_ordre
  - hook: slwo
  - hook: flood_downstream
  - probe: ledger
  - restart
  - send: cancel_order
    payload: other
expect: [one_record]
)", "s.yaml", Vocab());
  REQUIRE(r.ok());
  ScenarioFit fit = CheckScenarioAgainstTarget(*r, idemproof::testing::ShopTarget());
  REQUIRE(fit.errors.size() == 2);
  CHECK(fit.errors[0].ToString() ==
        "s.yaml:4:5: action 'create_ordre' is not declared by target 'shop' (did you mean 'create_order'?)");
  CHECK(fit.errors[1].ToString() == "s.yaml:5:5: hook 'slwo' is not declared by target 'shop' (did you mean 'slow'?)");
  CHECK(fit.needs == std::vector<std::string>{"hook 'flood_downstream'", "probe 'ledger'",
                                              "a start command (target 'start') for step 'restart'",
                                              "other_payload for action 'cancel_order'"});
  CHECK_FALSE(fit.runnable());

  // An action the target lacks entirely (a shop without payments) is a need,
  // not an error: a foreign target runs the suite with it not_applicable.
  auto absent = ParseScenario(kHead + "steps: [{send: create_order}, {send: payment_refunded}]\nexpect: [one_record]\n",
                              "s.yaml", Vocab());
  REQUIRE(absent.ok());
  ScenarioFit absent_fit = CheckScenarioAgainstTarget(*absent, idemproof::testing::ShopTarget());
  CHECK(absent_fit.errors.empty());
  CHECK(absent_fit.needs == std::vector<std::string>{"action 'payment_refunded'"});

  auto good = ParseScenario(kHead + "steps: [{send: create_order}, {probe: stock}, {hook: slow}]\nexpect: [one_record]\n",
                            "s.yaml", Vocab());
  REQUIRE(good.ok());
  CHECK(CheckScenarioAgainstTarget(*good, idemproof::testing::ShopTarget()).runnable());
}

TEST_CASE("send until: recovered repeats past repeat while in progress, and needs every") {
  const std::string expect = "expect: [one_record]\n";
  auto r = ParseScenario(kHead + "steps:\n  - send: create_order\n    repeat: 3\n    every: 100ms\n    until: recovered\n" +
                             expect,
                         "s.yaml", Vocab());
  REQUIRE(r.ok());
  CHECK(r->steps[0].Options<SendOptions>().until_recovered);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    until: recovered\n" + expect) ==
        "s.yaml:5:12: step 'send'.until needs a positive 'every' (the pause between retries)");
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    every: 1s\n    until: done\n" + expect) ==
        "s.yaml:6:12: step 'send'.until must be 'recovered', found 'done'");
}

TEST_CASE("start and restart until: accepting load on main, ready is a bare step, file:line:column errors") {
  const std::string expect = "expect: [one_record]\n";
  auto r = ParseScenario(kHead + "steps:\n  - send: create_order\n  - kill\n  - start: true\n    until: accepting\n"
                                 "  - send: create_order\n  - ready\n  - restart: true\n    until: ready\n  - restart\n" +
                             expect,
                         "s.yaml", Vocab());
  REQUIRE(r.ok());
  CHECK(r->steps[2].Options<InstanceOptions>().until_accepting);
  CHECK(r->steps[4].KindName() == "ready");
  CHECK_FALSE(r->steps[5].Options<InstanceOptions>().until_accepting);
  CHECK_FALSE(r->steps[6].Options<InstanceOptions>().until_accepting);
  // The written form keeps the option: a bare restart is only one that waits for readiness.
  CHECK_FALSE(r->steps[2].kind->WritesBare(r->steps[2]));
  CHECK(r->steps[6].kind->WritesBare(r->steps[6]));
  CHECK(ErrorOf(kHead + "steps:\n  - start: true\n    until: soon\n" + expect).rfind("s.yaml:5:12: step 'start': 'until' is accepting", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - restart: true\n    instance: instance-2\n    until: accepting\n" + expect)
            .rfind("s.yaml:6:12: step 'restart': 'until: accepting' acts on main only", 0) == 0);
  // Only what starts a process waits for something.
  CHECK(ErrorOf(kHead + "steps:\n  - kill: true\n    until: accepting\n" + expect).find("until") != std::string::npos);
  CHECK(ErrorOf(kHead + "steps:\n  - ready: 2s\n" + expect).find("step 'ready' takes no value") != std::string::npos);
}

TEST_CASE("egress faults and the cause step: loaded, positioned errors, checked against the target") {
  const std::string expect = "expect: [one_record]\n";
  auto r = ParseScenario(kHead + "faults:\n  cut: {kind: delay, on: egress.provider, duration: 1s}\n"
                                 "steps:\n  - cause: kill_after_charge\n  - send: pay\n  - fault: cut\n" + expect,
                         "s.yaml", Vocab());
  REQUIRE(r.ok());
  CHECK(r->faults.at("cut").on == "egress.provider");
  CHECK_FALSE(r->faults.at("cut").params.contains("on"));  // not an injector option
  CHECK(r->faults.at("cut").params.at("duration") == "1s");
  CHECK(r->steps[0].KindName() == "cause");
  CHECK(r->steps[0].Options<CauseOptions>().capability == "kill_after_charge");

  CHECK(ErrorOf(kHead + "faults:\n  cut: {kind: delay, on: provider}\nsteps: [{fault: cut}]\n" + expect).rfind(
            "s.yaml:4:26: fault 'cut'.on must be egress.NAME", 0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - cause: kill_after_charg\n" + expect).rfind(
            "s.yaml:4:12: step 'cause': unknown capability 'kill_after_charg' (did you mean 'kill_after_charge'?)", 0) == 0);

  // Against a target: no egress, no kill_after_charge hook, no egress ledger: needs.
  TargetDescription target = idemproof::testing::ShopTarget();
  target.actions["pay"].name = "pay";
  target.actions["pay"].role = "pay";
  ScenarioFit fit = CheckScenarioAgainstTarget(*r, target);
  CHECK(fit.needs == std::vector<std::string>{
                         "egress 'provider' (target 'egress') for fault cut",
                         "capability kill_after_charge (the target dies right after its downstream answered the "
                         "charge): a hook 'kill_after_charge' or a ledger probe with egress: of action 'pay'"});
  CHECK_FALSE(ResolveCapability("kill_after_charge", "pay", target).ok());

  // With the egress and an egress ledger of pay: runnable, through the proxy.
  target.egress["provider"].name = "provider";
  ProbeDescription ledger;
  ledger.name = "charges";
  ledger.egress = "provider";
  ledger.role = "ledger";
  ledger.of = "pay";
  target.probes["charges"] = ledger;
  CHECK(CheckScenarioAgainstTarget(*r, target).needs.empty());
  auto route = ResolveCapability("kill_after_charge", "pay", target);
  REQUIRE(route.ok());
  CHECK(route->kind == CapabilityProvision::Kind::kEgress);
  CHECK(route->ledger == "charges");
  CHECK(route->hook.empty());

  // A kill_after_charge hook wins: the scenario runs the same either way.
  target.hooks["kill_after_charge"].name = "kill_after_charge";
  route = ResolveCapability("kill_after_charge", "pay", target);
  REQUIRE(route.ok());
  CHECK(route->hook == "kill_after_charge");
}

TEST_CASE("payload forms: a name each, a list only on a burst, a JSON body where they need one") {
  auto r = ParseScenario(kHead + R"(steps:
  - send: create_order
    payload: reordered
  - burst: create_order
    n: 3
    payload: [default, value_changed]
expect: [one_record]
)", "s.yaml", Vocab());
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->steps[0].Options<SendOptions>().payload == PayloadVariant::kReordered);
  CHECK(r->steps[1].Options<SendOptions>().payloads == std::vector<PayloadVariant>{PayloadVariant::kDefault, PayloadVariant::kValueChanged});

  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    payload: reorderd\n" + "expect: [one_record]\n").rfind(
            "s.yaml:5:14: step 'send'.payload: unknown payload 'reorderd' (did you mean 'reordered'?); known: default, ",
            0) == 0);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    payload: [default, other]\n" + "expect: [one_record]\n") ==
        "s.yaml:5:14: step 'send'.payload: only a burst takes a list of payloads");

  // The shop's cancel_order has no JSON body: a changed form is a need there.
  auto changed = ParseScenario(kHead + "steps:\n  - send: cancel_order\n    payload: value_changed\nexpect: [one_record]\n",
                               "s.yaml", Vocab());
  REQUIRE(changed.ok());
  CHECK(CheckScenarioAgainstTarget(*changed, idemproof::testing::ShopTarget()).needs ==
        std::vector<std::string>{"a JSON body for action 'cancel_order' (payload value_changed)"});
}

// Issue 33: keys sharing a prefix of the declared key length; large requests.
TEST_CASE("key_form max_length loads on send and burst, with a named key only, file:line:column errors") {
  auto r = ParseScenario(kHead + R"(steps:
  - send: create_order
    key: k1
    key_form: max_length
  - burst: create_order
    key: k2
    key_form: plain
expect: [one_record]
)", "s.yaml", Vocab());
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->steps[0].Options<SendOptions>().key_at_max_length);
  CHECK_FALSE(r->steps[1].Options<SendOptions>().key_at_max_length);
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    key_form: max_lenght\n" + "expect: [one_record]\n") ==
        "s.yaml:5:15: step 'send'.key_form must be one of plain, max_length, empty, over_max_length, comma, quote, "
        "non_ascii, found 'max_lenght' (did you mean "
        "'max_length'?)");
  CHECK(ErrorOf(kHead + "steps:\n  - send: create_order\n    key: fresh\n    key_form: max_length\n" +
                "expect: [one_record]\n") ==
        "s.yaml:6:15: step 'send'.key_form: max_length needs a named key (k1, k2...), not 'fresh'");
  CHECK(ErrorOf(kHead + "steps:\n  - probe: stock\n    key_form: plain\n" + "expect: [one_record]\n").rfind(
            "s.yaml:5:5: unknown key 'key_form' in step 'probe'", 0) == 0);
}

TEST_CASE("payload large needs a JSON array in the body or a large variant") {
  auto r = ParseScenario(kHead + "steps:\n  - send: create_order\n    payload: large\nexpect: [one_record]\n",
                         "s.yaml", Vocab());
  REQUIRE(r.ok());
  CHECK(r->steps[0].Options<SendOptions>().payload == PayloadVariant::kLarge);
  // The shop's create_order has a JSON body without an array, and no variant named large.
  CHECK(CheckScenarioAgainstTarget(*r, idemproof::testing::ShopTarget()).needs ==
        std::vector<std::string>{"a JSON array in the body, or a 'large' variant, for action 'create_order' (payload large)"});
}

TEST_CASE("wait past_window waits past the target's own window and needs one") {
  const std::string expect = "expect: [one_record]\n";
  auto r = ParseScenario(kHead + "steps:\n  - send: create_order\n  - wait: past_window\n  - send: create_order\n" + expect,
                         "s.yaml", Vocab());
  REQUIRE(r.ok());
  const WaitOptions& wait = r->steps[1].Options<WaitOptions>();
  CHECK(wait.past_window);
  CHECK(wait.duration == Duration::zero());
  // ShopTarget declares a 4s window: a tenth more. PlainTarget declares none.
  CHECK(WaitDuration(wait, idemproof::testing::ShopTarget().idempotency) == 4400ms);
  CHECK(CheckScenarioAgainstTarget(*r, idemproof::testing::ShopTarget()).runnable());
  ScenarioFit plain = CheckScenarioAgainstTarget(*r, idemproof::testing::PlainTarget());
  CHECK(plain.errors.empty());
  CHECK(plain.needs == std::vector<std::string>{"a retry window (idempotency.window) for 'wait: past_window'"});
  // The margin is at least 200ms; a window past kLongestPastWindow is not waited for.
  IdempotencyContract c;
  c.window = 1s;
  CHECK(PastWindowWait(c) == 1200ms);
  c.window = 24h;
  CHECK_FALSE(PastWindowWait(c));
  TargetDescription day = idemproof::testing::ShopTarget();
  day.idempotency.window = 24h;
  REQUIRE(CheckScenarioAgainstTarget(*r, day).needs.size() == 1);
  CHECK(CheckScenarioAgainstTarget(*r, day).needs[0].find("at most 10m") != std::string::npos);
  // A plain duration still loads as before; anything else names both forms.
  auto plain_wait = ParseScenario(kHead + "steps:\n  - wait: 250ms\n" + expect, "s.yaml", Vocab());
  REQUIRE(plain_wait.ok());
  CHECK_FALSE(plain_wait->steps[0].Options<WaitOptions>().past_window);
  CHECK(plain_wait->steps[0].Options<WaitOptions>().duration == 250ms);
  CHECK(ErrorOf(kHead + "steps:\n  - wait: past_windwo\n" + expect) ==
        "s.yaml:4:11: step 'wait': 'past_windwo' is neither a duration (250ms, 4s) nor past_window or past_lease (did you mean "
        "'past_window'?)");
}
