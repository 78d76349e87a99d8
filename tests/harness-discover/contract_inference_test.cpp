// `discover`'s inference over recorded answers (no server): each line of the
// contract from hand-made answers as a correct service and as flawed ones
// would give them, and the diff against a target file's declarations.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "discover/contract_inference.h"
#include "discover/discoverer.h"
#include "model/target.h"

using namespace idemproof;
using namespace idemproof::discover;

namespace {

TargetDescription Target(const std::string& idempotency, const std::string& extra = "") {
  const std::string yaml =
      "name: t\nbase_url: http://127.0.0.1:1\nidempotency:\n" + idempotency + extra +
      "actions:\n"
      "  create:\n"
      "    role: create\n"
      "    request: {method: POST, path: /things, json: {biz: \"{{biz}}\", n: 1}}\n"
      "    other_payload: {json: {biz: \"{{biz}}\", n: 2}}\n"
      "    variants: {slow: {query: {slow_ms: \"1500\"}}}\n";
  auto t = ParseTarget(yaml, "t.yaml");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return std::move(t).value();
}

const std::string kDeclared =
    "  key_header: Idempotency-Key\n"
    "  replay: {header: Idempotent-Replayed, value: \"true\"}\n"
    "  in_progress: 409\n"
    "  mismatch: 422\n"
    "  missing_key: 400\n"
    "  retry_after: required\n";

const std::string kNoMarker = "  key_header: Idempotency-Key\n";

ProbeAnswer Answer(ProbeKind kind, int status, HeaderList headers, std::string body, std::string key = "d1k1") {
  ProbeAnswer a;
  a.action = "create";
  a.kind = kind;
  a.request = "POST /things";
  a.key_name = std::move(key);
  a.payload = kind == ProbeKind::kChanged ? "other" : "default";
  a.status = status;
  a.headers = std::move(headers);
  a.body = std::move(body);
  return a;
}

// What a correct service of kDeclared answers; `flaw` changes one answer.
std::vector<ProbeAnswer> Correct(const std::string& flaw = "") {
  const HeaderList plain = {{"Content-Type", "application/json"}, {"Location", "/things/7"}, {"Date", "x"}};
  HeaderList replayed = {{"Content-Type", "application/json"}, {"Location", "/things/7"}, {"Date", "y"},
                         {"Idempotent-Replayed", "true"}};
  if (flaw == "no-marker") replayed.pop_back();
  std::vector<ProbeAnswer> out = {
      Answer(ProbeKind::kFirst, 201, plain, R"({"id": 7, "n": 1})"),
      Answer(ProbeKind::kReplay, 201, replayed, flaw == "new-id" ? R"({"id": 8, "n": 1})" : R"({"id": 7, "n": 1})"),
      flaw == "no-fingerprint" ? Answer(ProbeKind::kChanged, 201, replayed, R"({"id": 7, "n": 1})")
                               : Answer(ProbeKind::kChanged, 422, {{"Content-Type", "application/json"}}, "{}"),
      flaw == "keyless-executes" ? Answer(ProbeKind::kKeyless, 201, plain, R"({"id": 9, "n": 1})", "none")
                                 : Answer(ProbeKind::kKeyless, 400, {}, "{}", "none"),
      Answer(ProbeKind::kSlowFirst, 201, plain, R"({"id": 10, "n": 1})", "d1k3"),
      flaw == "waits" ? Answer(ProbeKind::kConcurrent, 201, replayed, R"({"id": 10, "n": 1})", "d1k3")
                      : Answer(ProbeKind::kConcurrent, 409, {{"Retry-After", "1"}}, "{}", "d1k3"),
  };
  return out;
}

}  // namespace

TEST_CASE("a correct service's answers give the declared contract, no difference", "[discover]") {
  const Proposal p = InferContract(Correct(), Target(kDeclared, "compare_headers: [Content-Type, Location]\n"));
  INFO(ProposalText(p));
  REQUIRE(p.undecided.empty());
  CHECK(p.Differences() == 0);
  CHECK(p.Find("replay")->decided);
  CHECK(p.Find("replay")->proposed == R"({header: Idempotent-Replayed, value: "true"})");
  CHECK(p.Find("mismatch")->proposed == "422");
  CHECK(p.Find("in_progress")->proposed == "409");
  CHECK(p.Find("retry_after")->proposed == "required");
  CHECK(p.Find("key")->proposed == "required");
  CHECK(p.Find("missing_key")->proposed == "400");
  CHECK(p.Find("compare_headers")->proposed == "[Content-Type, Location]");
  CHECK(p.Find("replay_equal")->proposed == "true");
}

TEST_CASE("a file that declares other statuses than the service answers gets a - and a + line each", "[discover]") {
  const Proposal p = InferContract(Correct(), Target("  in_progress: 425\n  mismatch: 409\n  missing_key: 428\n"));
  const std::string text = ProposalText(p);
  INFO(text);
  CHECK(p.Find("mismatch")->differs);
  CHECK(p.Find("in_progress")->differs);
  CHECK(p.Find("missing_key")->differs);
  CHECK(text.find("-  mismatch: 409") != std::string::npos);
  CHECK(text.find("+  mismatch: 422   # seen:") != std::string::npos);
  // Undeclared marker and Retry-After, seen on the service: proposed.
  CHECK(p.Find("replay")->differs);
  CHECK(p.Find("retry_after")->proposed == "recommended");
}

TEST_CASE("a replay marker in the body is found when no header tells the replay apart", "[discover]") {
  std::vector<ProbeAnswer> answers = Correct("no-marker");
  answers[0].body = R"({"id": 7, "n": 1, "meta": {}})";
  answers[1].body = R"({"id": 7, "n": 1, "meta": {"replayed": true}})";
  const Proposal p = InferContract(answers, Target("  replay: {body: \"$.meta.replayed\", value: \"true\"}\n"));
  INFO(ProposalText(p));
  CHECK(p.Find("replay")->proposed == R"({body: "$.meta.replayed", value: "true"})");
  CHECK_FALSE(p.Find("replay")->differs);
  CHECK(p.Find("replay_equal")->proposed == "true");  // the marker member is left out of the comparison
}

TEST_CASE("a dropped replay marker, a skipped mismatch check and an executed keyless request are differences",
          "[discover]") {
  const TargetDescription t = Target(kDeclared, "compare_headers: [Content-Type, Location]\n");
  SECTION("no marker") {
    const Proposal p = InferContract(Correct("no-marker"), t);
    INFO(ProposalText(p));
    CHECK(p.Find("replay")->differs);
    CHECK(p.Find("replay")->proposed.empty());
    CHECK(p.Differences() == 1);
  }
  SECTION("no fingerprint") {
    const Proposal p = InferContract(Correct("no-fingerprint"), t);
    INFO(ProposalText(p));
    CHECK(p.Find("mismatch")->differs);
    CHECK(p.Find("mismatch")->comment.find("no refusal seen") != std::string::npos);
  }
  SECTION("keyless executes") {
    const Proposal p = InferContract(Correct("keyless-executes"), t);
    INFO(ProposalText(p));
    CHECK(p.Find("key")->proposed == "optional");
    CHECK(p.Find("key")->differs);
  }
  SECTION("the duplicate waits") {
    const Proposal p = InferContract(Correct("waits"), t);
    INFO(ProposalText(p));
    CHECK(p.Find("in_progress")->differs);
    CHECK_FALSE(p.Find("retry_after")->decided);
  }
  SECTION("a Retry-After shorter than the min") {
    std::vector<ProbeAnswer> answers = Correct();
    answers[5].headers = {{"Retry-After", "0"}};
    const Proposal p = InferContract(answers, t);
    INFO(ProposalText(p));
    CHECK(p.Find("retry_after")->differs);
    CHECK(p.Find("retry_after")->comment.find("Retry-After: 0, shorter than the min 1s") != std::string::npos);
  }
  SECTION("a replay that executed again") {
    const Proposal p = InferContract(Correct("new-id"), t);
    INFO(ProposalText(p));
    CHECK(p.Find("replay_equal")->differs);
    CHECK(p.Find("replay_equal")->comment.find("body differs") != std::string::npos);
  }
}

TEST_CASE("a per-request header is no replay marker, and nothing answered is undecided", "[discover]") {
  std::vector<ProbeAnswer> answers = Correct("no-marker");
  answers[0].headers.push_back({"X-Request-Id", "a"});
  answers[1].headers.push_back({"X-Request-Id", "b"});
  answers[4].headers.push_back({"X-Request-Id", "b"});  // another first answer (the slow one) with the replay's value
  const Proposal p = InferContract(answers, Target(kNoMarker));
  INFO(ProposalText(p));
  CHECK(p.Find("replay")->proposed.empty());
  CHECK_FALSE(p.Find("replay")->differs);  // the file declares none either

  std::vector<ProbeAnswer> silent = {Answer(ProbeKind::kFirst, 0, {}, "")};
  CHECK_FALSE(InferContract(silent, Target(kNoMarker)).undecided.empty());
  CHECK_FALSE(InferContract({}, Target(kNoMarker)).undecided.empty());
}

TEST_CASE("the probe plan stays within its bounds and leaves callbacks out", "[discover]") {
  auto t = LoadTargetFile(std::string(IDEMPROOF_SOURCE_DIR) + "/scenarios/targets/reference.yaml");
  REQUIRE(t.ok());
  const ProbePlan plan = PlanProbes(*t);
  CHECK(plan.requests <= kMostRequests);
  CHECK(plan.probed.front() == "create_order");
  CHECK(std::find(plan.probed.begin(), plan.probed.end(), "payment_paid") == plan.probed.end());
  bool callback_named = false;
  for (const auto& why : plan.left_out) callback_named |= why.rfind("payment_paid: role callback", 0) == 0;
  CHECK(callback_named);
  const std::string yaml = ProbeScenarioYaml(plan);
  CHECK(yaml.find("payload: other") != std::string::npos);
  CHECK(yaml.find("key: none") != std::string::npos);
  CHECK(yaml.find("cause: slow_request") != std::string::npos);

  // No slow variant: the hook providing slow_request, whatever its name, then healed.
  for (const char* file : {"foreign-python.yaml", "reference-renamed.yaml"}) {
    auto other = LoadTargetFile(std::string(IDEMPROOF_SOURCE_DIR) + "/scenarios/targets/" + file);
    REQUIRE(other.ok());
    const ProbePlan by_hook = PlanProbes(*other);
    INFO(file);
    CHECK(by_hook.requests <= kMostRequests);
    CHECK(ProbeScenarioYaml(by_hook).find("cause: heal") != std::string::npos);
  }
}

TEST_CASE("the key is judged on the creates: a keyless PUT that executes is a note, not optional", "[discover]") {
  auto t = ParseTarget(
      "name: t\nbase_url: http://127.0.0.1:1\nidempotency: {missing_key: 400}\n"
      "actions:\n"
      "  create: {role: create, request: {method: POST, path: /things, json: {n: 1}}}\n"
      "  update: {role: put, of: create, request: {method: PUT, path: /things/1, json: {n: 2}}}\n",
      "t.yaml");
  REQUIRE(t.ok());
  std::vector<ProbeAnswer> answers = Correct();
  ProbeAnswer put = Answer(ProbeKind::kKeyless, 200, {}, "{}", "none");
  put.action = "update";
  put.request = "PUT /things/1";
  answers.push_back(put);
  const Proposal p = InferContract(answers, *t);
  INFO(ProposalText(p));
  CHECK(p.Find("key")->proposed == "required");
  CHECK_FALSE(p.Find("key")->differs);
  CHECK(p.Find("missing_key")->proposed == "400");
  REQUIRE(p.notes.size() == 1);
  CHECK(p.notes.front().find("update keyless: PUT /things/1 no key -> 200") != std::string::npos);

  // An unkeyed PUT re-executed: its replay carries no marker and it takes
  // another body; the creates still decide the marker and the mismatch.
  for (ProbeKind kind : {ProbeKind::kFirst, ProbeKind::kReplay, ProbeKind::kChanged}) {
    ProbeAnswer again = Answer(kind, 200, {{"Content-Type", "application/json"}}, R"({"n": 2})");
    again.action = "update";
    answers.push_back(again);
  }
  const Proposal q = InferContract(answers, *t);
  INFO(ProposalText(q));
  CHECK(q.Find("replay")->proposed == R"({header: Idempotent-Replayed, value: "true"})");
  CHECK(q.Find("mismatch")->proposed == "422");
  CHECK(q.notes.size() == 3);
}
