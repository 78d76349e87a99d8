// The CI job summary (run --summary, $GITHUB_STEP_SUMMARY) and the JUnit
// testcase names CI lists (issue #34 item 6), over literal results.
#include <catch2/catch.hpp>

#include "reports/design_review/ci_summary.h"
#include "reports/junit.h"

using namespace idemproof;

namespace {

// Two bindings of one scenario, one violated, one holding; a row the tool
// could not run.
RunResults BoundRun() {
  RunResults r;
  r.run_id = "20261203-120000-s7";
  r.seed = 7;
  r.run_namespace = "ab12cd";
  r.target_name = "shop";
  r.target_file = "targets/shop.yaml";
  r.flaw = "empty-replay";
  ScenarioResult a;
  a.name = "double-submit[create_order]";
  a.bound_from = "double-submit";
  a.binding = {{"create", "create_order"}};
  a.file = "scenarios/client/double-submit.yaml";
  a.layer = "client";
  a.verdicts.push_back(Verdict::Valid("one_record", "1 record"));
  a.verdicts.push_back(Verdict::Invalid("identical_replay", "request #6 answered 200 {\"status\":\"duplicate\"} | <b>"));
  ScenarioResult b = a;
  b.name = "double-submit[create_cart]";
  b.binding = {{"create", "create_cart"}};
  b.verdicts = {Verdict::Valid("one_record", "1 record"), Verdict::Valid("identical_replay", "same answer")};
  ScenarioResult c;
  c.name = "stream-redelivery";
  c.layer = "queue";
  c.error = "broker unreachable";
  r.scenarios = {a, b, c};
  return r;
}

}  // namespace

TEST_CASE("the CI summary gives verdicts per layer, each violation's evidence and its reproduce command", "[ci]") {
  const std::string md = RenderCiSummary(BoundRun());
  INFO(md);
  CHECK(md.rfind("## idemproof: shop: VIOLATIONS (exit 1)\n", 0) == 0);
  CHECK(md.find("| client | 2 | 1 | 1 | 0 | 0 | 0 |") != std::string::npos);
  CHECK(md.find("| queue | 1 | 0 | 0 | 0 | 1 | 0 |") != std::string::npos);
  // The violated row: its binding, oracle and evidence (escaped: a '|' or a
  // tag from a target must not break the page), then how to rerun it.
  CHECK(md.find("#### double-submit\\[create\\_order\\] (client), binding create = create\\_order") != std::string::npos);
  CHECK(md.find("- **identical\\_replay**: request \\#6 answered 200 \\{\"status\":\"duplicate\"\\} \\| \\<b\\>") !=
        std::string::npos);
  CHECK(md.find("<b>") == std::string::npos);
  CHECK(md.find("```sh\nidemproof run scenarios/client/double-submit.yaml --target targets/shop.yaml --seed 7 "
                "--filter 'double-submit[create_order]' --flaw empty-replay\n```") != std::string::npos);
  // The row that held has no section; the one that could not run is undecided, with why.
  CHECK(md.find("create\\_cart\\] (client)") == std::string::npos);
  CHECK(md.find("### Undecided\n\n- stream-redelivery: broker unreachable") != std::string::npos);
}

TEST_CASE("the CI summary of a clean run says so and lists no violation, and long evidence is cut", "[ci]") {
  RunResults r = BoundRun();
  r.scenarios.resize(2);
  r.scenarios[0].verdicts[1] = Verdict::Valid("identical_replay", "same answer");
  std::string md = RenderCiSummary(r);
  CHECK(md.rfind("## idemproof: shop: every property holds (exit 0)\n", 0) == 0);
  CHECK(md.find("### Violations") == std::string::npos);
  r.scenarios[0].verdicts[1] = Verdict::Invalid("identical_replay", std::string(5000, 'x'));
  md = RenderCiSummary(r);
  CHECK(md.find(std::string(kCiEvidenceChars, 'x') + " … \\(" + std::to_string(5000 - kCiEvidenceChars) +
                " bytes more in the run directory\\)") != std::string::npos);
}

TEST_CASE("JUnit testcase names carry the row's binding and the run's shard", "[ci]") {
  RunResults r = BoundRun();
  std::string xml = RenderJUnit(r);
  // Two bindings of one oracle are two names, not one name twice.
  CHECK(xml.find("name=\"identical_replay [create=create_order]\"") != std::string::npos);
  CHECK(xml.find("name=\"identical_replay [create=create_cart]\"") != std::string::npos);
  CHECK(xml.find("<testcase classname=\"queue.stream-redelivery\" name=\"run\">") != std::string::npos);
  r.shard = ShardOfRun{Shard{2, 4}, 9, "0123456789abcdef"};
  xml = RenderJUnit(r);
  CHECK(xml.find("name=\"one_record [create=create_order] (shard 2/4)\"") != std::string::npos);
  CHECK(xml.find("name=\"run (shard 2/4)\"") != std::string::npos);
}
