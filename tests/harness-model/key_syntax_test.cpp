// The key's own syntax and the error format (issue 48 item 4): the
// malformed-key oracles and problem_details over hand-written histories,
// the target keys they read, and their rows in the ietf profile.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "literal_history.h"
#include "model/conformance.h"
#include "model/key_forms.h"
#include "model/profile.h"
#include "oracles/oracle.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

// A shop whose contract declares a longest key and problem+json errors.
constexpr const char* kDeclared = R"(
name: shop
base_url: "http://127.0.0.1:{{port}}"
idempotency:
  key_max_length: 64
  invalid_key: 400
errors: problem+json
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", qty: 1}}
    records: {request: {path: "/orders?biz_no={{biz}}"}, count: "$.count"}
)";

const TargetDescription& Declared() {
  static const TargetDescription t = [] {
    auto r = ParseTarget(kDeclared, "shop.yaml");
    if (!r.ok()) throw std::runtime_error(r.status().ToString());
    return *r;
  }();
  return t;
}

const Answer kCreated{201, R"({"id":1})"};
const Answer kProblem400{400, R"({"type":"urn:x:invalid-key","title":"Invalid key","status":400})",
                         {{"Content-Type", "application/problem+json"}}};

}  // namespace

TEST_CASE("the target file declares key_max_length, invalid_key and errors, each read as written") {
  CHECK(Declared().idempotency.key_max_length == 64);
  CHECK(Declared().idempotency.key_max_length_declared);
  CHECK(Declared().errors_problem_json);
  CHECK_FALSE(ShopTarget().idempotency.key_max_length_declared);  // 255 by default, not declared
  CHECK_FALSE(ShopTarget().errors_problem_json);
  CHECK(ShopTarget().idempotency.invalid_key == 400);

  std::string bad = kDeclared;
  bad.replace(bad.find("problem+json"), 12, "problem-json");
  auto r = ParseTarget(bad, "shop.yaml");
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  CHECK(r.status().ToString().find("shop.yaml:7:9") != std::string::npos);
  CHECK(r.status().message().find("errors must be problem+json or any, found 'problem-json'") != std::string::npos);
}

TEST_CASE("the malformed key forms: what is sent, and the oracle judging each") {
  CHECK(MalformedKey("empty", "idem-1-k1").empty());
  CHECK(MalformedKey("comma", "idem-1-k1") == "idem-1-k1,idem-1-k1");
  CHECK(MalformedKey("quote", "idem-1-k1") == "idem\"-1-k1");
  CHECK(MalformedKey("non_ascii", "idem-1-k1") == "idem-1-k1-\xc3\xa9");
  CHECK(MalformedKeyOracle("empty") == "empty_key_rejected");
  CHECK(MalformedKeyOracle("over_max_length") == "long_key_rejected");
  for (const char* form : {"comma", "quote", "non_ascii"}) CHECK(MalformedKeyOracle(form) == "key_syntax_rejected");
  CHECK_FALSE(IsMalformedKeyForm("max_length"));
}

TEST_CASE("empty_key_rejected: refused with the declared status holds, executed breaks the effect rule") {
  LiteralHistory refused;
  refused.KeyForm("empty").Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{400, "{}"});
  Verdict v = RunOracle("empty_key_rejected", refused.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("1 request(s) with a malformed key, answered 400 x1") != std::string::npos);

  LiteralHistory executed;
  executed.KeyForm("empty")
      .Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated)
      .Send("client-0", "create_order", "k1", "b1", 20, 30, Answer{201, R"({"id":2})"});
  v = RunOracle("empty_key_rejected", executed.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("with an empty key was executed: 201") != std::string::npos);
  CHECK(v.rule.id == "ietf/key-not-empty");
  CHECK(v.rule.level == "MUST");

  // Refused with another 4xx: only the status code is wrong, a SHOULD under ietf.
  LiteralHistory other_status;
  other_status.KeyForm("empty").Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{422, "{}"});
  v = RunOracle("empty_key_rejected", other_status.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.rule.id == "ietf/empty-key-status");
  CHECK(v.rule.level == "SHOULD");

  // Well-formed keys are no premise; another form is another oracle's.
  LiteralHistory none;
  none.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  none.KeyForm("comma").Send("client-1", "create_order", "k2", "b2", 0, 10, kCreated);
  CHECK(RunOracle("empty_key_rejected", none.history()).status == VerdictStatus::kUnknown);
  CHECK(RunOracle("key_syntax_rejected", none.history()).status == VerdictStatus::kInvalid);
}

TEST_CASE("long_key_rejected is not applicable without a declared key_max_length, judged with one") {
  LiteralHistory executed;
  executed.KeyForm("over_max_length").Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  Verdict na = RunOracle("long_key_rejected", executed.history());
  CHECK(na.status == VerdictStatus::kNotApplicable);
  CHECK(na.evidence.find("idempotency.key_max_length") != std::string::npos);
  Verdict v = RunOracle("long_key_rejected", executed.history(), Declared());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("(key_max_length: 64)") != std::string::npos);

  LiteralHistory refused;
  refused.KeyForm("over_max_length").Send("client-0", "create_order", "k1", "b1", 0, 10, kProblem400);
  CHECK(RunOracle("long_key_rejected", refused.history(), Declared()).status == VerdictStatus::kValid);
}

TEST_CASE("key_syntax_rejected judges the comma, quote and non-ASCII forms, a 401 set aside") {
  LiteralHistory h;
  h.KeyForm("comma").Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{400, "{}"});
  h.KeyForm("quote").Send("client-0", "create_order", "k2", "b2", 20, 30, Answer{400, "{}"});
  h.KeyForm("non_ascii").Send("client-0", "create_order", "k3", "b3", 40, 50, Answer{401, "{}"});
  Verdict v = RunOracle("key_syntax_rejected", h.history());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("2 request(s) with a malformed key, answered 400 x2") != std::string::npos);
  CHECK(v.evidence.find("refused by authentication") != std::string::npos);

  LiteralHistory executed;
  executed.KeyForm("non_ascii").Send("client-0", "create_order", "k3", "b3", 0, 10, kCreated);
  v = RunOracle("key_syntax_rejected", executed.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("a key with a non-ASCII character was executed") != std::string::npos);
  CHECK(v.rule.id == "ietf/key-is-sf-string");
}

TEST_CASE("one_record holds when every malformed key was refused with the declared status") {
  LiteralHistory h;
  // Sent twice (one_record's premise is a repeat), refused both times.
  h.KeyForm("empty")
      .Send("client-0", "create_order", "k1", "b1", 0, 10, kProblem400)
      .Send("client-0", "create_order", "k1", "b1", 12, 15, kProblem400)
      .Records("create_order", "b1", 0, 20);
  Verdict v = RunOracle("one_record", h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
}

TEST_CASE("problem_details: every 4xx is application/problem+json with RFC 9457 members of their types") {
  LiteralHistory ok;
  ok.Send("client-0", "create_order", "", "b1", 0, 10, kProblem400)
      .Send("client-0", "create_order", "k1", "b2", 20, 30, kCreated)
      .Send("client-0", "create_order", "k1", "b2", 40, 50,
            Answer{422, R"({"title":"reused"})", {{"Content-Type", "application/problem+json; charset=utf-8"}}});
  Verdict v = RunOracle("problem_details", ok.history(), Declared());
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("2 4xx answer(s) (400 x1, 422 x1)") != std::string::npos);
  // Undeclared, the error format is not judged.
  CHECK(RunOracle("problem_details", ok.history()).status == VerdictStatus::kNotApplicable);

  const std::vector<std::pair<Answer, std::string>> broken = {
      {Answer{400, "the key is missing", {{"Content-Type", "text/plain"}}}, "Content-Type text/plain (not application/problem+json)"},
      {Answer{400, "{}", {}}, "no Content-Type"},
      {Answer{400, "[1]", {{"Content-Type", "application/problem+json"}}}, "a body that is not a JSON object"},
      {Answer{400, R"({"type":7})", {{"Content-Type", "application/problem+json"}}}, "member \"type\" is not a string"},
      {Answer{400, R"({"status":"400"})", {{"Content-Type", "application/problem+json"}}}, "member \"status\" is not a number"},
      {Answer{400, R"({"status":422})", {{"Content-Type", "application/problem+json"}}},
       "member \"status\" is 422, the answer's status 400"},
  };
  for (const auto& [answer, why] : broken) {
    LiteralHistory h;
    h.Send("client-0", "create_order", "", "b1", 0, 10, answer);
    v = RunOracle("problem_details", h.history(), Declared());
    INFO(why);
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find(why) != std::string::npos);
      CHECK(v.rule.id == "ietf/problem-details");
  }

  LiteralHistory no_4xx;
  no_4xx.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(RunOracle("problem_details", no_4xx.history(), Declared()).status == VerdictStatus::kUnknown);
}

TEST_CASE("a target declaring errors: problem+json has problem_details judge every scenario that got a 4xx") {
  Scenario s;
  s.name = "literal";
  s.hunts = "test";
  OracleSpec one_record;
  one_record.name = "one_record";
  s.expect.push_back(one_record);
  LiteralHistory with_4xx;
  with_4xx.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "plain", {{"Content-Type", "text/plain"}}});
  auto verdicts = BuiltinOracles().CheckAll(s, Declared(), with_4xx.history());
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[1].oracle == "problem_details");
  CHECK(verdicts[1].status == VerdictStatus::kInvalid);
  // Undeclared, or no 4xx: nothing added.
  CHECK(BuiltinOracles().CheckAll(s, ShopTarget(), with_4xx.history()).size() == 1);
  LiteralHistory no_4xx;
  no_4xx.Send("client-0", "create_order", "k1", "b1", 0, 10, kCreated);
  CHECK(BuiltinOracles().CheckAll(s, Declared(), no_4xx.history()).size() == 1);
}

TEST_CASE("every profile lists the key-syntax and error-format rules, effect MUST and status SHOULD") {
  for (const auto& p : Profiles()) {
    INFO(p.name);
    for (const char* oracle : {"empty_key_rejected", "long_key_rejected", "key_syntax_rejected"}) {
      const ProfileRule* effect = p.RuleFor(oracle, false);
      const ProfileRule* status = p.RuleFor(oracle, true);
      REQUIRE(effect != nullptr);
      REQUIRE(status != nullptr);
      CHECK(effect->level == RuleLevel::kMust);
      CHECK(status->level == RuleLevel::kShould);
      CHECK(effect != status);
    }
    REQUIRE(p.RuleFor("problem_details", false) != nullptr);
  }
  CHECK(FindProfile("ietf")->RuleFor("key_syntax_rejected", false)->text.find("RFC 8941 sf-string") !=
        std::string::npos);
}
