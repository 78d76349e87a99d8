// Roles in target files, parameters in scenario files, and the bind stage
// (model/binding.h) between them.
#include <catch2/catch.hpp>

#include "load_helpers.h"
#include "model/binding.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

// Three keyed creates (one without records, one without other_payload), a
// delete and a counter of the first, a pay action with its ledger.
const char* kTarget = R"(name: shop
base_url: "http://127.0.0.1:1"
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
    other_payload: {json: {biz: "{{biz}}", qty: 2}}
    records: {request: {method: GET, path: "/orders?biz={{biz}}"}, count: "$.count"}
    capture: {order_id: "$.id"}
  cancel_order:
    role: delete
    of: create_order
    request: {method: DELETE, path: "/orders/{{order_id}}"}
  create_refund:
    role: create
    request: {method: POST, path: /refunds, json: {biz: "{{biz}}"}}
    other_payload: {json: {biz: "{{biz}}", amount: 9}}
    records: {request: {method: GET, path: "/refunds?biz={{biz}}"}, count: "$.count"}
  create_note:
    role: create
    request: {method: POST, path: /notes, json: {biz: "{{biz}}"}}
    records: {request: {method: GET, path: "/notes?biz={{biz}}"}, count: "$.count"}
  create_unlisted:
    role: create
    request: {method: POST, path: /unlisted, json: {biz: "{{biz}}"}}
probes:
  stock: {role: counter, of: create_order, request: {method: GET, path: /stock}, value: "$.available"}
  notes_seen: {role: counter, of: create_note, request: {method: GET, path: /notes/seen}, value: "$.n"}
)";

TargetDescription Target(const std::string& text = kTarget) {
  auto t = ParseTarget(text, "t.yaml");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return std::move(t).value();
}


std::vector<std::string> Names(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> out;
  for (const auto& s : scenarios) out.push_back(s.name);
  return out;
}

}  // namespace

TEST_CASE("a target's actions and probes declare roles, unknown roles are errors with file:line:column",
          "[binding]") {
  const TargetDescription t = Target();
  CHECK(t.actions.at("create_order").role == "create");
  CHECK(t.actions.at("cancel_order").role == "delete");
  CHECK(t.actions.at("cancel_order").of == "create_order");
  CHECK(t.probes.at("stock").role == "counter");
  CHECK(t.probes.at("stock").of == "create_order");

  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n";
  CHECK(TargetError(head + "  a:\n    role: creat\n    request: {method: POST, path: /a}\n") ==
        "t.yaml:5:11: action 'a': unknown role 'creat' (did you mean 'create'?); known: create, put, "
        "delete, pay, callback");
  CHECK(TargetError(head + "  a:\n    role: create\n    request: {method: POST, path: /a}\n"
                           "  d:\n    role: delete\n    of: b\n    request: {method: DELETE, path: /a}\n")
            .find("t.yaml:9:9: action 'd'.of: 'b' is not a declared action") == 0);
  CHECK(TargetError(head + "  a:\n    role: put\n    request: {method: PUT, path: /a}\n"
                           "  d:\n    role: delete\n    of: a\n    request: {method: DELETE, path: /a}\n") ==
        "t.yaml:9:9: action 'd'.of: action 'a' does not have role create");
  CHECK(TargetError(head + "  a:\n    of: b\n    request: {method: PUT, path: /a}\n") ==
        "t.yaml:5:9: action 'a': 'of' needs a 'role'");
  CHECK(TargetError(head + "  a:\n    role: create\n    request: {method: POST, path: /a}\n"
                           "  ping:\n    request: {method: GET, path: /ping}\n")
            .find("t.yaml:7:3: action 'ping' has no role") == 0);
  CHECK(TargetError(head + "  a:\n    role: create\n    request: {method: POST, path: /a}\n"
                           "probes:\n  p: {role: stock, request: {method: GET, path: /p}}\n")
            .find("t.yaml:8:13: probe 'p': unknown role 'stock'") == 0);
}

TEST_CASE("a scenario's parameters: roles, needs, of and $references are checked with file:line:column",
          "[binding]") {
  const Scenario s = ScenarioOf(kDoubleSubmit);
  REQUIRE(s.parameters.size() == 1);
  CHECK(s.parameters[0].name == "create");
  CHECK(s.parameters[0].role == "create");
  CHECK(s.parameters[0].needs == std::vector<std::string>{"records"});
  CHECK(s.steps[0].Options<SendOptions>().action == "$create");

  const std::string head = "layer: client\nhunts: x\n";
  CHECK(ScenarioError(head + "for_each:\n  c: {role: creat}\nsteps:\n  - send: $c\nexpect: [one_record]\n")
            .find("s.yaml:4:13: parameter 'c': unknown role 'creat' (did you mean 'create'?)") == 0);
  CHECK(ScenarioError(head + "for_each:\n  c: {role: create}\nsteps:\n  - send: $cc\nexpect: [one_record]\n") ==
        "s.yaml:6:11: step 'send': '$cc' names no parameter declared under 'for_each' (did you mean 'c'?)");
  CHECK(ScenarioError(head + "for_each:\n  c: {role: create}\nsteps:\n  - send: $c\n"
                             "expect:\n  - one_record: {actions: [$x]}\n") ==
        "s.yaml:8:28: oracle 'one_record' parameter 'actions': '$x' names no parameter declared under 'for_each' (did you mean 'c'?)");
  CHECK(ScenarioError(head + "for_each:\n  c: {role: create}\n  p: {role: counter, of: c}\n"
                             "steps:\n  - send: $c\n  - probe: $c\nexpect: [one_record]\n") ==
        "s.yaml:8:12: step 'probe': '$c' is an action parameter, not a probe");
  CHECK(ScenarioError(head + "for_each:\n  c: {role: create}\n  p: {role: counter, of: c}\n"
                             "steps:\n  - send: $p\nexpect: [one_record]\n") ==
        "s.yaml:7:11: step 'send': '$p' is a probe parameter, not an action");
  CHECK(ScenarioError(head + "for_each:\n  c: {role: create}\n  d: {role: delete}\nsteps:\n  - send: $c\n"
                             "expect: [one_record]\n") ==
        "s.yaml:5:3: parameter 'd' is never used as $d");
  CHECK(ScenarioError(head + "for_each:\n  d: {role: delete, of: c}\n  c: {role: create}\nsteps:\n"
                             "  - send: $c\n  - send: $d\nexpect: [one_record]\n") ==
        "s.yaml:4:25: parameter 'd'.of: 'c' is not an action parameter declared before it");
  CHECK(ScenarioError(head + "for_each:\n  c: {role: create, needs: [record]}\nsteps:\n  - send: $c\n"
                             "expect: [one_record]\n")
            .find("s.yaml:4:29: parameter 'c'.needs: unknown need 'record' (did you mean 'records'?)") == 0);
  CHECK(ScenarioError(head + "for_each:\n  c: {rol: create}\nsteps:\n  - send: $c\nexpect: [one_record]\n")
            .find("s.yaml:4:") == 0);
}

TEST_CASE("the bind stage yields one concrete scenario per fitting action, names and parameters substituted",
          "[binding]") {
  const TargetDescription t = Target();
  const std::vector<Scenario> bound = BindScenario(ScenarioOf(kDoubleSubmit), t);
  // create_unlisted has no records probe: needs: [records] leaves it out.
  CHECK(Names(bound) == std::vector<std::string>{"double-submit[create_note]", "double-submit[create_order]",
                                                 "double-submit[create_refund]"});
  for (const Scenario& s : bound) {
    INFO(s.name);
    const std::string action = s.binding.at("create");
    CHECK(s.bound_from == "double-submit");
    CHECK(s.unmet.empty());
    CHECK(s.steps[0].Options<SendOptions>().action == action);
    CHECK(s.steps[1].Options<SendOptions>().action == action);
    CHECK(s.ActionsUsed() == std::vector<std::string>{action});
    CHECK(s.expect[0].params.at("actions") == nlohmann::json::array({action}));
    CHECK(CheckScenarioAgainstTarget(s, t).runnable());
  }

  // other_payload: create_note has none.
  std::string reuse = kDoubleSubmit;
  reuse.replace(reuse.find("needs: [records]"), 16, "needs: [records, other_payload]");
  CHECK(Names(BindScenario(ScenarioOf(reuse), t)) ==
        std::vector<std::string>{"double-submit[create_order]", "double-submit[create_refund]"});

  // A literal scenario is itself, unbound and runnable as before.
  const Scenario literal = ScenarioOf("name: lit\nlayer: client\nhunts: x\nsteps:\n  - send: create_order\n"
                                      "expect: [one_record]\n");
  const std::vector<Scenario> same = BindScenario(literal, t);
  REQUIRE(same.size() == 1);
  CHECK(same[0].name == "lit");
  CHECK(same[0].binding.empty());
  CHECK(same[0].bound_from.empty());
  CHECK(CheckScenarioAgainstTarget(same[0], t).runnable());
}

TEST_CASE("several parameters bind consistently along of:", "[binding]") {
  const TargetDescription t = Target();
  const Scenario s = ScenarioOf(R"(name: delete-once
layer: client
hunts: a repeated delete releases twice
for_each:
  create: {role: create}
  cancel: {role: delete, of: create}
  counter: {role: counter, of: create}
steps:
  - probe: $counter
    as: before
  - send: $create
  - send: $cancel
    key: none
  - probe: $counter
expect:
  - probe_equal: {a: before, b: $counter}
)");
  const std::vector<Scenario> bound = BindScenario(s, t);
  // create_note has a counter but no delete; only create_order has both.
  REQUIRE(Names(bound) == std::vector<std::string>{"delete-once[create_order,cancel_order,stock]"});
  const Scenario& b = bound[0];
  CHECK(b.steps[0].Options<ProbeOptions>().name == "stock");
  CHECK(b.steps[0].label == "before");
  CHECK(b.steps[2].Options<SendOptions>().action == "cancel_order");
  CHECK(b.steps[3].Options<ProbeOptions>().name == "stock");
  CHECK(b.steps[3].label == "stock");  // a probe step's default label is the bound probe's name
  CHECK(b.expect[0].params.at("b") == "stock");
  CHECK(b.binding == std::map<std::string, std::string>{
                         {"create", "create_order"}, {"cancel", "cancel_order"}, {"counter", "stock"}});
  CHECK(CheckScenarioAgainstTarget(b, t).runnable());

  // Two parameters of one role get distinct actions.
  const Scenario two = ScenarioOf("name: scope\nlayer: client\nhunts: x\nfor_each:\n  a: {role: create}\n"
                                  "  b: {role: create}\nsteps:\n  - send: $a\n  - send: $b\nexpect: [action_scope]\n");
  const std::vector<Scenario> pairs = BindScenario(two, t);
  CHECK(pairs.size() == 4 * 3);
  for (const auto& p : pairs) CHECK(p.binding.at("a") != p.binding.at("b"));
}

TEST_CASE("no fitting action: one not_applicable scenario saying what the target lacks", "[binding]") {
  const TargetDescription t = Target();
  const Scenario pay = ScenarioOf(R"(name: kill-after-charge
layer: side-effect
hunts: a retry charges twice
for_each:
  pay: {role: pay, needs: [records]}
steps:
  - send: $pay
expect:
  - one_record: {actions: [$pay]}
)");
  const std::vector<Scenario> bound = BindScenario(pay, t);
  REQUIRE(bound.size() == 1);
  CHECK(bound[0].name == "kill-after-charge");
  CHECK(bound[0].binding.empty());
  CHECK(bound[0].unmet == std::vector<std::string>{"an action with role pay and a records probe"});
  const ScenarioFit fit = CheckScenarioAgainstTarget(bound[0], t);
  CHECK(fit.errors.empty());
  CHECK(fit.needs == std::vector<std::string>{"an action with role pay and a records probe"});

  // Each role present, but not together: the combination is what is missing.
  const Scenario put = ScenarioOf(R"(name: put-once
layer: client
hunts: x
for_each:
  create: {role: create, needs: [other_payload]}
  counter: {role: counter, of: create}
steps:
  - send: $create
  - probe: $counter
expect: [one_record]
)");
  TargetDescription no_counter_of_order = t;
  no_counter_of_order.probes.erase("stock");
  const std::vector<Scenario> none = BindScenario(put, no_counter_of_order);
  REQUIRE(none.size() == 1);
  CHECK(none[0].unmet == std::vector<std::string>{
                             "an action with role create and an other_payload, a probe with role counter of "
                             "the $create action, together"});
}

TEST_CASE("a recorded binding applies again (idemproof check), a wrong one is an error", "[binding]") {
  const Scenario s = ScenarioOf(kDoubleSubmit);
  auto again = ApplyBinding(s, {{"create", "create_refund"}});
  REQUIRE(again.ok());
  CHECK(again->name == "double-submit[create_refund]");
  CHECK(again->steps[0].Options<SendOptions>().action == "create_refund");
  CHECK_FALSE(ApplyBinding(s, {}).ok());
  CHECK_FALSE(ApplyBinding(s, {{"other", "create_refund"}}).ok());
  CHECK(ApplyBinding(ScenarioOf("name: lit\nlayer: client\nhunts: x\nsteps:\n  - send: a\nexpect: [one_record]\n"), {})
            .ok());
}
