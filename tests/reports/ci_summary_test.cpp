// The CI job summary (run --summary, $GITHUB_STEP_SUMMARY) and the JUnit
// testcase names CI lists (issue #34 item 6), over literal results.
#include <catch2/catch.hpp>

#include "reports/design_review/ci_summary.h"
#include "reports/junit.h"

#include <regex>
#include <sstream>

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
  // "#6" would link issue 6 on GitHub: a zero-width space (U+200B) breaks it.
  CHECK(md.find("- **identical\\_replay**: request \\#\xE2\x80\x8B" "6 answered 200 \\{\"status\":\"duplicate\"\\} \\| \\<b\\>") !=
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

// Issue 43: the summary passed U+202E, and @mentions, #123 and an escaped
// image URL stayed live on GitHub's page.
TEST_CASE("the CI summary leaves no bidi control, mention, reference or link of target text live", "[ci]") {
  const std::string hostile =
      "ok\u202Edesrever\u2066iso\u2069\u200E\u200F\u061C\u202A\u202B\u202C\u202D\u2067\u2068 "
      "@octocat cc @org/team #123 GH-45 gh-46 owner/repo#7 mail@evil.example "
      "https://evil.example/a.png HTTP://evil.example/b www.evil.example WWW.evil.example "
      "![img](https://evil.example/i.png) [link](http://evil.example) <img src=x> "
      "\\!\\[x\\]\\(https://evil.example/escaped.png\\) <https://evil.example/auto>";
  RunResults r = BoundRun();
  r.target_name = hostile;
  r.target_file = "targets/" + hostile + ".yaml";
  r.run_id = hostile;
  r.scenarios[0].name = "double-submit[" + hostile + "]";
  r.scenarios[0].layer = hostile;
  r.scenarios[0].binding = {{"create", hostile}};
  r.scenarios[0].verdicts[1] = Verdict::Invalid("identical_replay", hostile);
  r.scenarios[2].error = hostile;
  const std::string md = RenderCiSummary(r);
  INFO(md);
  REQUIRE(md.find("evil") != std::string::npos);  // the text is there, made inert
  // No bidirectional control anywhere, code blocks included (U+FFFD instead).
  for (const char* bidi : {"\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068",
                           "\u2069", "\u200E", "\u200F", "\u061C"})
    CHECK(md.find(bidi) == std::string::npos);
  // Outside code blocks (which GitHub never links) nothing GitHub links by itself.
  std::string text;
  bool fenced = false;
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    else if (!fenced) text += line + "\n";
  }
  auto live = [&](const char* pattern) { return std::regex_search(text, std::regex(pattern, std::regex::icase)); };
  CHECK_FALSE(live("@[a-z0-9]"));        // @mentions, team mentions, e-mail autolinks
  CHECK_FALSE(live("#[0-9]"));           // #123, owner/repo#7
  CHECK_FALSE(live("gh-[0-9]"));         // GH-45
  CHECK_FALSE(live("[a-z]://"));         // bare links of any scheme
  CHECK_FALSE(live("www\\."));           // www. autolinks
  // Image, link, autolink and tag syntax: each character escaped.
  for (const char* syntax : {"(^|[^\\\\])!\\[", "(^|[^\\\\])\\]\\(", "(^|[^\\\\])<img", "(^|[^\\\\])<https"})
    CHECK_FALSE(live(syntax));
  CHECK(md.find("@\xE2\x80\x8Boctocat") != std::string::npos);  // still readable, broken by U+200B
}
