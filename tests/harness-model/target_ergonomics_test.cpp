// Issue 34 items 4 and 5 in the target file: hooks asked for by role, an
// action with several roles, probes sent as a caller or read from an
// action's answer, validation_first, and the file's own template variables
// ({{target_dir}}, {{env.NAME}}) expanded at load with located errors.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "literal_history.h"
#include "load_helpers.h"
#include "model/binding.h"
#include "model/capabilities.h"
#include "model/scenario.h"
#include "model/target.h"
#include "model/template.h"
#include "oracles/oracle.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

TargetDescription Target(const std::string& text) {
  auto t = ParseTarget(text, "t.yaml");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return std::move(t).value();
}


const Answer kCreated{201, R"({"id":1,"biz_no":"b1"})"};
Answer Replayed() {
  Answer a{201, R"({"id":1,"biz_no":"b1"})"};
  a.headers.emplace_back("Idempotent-Replayed", "true");
  return a;
}

std::vector<std::string> Names(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> out;
  for (const auto& s : scenarios) out.push_back(s.name);
  return out;
}

}  // namespace

// Issue 34 item 4: hooks are asked for by role (the capability they
// provide), never by the reference's spelling; a hook without a role has
// the one its name spells by default.
TEST_CASE("hooks are found by role: any name with role:, the default spelling without", "[binding][roles]") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n"
                           "  go: {role: create, request: {method: POST, path: /a}}\n";
  const TargetDescription t = Target(head + "hooks:\n"
                                            "  make_it_slow: {role: slow_request, request: {method: POST, path: /s}}\n"
                                            "  undo_everything: {role: heal, request: {method: DELETE, path: /s}}\n"
                                            "  fail_next_final: {request: {method: POST, path: /f}}\n"
                                            "  unrelated: {request: {method: POST, path: /u}}\n");
  CHECK(t.hooks.at("make_it_slow").role == "slow_request");
  CHECK(t.hooks.at("fail_next_final").role == "final_failure");  // by its name
  CHECK(t.hooks.at("unrelated").role.empty());
  REQUIRE(t.HookFor("heal") != nullptr);
  CHECK(t.HookFor("heal")->name == "undo_everything");
  auto slow = ResolveCapability("slow_request", "go", t);
  REQUIRE(slow.ok());
  CHECK(slow->kind == CapabilityProvision::Kind::kHook);
  CHECK(slow->hook == "make_it_slow");
  auto retry = ResolveCapability("retryable_failure", "go", t);
  REQUIRE_FALSE(retry.ok());
  CHECK(retry.status().message().find("a hook 'fail_next_retryable'") != std::string::npos);

  CHECK(TargetError(head + "hooks:\n  h: {role: slow, request: {method: POST, path: /s}}\n")
            .find("t.yaml:6:13: hook 'h': unknown role 'slow'; known: slow_request, "
                  "retryable_failure, heal, kill_after_charge, final_failure, die_before_ack") == 0);
  CHECK(TargetError(head + "hooks:\n  slow_business: {request: {method: POST, path: /s}}\n"
                           "  h: {role: slow_request, request: {method: POST, path: /s}}\n")
            .find("t.yaml:7:13: hook 'h': hook 'slow_business' already has role slow_request; one hook per role") == 0);
  // A message may say its role (the only one): anything else is an error.
  CHECK(TargetError(head + "messages:\n  m: {role: msg, fields: {id: \"{{key}}\"}}\n")
            .find("t.yaml:6:13: message 'm': unknown role 'msg'; known: message") == 0);
}

// Issue 34 item 5: an action that is several things at once (an order
// endpoint that also charges) is bound by each of its roles.
TEST_CASE("an action with several roles binds to the scenarios of each", "[binding][roles]") {
  const TargetDescription t = Target(R"(name: t
base_url: http://127.0.0.1:1
actions:
  order_and_charge:
    role: [create, pay]
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
    records: {request: {method: GET, path: "/orders?biz={{biz}}"}, count: "$.count"}
)");
  const ActionDescription& a = t.actions.at("order_and_charge");
  CHECK(a.role == "create");
  CHECK(a.roles == std::vector<std::string>{"create", "pay"});
  CHECK(a.HasRole("pay"));
  CHECK(Names(BindScenario(ScenarioOf(kDoubleSubmit), t)) == std::vector<std::string>{"double-submit[order_and_charge]"});
  const std::string pays = R"(name: pays
layer: side-effect
hunts: x
for_each:
  pay: {role: pay}
steps:
  - send: $pay
expect:
  - one_record: {actions: [$pay]}
)";
  CHECK(Names(BindScenario(ScenarioOf(pays), t)) == std::vector<std::string>{"pays[order_and_charge]"});

  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n";
  CHECK(TargetError(head + "  a: {role: [create, creat], request: {method: POST, path: /a}}\n")
            .find("t.yaml:4:22: action 'a': unknown role 'creat' (did you mean 'create'?)") == 0);
  CHECK(TargetError(head + "  a: {role: [pay, pay], request: {method: POST, path: /a}}\n")
            .find("t.yaml:4:19: action 'a'.role: 'pay' is listed twice") == 0);
  CHECK(TargetError(head + "  a: {role: [create, pay], request: {method: POST, path: /a}}\n"
                           "  b: {role: [put, pay], of: a, request: {method: PUT, path: /a}}\n"
                           "  c: {role: [delete], of: b, request: {method: DELETE, path: /a}}\n")
            .find("t.yaml:6:27: action 'c'.of: action 'b' does not have role create") == 0);
}

// Issue 34 item 5: a probe sent as a caller, and a probe reading a member
// of its action's answer instead of a call.
TEST_CASE("probes: caller: names a declared caller, from_answer: reads its action's answer", "[binding][roles]") {
  const std::string head = R"(name: t
base_url: http://127.0.0.1:1
callers:
  tenant_a: {headers: {Authorization: "Bearer a"}}
  tenant_b: {headers: {Authorization: "Bearer b"}}
headers: {Authorization: "Bearer nobody", X-Client: t}
actions:
  charge: {role: pay, request: {method: POST, path: /c}}
probes:
)";
  const TargetDescription t = Target(head + "  mine: {role: ledger, of: charge, caller: tenant_b, request: {path: /l}}\n"
                                            "  txn: {role: record, of: charge, from_answer: \"$.txn_id\"}\n");
  CHECK(t.probes.at("mine").caller == "tenant_b");
  REQUIRE(t.probes.at("txn").from_answer);
  CHECK(t.probes.at("txn").from_answer->text() == "$.txn_id");
  CHECK(t.actions.at("charge").capture.count(FromAnswerVariable("txn")) == 1);
  const HeaderList as_b = t.HeadersAs("tenant_b");
  CHECK(as_b == HeaderList{{"X-Client", "t"}, {"Authorization", "Bearer b"}});
  CHECK(t.HeadersAs("") == t.headers);

  CHECK(TargetError(head + "  p: {caller: tenant_c, request: {path: /l}}\n")
            .find("t.yaml:10:15: caller: 'tenant_c' is not a caller declared under 'callers' (did you mean "
                  "'tenant_a'?)") == 0);
  CHECK(TargetError(head + "  p: {caller: tenant_a, command: [echo, x]}\n")
            .find("t.yaml:10:15: probe 'p'.caller sends its request as that caller: give request:") == 0);
  CHECK(TargetError(head + "  p: {role: record, from_answer: \"$.txn_id\"}\n")
            .find("probe 'p'.from_answer reads an action's answer: give of: ACTION") != std::string::npos);
  CHECK(TargetError(head + "  p: {role: record, of: charge, from_answer: \"$.txn_id\", request: {path: /x}}\n")
            .find("unknown key 'request'") != std::string::npos);
}

TEST_CASE("idempotency.validation_first is a boolean, off by default", "[binding]") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n"
                           "  go: {role: create, request: {method: POST, path: /a}}\n";
  CHECK_FALSE(Target(head).idempotency.validation_first);
  CHECK(Target(head + "idempotency: {validation_first: true}\n").idempotency.validation_first);
  CHECK(TargetError(head + "idempotency: {validation_first: maybe}\n").find("t.yaml:5:33:") == 0);
}

// Issue 34: a target that validates a request before looking its key up
// (idempotency.validation_first) answers an invalid other payload 400, not
// the mismatch status: refused all the same. Undeclared, a 400 is a deviation.
TEST_CASE("mismatch_rejected: validation_first takes a 400 for an invalid other payload as refused") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Answer{400, R"({"error":"qty missing"})"}, "other");
  TargetDescription target = ShopTarget();
  Verdict strict = RunOracle("mismatch_rejected", h.history(), target);
  CHECK(strict.status == VerdictStatus::kInvalid);
  CHECK(strict.evidence.find("answered 400") != std::string::npos);
  target.idempotency.validation_first = true;
  Verdict v = RunOracle("mismatch_rejected", h.history(), target);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("answered 400 x1") != std::string::npos);
  // A replay of the first result is still wrong, validation first or not.
  LiteralHistory replayed;
  replayed.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 25, Replayed(), "other");
  CHECK(RunOracle("mismatch_rejected", replayed.history(), target).status == VerdictStatus::kInvalid);
}


TEST_CASE("{{target_dir}} and {{env.NAME}} expand at load, an unset variable is a located error", "[templates]") {
  const std::string body = "base_url: http://127.0.0.1:1\n"
                           "start: {argv: [\"{{target_dir}}/svc.sh\", \"{{ env.IDEMPROOF_T34 }}\", \"{{port}}\"]}\n"
                           "headers: {Authorization: \"Bearer {{env.IDEMPROOF_T34}}\"}\n"
                           "actions:\n  go: {role: create, request: {method: POST, path: /a}}\n";
  ::setenv("IDEMPROOF_T34", "s3cret", 1);
  auto t = ParseTarget("name: t\n" + body, "/opt/svc/targets/t.yaml");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->start->argv == std::vector<std::string>{"/opt/svc/targets/svc.sh", "s3cret", "{{port}}"});
  CHECK(t->headers == HeaderList{{"Authorization", "Bearer s3cret"}});
  // A relative file: its folder made absolute.
  auto rel = ParseTarget("name: t\n" + body, "t.yaml");
  REQUIRE(rel.ok());
  CHECK(rel->start->argv[0] == std::filesystem::current_path().string() + "/svc.sh");
  ::unsetenv("IDEMPROOF_T34");
  CHECK(TargetError("name: t\n" + body) ==
        "t.yaml:3:41: '{{env.IDEMPROOF_T34}}': the environment variable IDEMPROOF_T34 is not set (set it, or write "
        "the value here)");
  // ExpandSome leaves the variables it does not resolve for later.
  auto some = ExpandSome("{{a}}-{{ b }}", [](const std::string& n) -> Result<std::optional<std::string>> {
    if (n == "a") return std::optional<std::string>("A");
    return std::optional<std::string>();
  });
  REQUIRE(some.ok());
  CHECK(*some == "A-{{b}}");
}
