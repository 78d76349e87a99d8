// The conformance table (model/conformance.h): one row per rule of the run's
// profile, derived from the verdicts, and the same table on every surface
// (report.html, report.md, the CI summary, results.json, the console).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "model/conformance.h"
#include "model/finding.h"
#include "model/profile.h"
#include "report_files.h"
#include "reports/design_review/ci_summary.h"
#include "reports/design_review/html_report.h"
#include "reports/design_review/markdown_report.h"
#include "reports/design_review/run_review.h"
#include "model/results_json.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

RunDirectoryContents Read(const std::string& run) {
  auto contents = ReadRunDirectory(DataRun(run).string());
  REQUIRE(contents.ok());
  return std::move(contents).value();
}

const ConformanceRow& RowOf(const ConformanceTable& table, const std::string& rule) {
  for (const auto& row : table.rows)
    if (row.rule == rule) return row;
  FAIL("no row for rule " << rule);
  throw std::logic_error("unreachable");
}

std::vector<std::string> Names(const RunResults& r, const std::vector<std::size_t>& rows) {
  std::vector<std::string> out;
  for (std::size_t i : rows) out.push_back(r.scenarios[i].name);
  return out;
}

// A verdict with one finding; `status_only` tags it "rule": "status" as the
// oracles do for a finding only about the status code.
Verdict InvalidWithFinding(const std::string& oracle, bool status_only) {
  Finding f = MakeFinding("answered 200, expected 422", {{"key", "k1"}});
  if (status_only) f.rule = "status";
  return Verdict::Invalid(oracle, "answered 200", VerdictDetails::OfFindings({f}));
}

}  // namespace

TEST_CASE("the conformance table of the reference's clean results lists every rule of each profile once",
          "[conformance]") {
  for (const SemanticsProfile& profile : Profiles()) {
    SECTION(profile.name) {
      RunResults r = Read("clean").results;
      r.profile = profile.name;
      const ConformanceTable table = Conformance(r);
      REQUIRE(table.known_profile);
      std::size_t rules = 0;
      for (const auto& [oracle, rule] : profile.rules) rules += rule.status ? 2 : 1;
      CHECK(table.rows.size() == rules);
      std::set<std::string> ids;
      for (const auto& row : table.rows) {
        INFO(row.rule);
        CHECK(row.rule.rfind(profile.name + "/", 0) == 0);
        CHECK(ids.insert(row.rule).second);
        CHECK(row.state != ConformanceState::kBroken);
      }
      const ConformanceRow& once = RowOf(table, profile.name + "/one-execution");
      CHECK(once.state == ConformanceState::kHeld);
      CHECK(Names(r, once.held) == std::vector<std::string>{"double-submit", "identical-burst",
                                                            "retry-inside-window", "resubmit-after-restart"});
      // Nothing in the run sent a changed request: not tested, and why.
      const ConformanceRow& mismatch = RowOf(table, profile.name + "/changed-request-refused");
      CHECK(mismatch.state == ConformanceState::kNotTested);
      CHECK(mismatch.why_not == std::vector<std::string>{"no scenario of the run applies mismatch_rejected"});
      // A held oracle holds its status rule too (in_progress's; identical_replay's
      // JSON equivalence where the profile states one).
      CHECK(table.Count(ConformanceState::kHeld) == 4 + (profile.rules.at("in_progress").status ? 1 : 0) +
                                                        (profile.rules.at("identical_replay").status ? 1 : 0));
    }
  }
}

TEST_CASE("the conformance table of a flawed run shows each broken rule with its scenarios", "[conformance]") {
  const RunResults r = Read("broken").results;  // check-then-insert
  const ConformanceTable table = Conformance(r);
  const ConformanceRow& once = RowOf(table, "ietf/one-execution");
  CHECK(once.state == ConformanceState::kBroken);
  CHECK(once.level == "MUST");
  CHECK(Names(r, once.broken) == std::vector<std::string>{"double-submit", "identical-burst", "resubmit-after-restart"});
  CHECK(Names(r, once.held) == std::vector<std::string>{"retry-inside-window", "charge-after-kill"});
  CHECK(RowOf(table, "ietf/same-answer").state == ConformanceState::kBroken);
  CHECK(Names(r, RowOf(table, "ietf/one-concurrent-execution").broken) == std::vector<std::string>{"identical-burst"});
  // Held in one row, unknown in another: undecided, never held.
  CHECK(RowOf(table, "ietf/replay-has-record").state == ConformanceState::kUndecided);
  CHECK(once.EvidenceText(r) == "broken in 3 rows: double-submit, identical-burst, resubmit-after-restart");
  CHECK(once.EvidenceText(r, 1) == "broken in 3 rows: double-submit (+2 more)");
}

TEST_CASE("a finding only about the status code breaks the status rule and holds the effect rule",
          "[conformance]") {
  RunResults r;
  r.profile = "ietf";
  ScenarioResult s;
  s.name = "key-reused-other-body";
  s.layer = "client";
  s.verdicts = {InvalidWithFinding("mismatch_rejected", true)};
  r.scenarios = {s};
  ConformanceTable table = Conformance(r);
  CHECK(RowOf(table, "ietf/mismatch-status").state == ConformanceState::kBroken);
  CHECK(RowOf(table, "ietf/mismatch-status").level == "SHOULD");
  CHECK(RowOf(table, "ietf/changed-request-refused").state == ConformanceState::kHeld);

  // The effect finding breaks the effect rule and says nothing of the status.
  r.scenarios[0].verdicts = {InvalidWithFinding("mismatch_rejected", false)};
  table = Conformance(r);
  CHECK(RowOf(table, "ietf/changed-request-refused").state == ConformanceState::kBroken);
  CHECK(RowOf(table, "ietf/mismatch-status").state == ConformanceState::kNotTested);

  // stripe-v1 has no missing-key status rule: the status finding breaks the effect rule.
  r.profile = "stripe-v1";
  r.scenarios[0].verdicts = {InvalidWithFinding("missing_key_rejected", true)};
  table = Conformance(r);
  CHECK(RowOf(table, "stripe-v1/key-required").state == ConformanceState::kBroken);
  for (const auto& row : table.rows) CHECK(row.rule != "stripe-v1/missing-key-status");

  // Not applicable everywhere: not tested, with what the target lacked, said once.
  Verdict na = Verdict::NotApplicable("window", "no window declared", VerdictDetails::OfNeeds({"idempotency.window"}));
  r.scenarios[0].verdicts = {na, na};
  table = Conformance(r);
  CHECK(RowOf(table, "stripe-v1/window-honoured").state == ConformanceState::kNotTested);
  CHECK(RowOf(table, "stripe-v1/window-honoured").why_not == std::vector<std::string>{"needs idempotency.window"});

  r.profile = "no-such-profile";
  CHECK_FALSE(Conformance(r).known_profile);
  CHECK(ConformanceConsoleText(Conformance(r), r) == "conformance: profile no-such-profile is not known to this build\n");
}

TEST_CASE("every surface renders the same conformance table", "[conformance]") {
  const RunDirectoryContents contents = Read("broken");
  const RunResults& r = contents.results;
  const RunReview review = ReviewRun(contents);

  const std::string html = RenderHtmlReport(contents, review);
  CHECK(html.find("<section id=\"conformance\"><h2>Conformance to profile ietf</h2>") != std::string::npos);
  CHECK(html.find("<tr class=\"broken\" data-rule=\"ietf/one-execution\">") != std::string::npos);
  CHECK(html.find("<a href=\"#s-1-double-submit\">double-submit</a>") != std::string::npos);

  const std::string md = RenderMarkdownReport(contents, review, "report-timelines").markdown;
  CHECK(md.find("## Conformance to profile ietf") != std::string::npos);
  CHECK(md.find("| `ietf/one-execution` | MUST | **broken** | broken in 3 rows: double-submit, identical-burst, "
                "resubmit-after-restart | a key executes its action once per window") != std::string::npos);

  const std::string ci = RenderCiSummary(r);
  CHECK(ci.find("<summary>Conformance to ietf: ") != std::string::npos);
  CHECK(ci.find("| `ietf/one-execution` | MUST | broken | broken in 3 rows:") != std::string::npos);

  const nlohmann::json doc = RunResultsToJson(r);
  REQUIRE(doc.contains("conformance"));
  bool found = false;
  for (const auto& row : doc["conformance"]) {
    if (row["rule"] != "ietf/one-execution") continue;
    found = true;
    CHECK(row["state"] == "broken");
    CHECK(row["broken"] == nlohmann::json::array({"double-submit", "identical-burst", "resubmit-after-restart"}));
  }
  CHECK(found);

  const std::string console = ConformanceConsoleText(Conformance(r), r);
  INFO(console);
  CHECK(console.rfind("conformance to profile ietf: ", 0) == 0);
  CHECK(console.find("\nbroken     MUST   ietf/one-execution") != std::string::npos);
}
