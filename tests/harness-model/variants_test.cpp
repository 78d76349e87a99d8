// Request variants in target files, capability steps (`cause:`) in scenario
// files, and how the bind stage resolves a capability to a variant or a hook
// (model/capabilities.h, model/request_variant.h).
#include <catch2/catch.hpp>

#include "model/binding.h"
#include "model/capabilities.h"
#include "model/request_variant.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"

using namespace idemproof;

namespace {

const std::string kHead = R"(name: shop
base_url: "http://127.0.0.1:1"
)";

// create_order: every variant kind; create_note: none; a literal hook.
const std::string kTarget = kHead + R"(actions:
  create_order:
    role: create
    request: {method: POST, path: "/orders?src=web", headers: {X-Mode: plain},
              json: {biz: "{{biz}}", item: {sku: a, qty: 1}}}
    records: {request: {method: GET, path: "/orders?biz={{biz}}"}, count: "$.count"}
    variants:
      slow: {query: {slow_ms: "1500"}}
      fails_retryably: {patch: {"$.item.sku": flaky, "$.item.note": "{{run}}"}}
      loud: {headers: {x-mode: loud, X-Extra: "1"}}
      whole: {json: {biz: "{{biz}}", other: true}}
      raw: {body: "biz={{biz}}", content_type: application/x-www-form-urlencoded}
  create_note:
    role: create
    request: {method: POST, path: /notes, body: "n={{biz}}", content_type: text/plain}
    records: {request: {method: GET, path: "/notes?biz={{biz}}"}, count: "$.count"}
hooks:
  fail_next_retryable: {request: {method: POST, path: /_chaos}}
)";

TargetDescription Target(const std::string& text = kTarget) {
  auto t = ParseTarget(text, "t.yaml");
  REQUIRE(t.ok());
  return *t;
}

std::string TargetError(const std::string& variants) {
  auto r = ParseTarget(kHead + R"(actions:
  create_order:
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
  create_note:
    request: {method: POST, path: /notes, body: "n"}
)" + variants, "t.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidConfig);
  return r.status().ToString();
}

ScenarioVocabulary Vocab() { return BuiltinOracles().Vocabulary(); }

const std::string kScenarioHead = "layer: gateway\nhunts: a retryable failure is stored\n";

Result<Scenario> Scenario_(const std::string& steps) {
  return ParseScenario(kScenarioHead + steps + "expect: [one_record]\n", "s.yaml", Vocab());
}

}  // namespace

TEST_CASE("an action's variants load with every kind of change") {
  const TargetDescription t = Target();
  const auto& v = t.actions.at("create_order").variants;
  REQUIRE(v.size() == 5);
  CHECK(v.at("slow").query == HeaderList{{"slow_ms", "1500"}});
  REQUIRE(v.at("fails_retryably").patch.size() == 2);
  CHECK(v.at("fails_retryably").patch[0].first.text() == "$.item.sku");
  CHECK(v.at("fails_retryably").patch[0].second == "flaky");
  CHECK(v.at("loud").headers.size() == 2);
  CHECK(v.at("whole").json->at("other") == true);
  CHECK(*v.at("raw").body == "biz={{biz}}");
  CHECK(v.at("raw").content_type == "application/x-www-form-urlencoded");
  CHECK(v.at("slow").mark.line == 10);
  CHECK(t.actions.at("create_note").request.content_type == "text/plain");
}

TEST_CASE("variant errors name file:line:column") {
  CHECK(TargetError("    variants: {slow: {qeury: {a: b}}}\n").rfind(
            "t.yaml:8:23: unknown key 'qeury' in action 'create_note' variant 'slow' (did you mean 'query'?)", 0) == 0);
  CHECK(TargetError("    variants: {bad: {patch: {\"$.x\": 1}}}\n") ==
        "t.yaml:8:29: action 'create_note' variant 'bad'.patch: the action's request has no json body to patch "
        "(give json or body instead)");
  CHECK(TargetError("    variants: {bad: {body: x, json: {a: 1}}}\n").rfind("t.yaml:8:", 0) == 0);
  CHECK(TargetError("    variants: {bad: {}}\n").rfind("t.yaml:8:21: action 'create_note' variant 'bad' changes nothing", 0) == 0);
  CHECK(TargetError("    variants: {bad: {content_type: text/plain}}\n").rfind(
            "t.yaml:8:36: action 'create_note' variant 'bad'.content_type: there is no body", 0) == 0);
  // On the json action (line 4's request): a patch path that is not a JSON path, a wildcard.
  const std::string order = kHead + "actions:\n  create_order:\n    request: {method: POST, path: /o, json: {a: 1}}\n";
  auto bad_path = ParseTarget(order + "    variants: {bad: {patch: {\"item.sku\": 1}}}\n", "t.yaml");
  REQUIRE_FALSE(bad_path.ok());
  CHECK(bad_path.status().ToString().rfind("t.yaml:6:30: action 'create_order' variant 'bad'.patch path: ", 0) == 0);
  auto wildcard = ParseTarget(order + "    variants: {bad: {patch: {\"$.items[*].a\": 1}}}\n", "t.yaml");
  REQUIRE_FALSE(wildcard.ok());
  CHECK(wildcard.status().ToString() ==
        "t.yaml:6:30: action 'create_order' variant 'bad'.patch: '$.items[*].a' must name one member or element "
        "(no [*], not $)");
  auto patch_and_json = ParseTarget(order + "    variants: {bad: {patch: {\"$.a\": 2}, json: {}}}\n", "t.yaml");
  REQUIRE_FALSE(patch_and_json.ok());
  CHECK(patch_and_json.status().ToString().rfind("t.yaml:6:29: action 'create_order' variant 'bad': give patch", 0) == 0);
  auto unknown_in_action = ParseTarget(order + "    variant: {}\n", "t.yaml");
  REQUIRE_FALSE(unknown_in_action.ok());
  CHECK(unknown_in_action.status().ToString().find("(did you mean 'variants'?)") != std::string::npos);
}

TEST_CASE("ApplyVariant changes one request template as declared") {
  const TargetDescription t = Target();
  const ActionDescription& a = t.actions.at("create_order");
  const RequestTemplate slow = *ApplyVariant(a.request, a.variants.at("slow"));
  CHECK(slow.query == HeaderList{{"slow_ms", "1500"}});
  CHECK(slow.path == "/orders?src=web");  // merged at render time
  const RequestTemplate patched = *ApplyVariant(a.request, a.variants.at("fails_retryably"));
  CHECK(patched.json->at("item") == nlohmann::json{{"sku", "flaky"}, {"qty", 1}, {"note", "{{run}}"}});
  CHECK(a.request.json->at("item").at("sku") == "a");  // the action itself is unchanged
  const RequestTemplate loud = *ApplyVariant(a.request, a.variants.at("loud"));
  CHECK(loud.headers == HeaderList{{"x-mode", "loud"}, {"X-Extra", "1"}});
  const RequestTemplate whole = *ApplyVariant(a.request, a.variants.at("whole"));
  CHECK(whole.json == nlohmann::json{{"biz", "{{biz}}"}, {"other", true}});
  const RequestTemplate raw = *ApplyVariant(a.request, a.variants.at("raw"));
  CHECK_FALSE(raw.json.has_value());
  CHECK(*raw.body == "biz={{biz}}");
  CHECK(raw.content_type == "application/x-www-form-urlencoded");
}

TEST_CASE("cause steps load, name the action they act on, and reject what cannot work") {
  auto s = Scenario_("steps:\n  - cause: retryable_failure\n  - wait: 1s\n  - send: create_order\n  - cause: heal\n");
  REQUIRE(s.ok());
  CHECK(s->steps[0].KindName() == "cause");
  CHECK(s->steps[0].Options<CauseOptions>().capability == "retryable_failure");
  CHECK(s->steps[0].Options<CauseOptions>().action == "create_order");
  CHECK(s->steps[3].Options<CauseOptions>().action.empty());  // heal needs no request after it
  auto typo = Scenario_("steps:\n  - cause: slow_reqest\n  - send: a\n");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().ToString().rfind(
            "s.yaml:4:12: step 'cause': unknown capability 'slow_reqest' (did you mean 'slow_request'?); known: ", 0) == 0);
  auto trailing = Scenario_("steps:\n  - send: a\n  - cause: slow_request\n");
  REQUIRE_FALSE(trailing.ok());
  CHECK(trailing.status().ToString() ==
        "s.yaml:5:5: step 'cause': no send or burst step follows for slow_request to act on");
}

TEST_CASE("the bind stage resolves a capability to a variant, else a hook, else not_applicable") {
  const TargetDescription t = Target();
  auto s = ParseScenario(kScenarioHead + R"(for_each:
  create: {role: create}
steps:
  - cause: retryable_failure
  - send: $create
  - cause: slow_request
  - send: $create
expect: [one_record]
)", "s.yaml", Vocab());
  REQUIRE(s.ok());
  auto bound = BindScenario(*s, t);
  REQUIRE(bound.size() == 2);
  const Scenario& order = bound[0].name == "s[create_order]" ? bound[0] : bound[1];
  const Scenario& note = bound[0].name == "s[create_order]" ? bound[1] : bound[0];
  // create_order: both by its variants.
  CHECK(order.steps[0].Options<CauseOptions>().resolved);
  CHECK(order.steps[0].Options<CauseOptions>().variant == "fails_retryably");
  CHECK(order.steps[0].Options<CauseOptions>().hook.empty());
  CHECK(order.steps[2].Options<CauseOptions>().variant == "slow");
  CHECK(CheckScenarioAgainstTarget(order, t).runnable());
  // create_note: retryable_failure by the hook; slow_request by nothing.
  CHECK(note.steps[0].Options<CauseOptions>().hook == "fail_next_retryable");
  CHECK(note.steps[0].Options<CauseOptions>().variant.empty());
  CHECK_FALSE(note.steps[2].Options<CauseOptions>().resolved);
  ScenarioFit fit = CheckScenarioAgainstTarget(note, t);
  CHECK(fit.errors.empty());
  CHECK(fit.needs == std::vector<std::string>{
                         "capability slow_request (the next request's business step is slow): a variant 'slow' of "
                         "action 'create_note' or a hook 'slow_business'"});
  // heal is always provided: by the hook when declared, else it only clears.
  auto heal = ResolveCapability("heal", "", t);
  REQUIRE(heal.ok());
  CHECK(heal->kind == CapabilityProvision::Kind::kNothing);
  CHECK_FALSE(ResolveCapability("teleport", "create_order", t).ok());
}

// Issue 31: a patch path through a scalar passed lint and aborted the run
// with an uncaught nlohmann::json::out_of_range (exit 134). Each patch is now
// applied to the action's body (and its other_payload's) when the file loads.
TEST_CASE("a variant patch that cannot apply to the action's body is a located error") {
  const std::string order = kHead + "actions:\n  create_order:\n    role: create\n"
                                    "    request: {method: POST, path: /o, json: {qty: 1, items: [{sku: a}], tags: []}}\n";
  auto through_scalar = ParseTarget(order + "    variants: {bad: {patch: {\"$.qty.deeper\": 5}}}\n", "t.yaml");
  REQUIRE_FALSE(through_scalar.ok());
  CHECK(through_scalar.status().code() == StatusCode::kInvalidConfig);
  CHECK(through_scalar.status().ToString() ==
        "t.yaml:7:30: action 'create_order' variant 'bad'.patch: '$.qty.deeper' cannot apply to the action's json "
        "body: $.qty is a number, not an object");
  // A member name into an array, an index into an object, an index through a string.
  CHECK(ParseTarget(order + "    variants: {bad: {patch: {\"$.items.sku\": 5}}}\n", "t.yaml")
            .status().ToString().find("'$.items.sku' cannot apply to the action's json body: $.items is an array, "
                                      "not an object") != std::string::npos);
  CHECK(ParseTarget(order + "    variants: {bad: {patch: {\"$.items[0].sku[1]\": 5}}}\n", "t.yaml")
            .status().ToString().find("$.items[0].sku is a string, not an array") != std::string::npos);
  // An earlier patch of the same variant makes a member a scalar: the next cannot go through it.
  CHECK(ParseTarget(order + "    variants: {bad: {patch: {\"$.n\": 1, \"$.n.m\": 2}}}\n", "t.yaml")
            .status().ToString().find("'$.n.m' cannot apply to the action's json body: $.n is a number") !=
        std::string::npos);
  // The other payload's body is patched too when the variant is sent with it.
  auto other = ParseTarget(order + "    other_payload: {json: {qty: {n: 2}, items: 3}}\n"
                                   "    variants: {bad: {patch: {\"$.items[0].sku\": 5}}}\n",
                           "t.yaml");
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().ToString().find("cannot apply to the other_payload's json body: $.items is a number") !=
        std::string::npos);

  // Still allowed: a missing member (created), an index past the end, a member of a null.
  auto fine = ParseTarget(order + "    variants:\n"
                                  "      a: {patch: {\"$.note.text\": x, \"$.items[3].sku\": b, \"$.tags[0]\": t}}\n"
                                  "      b: {patch: {\"$.qty\": {deeper: 5}, \"$.qty.deeper\": 6}}\n",
                          "t.yaml");
  INFO(fine.status().ToString());
  REQUIRE(fine.ok());
}

TEST_CASE("applying a patch that cannot apply returns an error value and leaves the body as it was") {
  const TargetDescription t = Target();
  RequestVariant v = t.actions.at("create_order").variants.at("fails_retryably");
  v.patch.emplace_back(*JsonPath::Parse("$.item.qty.deeper"), 5);  // after two that apply
  auto applied = ApplyVariant(t.actions.at("create_order").request, v);  // threw json::out_of_range before
  REQUIRE_FALSE(applied.ok());
  CHECK(applied.status().code() == StatusCode::kInvalidArgument);
  CHECK(applied.status().message() ==
        "variant 'fails_retryably'.patch: '$.item.qty.deeper' cannot apply to the json body: $.item.qty is a "
        "number, not an object");

  nlohmann::json body = {{"a", {1, 2}}, {"s", "x"}};
  const nlohmann::json before = body;
  CHECK_FALSE(JsonPath::Parse("$.s.t")->SetIn(body, 1).ok());
  CHECK_FALSE(JsonPath::Parse("$.a.b")->SetIn(body, 1).ok());
  CHECK_FALSE(JsonPath::Parse("$[0]")->SetIn(body, 1).ok());
  CHECK_FALSE(JsonPath::Parse("$.a[*]")->SetIn(body, 1).ok());
  CHECK_FALSE(JsonPath::Parse("$")->SetIn(body, 1).ok());
  CHECK(JsonPath::Parse("$.new.x[2000]")->SetIn(body, 1).message() ==
        "$.new.x has 0 element(s): setting [2000] would add more than 1024 nulls before it");
  CHECK(body == before);  // every failure left it whole
  REQUIRE(JsonPath::Parse("$.a[3]")->SetIn(body, 4).ok());
  REQUIRE(JsonPath::Parse("$.n.m[1]")->SetIn(body, true).ok());
  CHECK(body == nlohmann::json::parse(R"({"a": [1, 2, null, 4], "s": "x", "n": {"m": [null, true]}})"));
}
