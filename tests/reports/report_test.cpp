// What the reports say and how they escape, checked on the literal runs in
// data/ and on small inputs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <sstream>

#include "model/finding.h"
#include "report_files.h"
#include "reports/design_review/design_reports.h"
#include "reports/design_review/html_report.h"
#include "reports/design_review/markdown_escape.h"
#include "reports/design_review/markdown_report.h"
#include "reports/design_review/run_review.h"
#include "reports/design_review/timeline_svg.h"
#include "model/results_json.h"
#include "reports/markup_escape.h"

using namespace idemproof;
using namespace idemproof::testing;
namespace fs = std::filesystem;

namespace {

RunDirectoryContents Read(const std::string& run) {
  auto contents = ReadRunDirectory(DataRun(run).string());
  REQUIRE(contents.ok());
  return std::move(contents).value();
}

const LayerRow& Row(const RunReview& review, Layer layer) {
  for (const auto& row : review.layers)
    if (row.layer == layer) return row;
  FAIL("no row for layer " << LayerName(layer));
  throw std::logic_error("unreachable");
}

// Table cells of a Markdown table line: splits on '|' not escaped by '\'.
int MarkdownColumns(const std::string& line) {
  int bars = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
  return bars - 1;
}

}  // namespace

TEST_CASE("MarkdownEscape neutralises markup and table breakers", "[markdown]") {
  CHECK(MarkdownEscape("a|b") == "a\\|b");
  CHECK(MarkdownEscape("`code`") == "\\`code\\`");
  CHECK(MarkdownEscape("<script>x</script>") == "\\<script\\>x\\</script\\>");
  CHECK(MarkdownEscape("a & b \"q\" 'x'") == "a \\& b \"q\" 'x'");  // no entities
  CHECK(MarkdownEscape("&quot;") == "\\&quot;");  // a literal entity from the run stays literal
  CHECK(MarkdownEscape("line\nbreak") == "line break");
  CHECK(MarkdownEscape("[x](javascript:y)") == "\\[x\\]\\(javascript:y\\)");
  CHECK(MarkdownEscape("- item") == "\\- item");
  CHECK(MarkdownEscape("12. item") == "12\\. item");
  CHECK(MarkdownEscape("bad \xff byte") == "bad \xEF\xBF\xBD byte");
}

TEST_CASE("MarkdownFence cannot be closed from inside", "[markdown]") {
  const std::string text = "```\nclosed?\n````\n";
  const std::string fence = MarkdownFence(text, "http");
  CHECK(fence.rfind("`````http\n", 0) == 0);
  CHECK(fence.substr(fence.size() - 6) == "`````\n");
  CHECK(fence.find(text) != std::string::npos);  // literal, no entities
  CHECK(MarkdownFence("a < b & c").find("a < b & c") != std::string::npos);
}

TEST_CASE("anchors are stable and safe, repro commands are shell-quoted", "[review]") {
  CHECK(ScenarioAnchor(0, "double-submit") == "s-1-double-submit");
  CHECK(ScenarioAnchor(4, "\"><img src=x>") == "s-5-img-src-x");
  CHECK(ScenarioAnchor(2, "<<>>") == "s-3");
  RunResults r;
  r.seed = 42;
  r.target_file = "scenarios/targets/reference.yaml";
  r.flaw = "check-then-insert";
  ScenarioResult s;
  s.name = "it's $(rm -rf /)";
  s.file = "scenarios/client/double-submit.yaml";
  CHECK(ReproCommand(r, s) ==
        "idemproof run scenarios/client/double-submit.yaml --target scenarios/targets/reference.yaml --seed 42 "
        "--filter 'it'\\''s $(rm -rf /)' --flaw check-then-insert");
}

TEST_CASE("the review of a broken run names the broken layers from the evidence", "[review]") {
  const RunDirectoryContents contents = Read("broken");
  const RunReview review = ReviewRun(contents);
  CHECK(review.headline == "Broken: client, gateway / network, concurrency");
  CHECK(Row(review, Layer::kClient).state == LayerState::kBroken);
  CHECK(Row(review, Layer::kGateway).state == LayerState::kBroken);
  CHECK(Row(review, Layer::kGateway).broken == 1);
  CHECK(Row(review, Layer::kGateway).held == 1);
  CHECK(Row(review, Layer::kConcurrency).state == LayerState::kBroken);
  CHECK(Row(review, Layer::kSideEffect).state == LayerState::kHeld);
  CHECK(Row(review, Layer::kQueue).state == LayerState::kNotTested);
  CHECK(Row(review, Layer::kBatch).state == LayerState::kNotTested);
  CHECK(review.exit_code == 1);

  // Observations come from the histories.
  const LayerRow& concurrency = Row(review, Layer::kConcurrency);
  CHECK(concurrency.concurrency_guard.find("3 overlapping duplicates") != std::string::npos);
  CHECK(concurrency.concurrency_guard.find("409 (in progress) \u00d72") != std::string::npos);
  const LayerRow& side = Row(review, Layer::kSideEffect);
  CHECK(side.reconciliation.find("kill") != std::string::npos);
  CHECK(side.reconciliation.find("records per business id: 1") != std::string::npos);
  CHECK(Row(review, Layer::kClient).key_observed.find("Idempotency-Key on 2/2 requests") != std::string::npos);
  CHECK(Row(review, Layer::kClient).store_window.find("window 4s") != std::string::npos);

  // The double submit's evidence: both answers, the record count.
  const ScenarioReview& ds = review.scenarios.at(0);
  REQUIRE(ds.result->name == "double-submit");
  CHECK(ds.outcome == VerdictStatus::kInvalid);
  CHECK(ds.what_broke.rfind("The client layer broke on one_record: 2 records", 0) == 0);
  REQUIRE(ds.violations.size() == 2);
  CHECK(ds.violations[0].records == 2);
  CHECK(ds.violations[0].expected_records == "1");
  const ViolationView& replay = ds.violations[1];
  REQUIRE(replay.answers.size() == 2);
  CHECK(replay.answers[0].role == "first");
  CHECK(replay.answers[1].role == "replay");
  CHECK(replay.answers[0].body.find("\"id\": 7") != std::string::npos);
  CHECK(replay.answers[1].body.find("\"id\": 8") != std::string::npos);
  CHECK(ds.highlighted.count(0) == 1);
  CHECK(ds.highlighted.count(2) == 1);
  CHECK(ds.repro_command.find("--seed 42 --filter double-submit --flaw check-then-insert") != std::string::npos);

  // Burst spread from the runtime's burst note (1000..2300 us at the target).
  const ScenarioReview& burst = review.scenarios.at(1);
  REQUIRE(burst.burst_spreads.size() == 1);
  REQUIRE(burst.burst_spreads[0].target_ns);
  CHECK(*burst.burst_spreads[0].target_ns == 1300000);
  CHECK_FALSE(burst.burst_spreads[0].harness_ns);
  CHECK(burst.burst_spreads[0].arrival_header == "X-Arrival-Ns");

  // The zero-count fault is flagged.
  bool flagged = false;
  for (const auto& f : review.faults) flagged = flagged || (f.name == "kill-after-charge" && f.injected == 0);
  CHECK(flagged);
  CHECK(std::any_of(review.warnings.begin(), review.warnings.end(),
                    [](const std::string& w) { return w.find("injected 0 times") != std::string::npos; }));

  // Each finding names its rule; each property its premise, flagged where it never occurred.
  CHECK(ds.what_broke.find("Rule ietf/one-execution (MUST): a key executes its action once") != std::string::npos);
  auto premise = [&](const std::string& oracle) {
    auto it = std::find_if(review.premises.begin(), review.premises.end(),
                           [&](const PremiseTotal& p) { return p.oracle == oracle; });
    REQUIRE(it != review.premises.end());
    return *it;
  };
  CHECK(premise("in_progress").count == 7);
  CHECK(premise("in_progress").what == "overlapping duplicates");
  CHECK(premise("in_progress").unreached.empty());
  CHECK(premise("no_false_dedup").unreached == std::vector<std::string>{"double-submit"});
  CHECK(premise("no_false_dedup").scenarios == 2);
  const std::string md = RenderMarkdownReport(contents, review, "t").markdown;
  CHECK(md.find("profile **ietf**") != std::string::npos);
  CHECK(md.find("| in\\_progress | overlapping duplicates | 7 | 1 | \u2014 |") != std::string::npos);
  CHECK(md.find("| no\\_false\\_dedup | replay-marked answers | 1 | 2 | \u26a0 double-submit |") != std::string::npos);
}

TEST_CASE("the review of a clean run holds every tested layer", "[review]") {
  const RunReview review = ReviewRun(Read("clean"));
  CHECK(review.headline == "Held: client, gateway / network, concurrency");
  for (const auto& s : review.scenarios) CHECK(s.outcome == VerdictStatus::kValid);
  CHECK(review.exit_code == 0);
}

// A run that checked no certificate must not read like one that did, on
// either page (results.json's target.tls_verification "off").
TEST_CASE("both reports say TLS verification was off, and only then", "[review][tls]") {
  RunDirectoryContents contents = Read("clean");
  for (const bool off : {false, true}) {
    contents.results.tls_unverified = off;
    const RunReview review = ReviewRun(contents);
    const std::string html = RenderHtmlReport(contents, review);
    const std::string md = RenderMarkdownReport(contents, review, "t").markdown;
    INFO("tls_unverified " << off);
    CHECK((html.find("TLS verification was off") != std::string::npos) == off);
    CHECK((html.find("class=\"tls-off\"") != std::string::npos) == off);
    CHECK((md.find("TLS verification was off") != std::string::npos) == off);
  }
  // A service or an egress whose certificate went unchecked is named, the
  // target's own verification being on; results.json keeps them.
  contents.results.tls_unverified = false;
  contents.results.tls_unverified_peers = {"egress stub"};
  const RunReview review = ReviewRun(contents);
  const std::string html = RenderHtmlReport(contents, review);
  const std::string md = RenderMarkdownReport(contents, review, "t").markdown;
  CHECK(html.find("TLS verification was off for egress stub") != std::string::npos);
  CHECK(md.find("TLS verification was off for egress stub") != std::string::npos);
  auto back = RunResultsFromJson(RunResultsToJson(contents.results));
  REQUIRE(back.ok());
  CHECK(back->tls_unverified_peers == std::vector<std::string>{"egress stub"});
  CHECK_FALSE(back->tls_unverified);
}

namespace {

ScenarioResult FamilyRowResult(const std::string& family, std::map<std::string, std::string> binding,
                               Verdict verdict) {
  ScenarioResult s;
  s.bound_from = binding.empty() ? "" : family;
  s.name = family;
  if (!binding.empty()) {
    std::string names;
    for (const auto& [param, bound] : binding) names += (names.empty() ? "" : ",") + bound;
    s.name += "[" + names + "]";
  }
  s.binding = std::move(binding);
  s.layer = "client";
  s.verdicts.push_back(std::move(verdict));
  return s;
}

}  // namespace

// A family is a scenario before binding; the table shows which action each
// reached and how it ended, what a family that reached none lacked, and the
// actions no family judged (what lies between the files).
TEST_CASE("the review lays the families out by action", "[review][families]") {
  RunDirectoryContents contents;
  TargetDescription target;
  for (const char* a : {"create_order", "cancel_order", "pay", "set_memo"}) target.actions[a];
  target.probes["stock"];
  contents.target = target;
  auto& rows = contents.results.scenarios;
  rows.push_back(FamilyRowResult("double-submit", {{"create", "create_order"}}, Verdict::Valid("one_record", "ok")));
  rows.push_back(FamilyRowResult("double-submit", {{"create", "pay"}}, Verdict::Invalid("one_record", "2 records")));
  rows.push_back(FamilyRowResult("delete-releases-once",
                                 {{"create", "create_order"}, {"cancel", "cancel_order"}, {"stock", "stock"}},
                                 Verdict::Unknown("probe_equal", "no answer")));
  rows.push_back(FamilyRowResult("rerun-after-partial-failure", {},
                                 Verdict::NotApplicable("range_continuity", "", VerdictDetails::OfNeeds({"a batch section"}))));
  rows.push_back(FamilyRowResult("http-redelivery", {}, Verdict::Valid("applied_once", "once")));
  const RunReview review = ReviewRun(contents);
  const FamilyCoverage& cov = review.coverage;
  CHECK(cov.actions == std::vector<std::string>{"cancel_order", "create_order", "pay", "set_memo"});
  REQUIRE(cov.families.size() == 4);
  auto family = [&](const std::string& name) -> const FamilyRow& {
    for (const auto& f : cov.families)
      if (f.family == name) return f;
    FAIL("no family " << name);
    throw std::logic_error("unreachable");
  };
  const FamilyRow& ds = family("double-submit");
  CHECK(ds.by_action.at("create_order") == VerdictStatus::kValid);
  CHECK(ds.by_action.at("pay") == VerdictStatus::kInvalid);
  CHECK(ds.by_action.count("cancel_order") == 0);
  CHECK_FALSE(ds.anchor.empty());
  CHECK(ds.lacking.empty());
  const FamilyRow& dr = family("delete-releases-once");
  CHECK(dr.by_action.size() == 2);  // the probe is no action
  CHECK(dr.by_action.at("cancel_order") == VerdictStatus::kUnknown);
  CHECK(family("rerun-after-partial-failure").lacking == std::vector<std::string>{"needs a batch section"});
  CHECK(family("http-redelivery").target_wide == VerdictStatus::kValid);
  CHECK(cov.any_target_wide);
  CHECK(cov.unexercised == std::vector<std::string>{"set_memo"});

  const std::string md = RenderMarkdownReport(contents, review, "t").markdown;
  CHECK(md.find("| family | layer | cancel\\_order | create\\_order | pay | set\\_memo | target-wide |") !=
        std::string::npos);
  CHECK(md.find("| held | **broken** | \u2014 | \u2014 |") != std::string::npos);
  CHECK(md.find("\u26a0 needs a batch section |") != std::string::npos);
  CHECK(md.find("No family judged these actions: set\\_memo") != std::string::npos);
  const std::string html = RenderHtmlReport(contents, review);
  CHECK(html.find("<section id=\"families\">") != std::string::npos);
  CHECK(html.find("No family judged these actions: set_memo") != std::string::npos);
}

namespace {

Verdict WithPremise(Verdict v, const std::string& what, std::int64_t count) {
  v.premise.what = what;
  v.premise.count = count;
  return v;
}

}  // namespace

// The premise table shows every family: exercised (a row ran and its
// premise occurred), ran with its premises at 0 (proved nothing), or not
// exercised with what the target lacks; a family that ran on one action and
// was not applicable on another names the other and why.
TEST_CASE("the premise table shows every family exercised or not, with what the target lacks",
          "[review][families]") {
  RunDirectoryContents contents;
  TargetDescription target;
  for (const char* a : {"create_order", "pay"}) target.actions[a];
  contents.target = target;
  auto& rows = contents.results.scenarios;
  rows.push_back(FamilyRowResult("double-submit", {{"create", "create_order"}},
                                 WithPremise(Verdict::Valid("one_record", "ok"), "repeated deliveries", 3)));
  rows.push_back(FamilyRowResult("double-submit", {{"create", "pay"}},
                                 Verdict::NotApplicable("one_record", "", VerdictDetails::OfNeeds({"a records probe"}))));
  rows.push_back(FamilyRowResult("replay-identity", {{"create", "create_order"}},
                                 WithPremise(Verdict::Valid("identical_replay", "ok"), "replays", 0)));
  rows.push_back(FamilyRowResult("stream-redelivery", {},
                                 Verdict::NotApplicable("applied_once", "", VerdictDetails::OfNeeds({"a broker"}))));
  const RunReview review = ReviewRun(contents);
  const std::string md = RenderMarkdownReport(contents, review, "t").markdown;
  CHECK(md.find("### Premises by family") != std::string::npos);
  CHECK(md.find("| double-submit | client | exercised | repeated deliveries \u00d73 | \u26a0 not applicable on pay: "
                "needs a records probe |") != std::string::npos);
  CHECK(md.find("| replay-identity | client | **\u26a0 ran, premise never occurred** | replays \u00d70 | \u2014 |") !=
        std::string::npos);
  CHECK(md.find("| stream-redelivery | client | **\u26a0 not exercised** | \u2014 | \u26a0 needs a broker |") !=
        std::string::npos);
  const std::string html = RenderHtmlReport(contents, review);
  CHECK(html.find("<table id=\"premises-by-family\">") != std::string::npos);
  CHECK(html.find(">stream-redelivery</td><td>client</td><td class=\"flag\">not exercised</td><td>\u2014</td>"
                  "<td class=\"flag\">needs a broker</td>") != std::string::npos);
}

TEST_CASE("the checks below can fail", "[escape]") {
  CHECK(HasEventHandlerAttribute("<p>x</p><img src=x onerror=\"a()\">"));
  CHECK(HasEventHandlerAttribute("<svg ONLOAD=a()>"));
  CHECK(!HasEventHandlerAttribute("<p title=\"&lt;img onerror=a()&gt;\">img onerror=a()</p>"));
  CHECK(XmlProblem("<svg><text>a</svg></text>") != "");
  CHECK(XmlProblem("<svg><text>a &lt;/svg&gt;</text></svg>") == "");
}

TEST_CASE("HTML pages and SVG timelines are well-formed XML, even with hostile content", "[escape]") {
  for (const std::string run : {"broken", "clean", "injection"}) {
    const RunDirectoryContents contents = Read(run);
    const RunReview review = ReviewRun(contents);
    const std::string html = RenderHtmlReport(contents, review);
    INFO(run);
    CHECK(XmlProblem(html) == "");
    for (const auto& [file, svg] : RenderMarkdownReport(contents, review, "t").timelines) {
      INFO(file);
      CHECK(XmlProblem(svg) == "");
      CHECK(svg.find("<script") == std::string::npos);
    }
  }
}

TEST_CASE("hostile answers stay text in HTML and Markdown", "[escape]") {
  const RunDirectoryContents contents = Read("injection");
  const RunReview review = ReviewRun(contents);
  const std::string html = RenderHtmlReport(contents, review);
  // The only markup is ours: no script, no img, no event handler attribute.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<svg onload") == std::string::npos);
  CHECK(!HasEventHandlerAttribute(html));
  CHECK(html.find("Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"") !=
        std::string::npos);
  // ... and the payloads are shown, escaped.
  CHECK(html.find("&lt;script&gt;document.title=&apos;pwned-body&apos;&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&lt;/svg&gt;&lt;script&gt;document.title=&apos;pwned-path&apos;") != std::string::npos);

  const MarkdownReport md = RenderMarkdownReport(contents, review, "report-timelines");
  // Outside code fences: no raw tag from the run, and every table row keeps its columns.
  std::istringstream lines(md.markdown);
  std::string line, fence;
  int table_columns = -1;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (fence.empty() && std::regex_match(line, m, std::regex("^(`{3,})[a-z]*$"))) {
      fence = m[1];
      continue;
    }
    if (!fence.empty()) {
      if (line == fence) fence.clear();
      continue;
    }
    INFO(line);
    // Our own anchors: an id made of [a-z0-9-] only, so nothing from the run.
    if (std::regex_match(line, std::regex(R"(<a id="[a-z0-9-]+"></a>)"))) continue;
    // A '<' from the run is always backslash-escaped (CommonMark: literal,
    // never a tag), and no HTML entity is written.
    CHECK_FALSE(std::regex_search(line, std::regex(R"((^|[^\\])<(script|img|svg|/))")));
    CHECK_FALSE(std::regex_search(line, std::regex(R"((^|[^\\])&(#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);)")));
    if (line.rfind("|", 0) == 0) {
      if (table_columns < 0) table_columns = MarkdownColumns(line);
      CHECK(MarkdownColumns(line) == table_columns);
    } else {
      table_columns = -1;
    }
  }
  CHECK(fence.empty());  // every fence closed
}

TEST_CASE("WriteDesignReports writes report.html, report.md and the linked timelines", "[write]") {
  ScratchDir scratch("write");
  const fs::path run = CopyRun("broken", scratch);
  REQUIRE(WriteDesignReports(run.string()).ok());
  CHECK(fs::file_size(run / "report.html") > 1000);
  const std::string md = ReadText(run / "report.md");
  std::regex link("\\]\\((report-timelines/[a-z0-9-]+\\.svg)\\)");
  int links = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), link); it != std::sregex_iterator(); ++it) {
    ++links;
    INFO((*it)[1].str());
    CHECK(fs::exists(run / (*it)[1].str()));
  }
  CHECK(links == 6);  // three failing scenarios, image + link each
  int svgs = 0;
  for (const auto& e : fs::directory_iterator(run / "report-timelines")) svgs += e.path().extension() == ".svg";
  CHECK(svgs == 3);

  // `idemproof report` paths: another format and file name.
  REQUIRE(WriteReport(run.string(), ReportFormat::kMarkdown, (scratch.path / "review.md").string()).ok());
  CHECK(fs::exists(scratch.path / "review-timelines/s-1-double-submit.svg"));
  REQUIRE(WriteReport(run.string(), ReportFormat::kJunit, (scratch.path / "junit.xml").string()).ok());
  CHECK(ReadText(scratch.path / "junit.xml").find("<testsuite") != std::string::npos);
  auto json = RenderReport(run.string(), ReportFormat::kJson);
  REQUIRE(json.ok());
  CHECK(json->find("\"seed\": 42") != std::string::npos);
  CHECK(ParseReportFormat("markdown").ok());
  CHECK(!ParseReportFormat("pdf").ok());
  CHECK(WriteDesignReports((scratch.path / "nope").string()).code() == StatusCode::kNotFound);
}

TEST_CASE("a timeline has a lane per process, faults as bands and lost answers marked", "[timeline]") {
  const RunDirectoryContents contents = Read("broken");
  const History* h = contents.HistoryOf(2);  // retry-inside-window: a dropped answer
  REQUIRE(h != nullptr);
  TimelineOptions options;
  options.contract = contents.target->idempotency;
  const std::string svg = RenderTimelineSvg(*h, options);
  for (const char* lane : {">client-0<", ">client-1<", ">proxy<", ">target<", ">nemesis<", ">probe<"}) {
    INFO(lane);
    CHECK(svg.find(lane) != std::string::npos);
  }
  CHECK(svg.find("class=\"fault-band\"") != std::string::npos);
  CHECK(svg.find("? lost") != std::string::npos);
  CHECK(svg.find("201 replay") != std::string::npos);
  CHECK(XmlProblem(svg) == "");
  CHECK(RenderTimelineSvg(History(), options).find("empty history") != std::string::npos);
}

// #32: the report read probe_equal's two values from details.a / details.b,
// by their shape; they travel in its finding now (Finding::values).
TEST_CASE("probe_equal's two probe values reach the report through its finding", "[review]") {
  Finding f = MakeFinding("probe 'before' = 3 but probe 'after' = 4", {{"a", "before"}, {"b", "after"}});
  f.values = {{"before", {{"available", 3}}}, {"after", {{"available", 4}}}};
  f.differences = {"$.available: 3 != 4"};
  const Finding back = FindingFromJson(FindingToJson(f));
  CHECK(back.values == f.values);
  CHECK(back.subject == f.subject);  // "values" is no subject member

  RunDirectoryContents contents;
  ScenarioResult s;
  s.name = "stock-after-replay";
  s.layer = "client";
  // Only the finding: no details.a / details.b to guess from.
  s.verdicts.push_back(Verdict::Invalid("probe_equal", f.problem, VerdictDetails::OfFindings({f})));
  contents.results.scenarios.push_back(s);
  const RunReview review = ReviewRun(contents);
  REQUIRE(review.scenarios.size() == 1);
  REQUIRE(review.scenarios[0].violations.size() == 1);
  const ViolationView& v = review.scenarios[0].violations[0];
  CHECK(v.problem == f.problem);
  REQUIRE(v.answers.size() == 2);
  CHECK(v.answers[0].role == "probe before");
  CHECK(v.answers[0].body.find("\"available\": 3") != std::string::npos);
  CHECK(v.answers[1].role == "probe after");
  CHECK(v.answers[1].body.find("\"available\": 4") != std::string::npos);
  CHECK(v.differences == f.differences);
}

// Issue 48 item 5: no report.md table cell over kMarkdownCellChars; a longer
// one is cut and its whole text follows the table, linked by number.
TEST_CASE("report.md table cells stay under the limit, details below the table", "[markdown]") {
  for (const std::string run : {"clean", "broken", "injection"}) {
    SECTION(run) {
      const RunDirectoryContents contents = Read(run);
      const std::string md = RenderMarkdownReport(contents, ReviewRun(contents), "report-timelines").markdown;
      std::istringstream lines(md);
      std::string line;
      int table_lines = 0;
      while (std::getline(lines, line)) {
        if (line.empty() || line[0] != '|') continue;
        ++table_lines;
        std::size_t start = 1;
        for (std::size_t i = 1; i < line.size(); ++i) {
          if (line[i] != '|' || line[i - 1] == '\\') continue;
          INFO(line);
          CHECK(i - start <= kMarkdownCellChars);
          start = i + 1;
        }
      }
      CHECK(table_lines > 20);
    }
  }
  // The broken run's evidence of the double submit was longer: its whole text
  // is below the table, and the cut cell links to it.
  const RunDirectoryContents broken = Read("broken");
  const std::string md = RenderMarkdownReport(broken, ReviewRun(broken), "report-timelines").markdown;
  CHECK(md.find(" \u2026 [[1]](#cell-1) |") != std::string::npos);
  const auto note = md.find("\n<a id=\"cell-1\"></a>\n\n[1] ");
  REQUIRE(note != std::string::npos);
  CHECK(md.find("\n\n", note + 30) - note > kMarkdownCellChars);  // the whole cell
  CHECK(md.find("biz\\_no", note) != std::string::npos);
}

// A run whose suite held and whose hunt phase found a violation: both pages
// say so first and show the hunt, its shrink and the replay command.
TEST_CASE("a violation found by the hunt shows in both reports with its shrink and replay", "[review][hunt]") {
  const RunDirectoryContents contents = Read("hunted");
  REQUIRE(contents.results.hunt);
  const HuntResults& hunt = *contents.results.hunt;
  REQUIRE(hunt.failure);
  const RunReview review = ReviewRun(contents);
  CHECK(review.exit_code == 1);
  CHECK(review.headline == "Broken: hunt");  // the suite held every layer; the hunt broke the run
  for (const auto& s : review.scenarios) CHECK(s.outcome == VerdictStatus::kValid);
  const std::string html = RenderHtmlReport(contents, review);
  CHECK(html.find("<header class=\"banner broken\"") != std::string::npos);
  const auto section = html.find("<section id=\"hunt\">");
  REQUIRE(section != std::string::npos);
  const std::string hunt_html = html.substr(section, html.find("</section>", section) - section);
  CHECK(hunt_html.find("VIOLATION") != std::string::npos);
  CHECK(hunt_html.find("<th>workloads</th><td>88</td>") != std::string::npos);
  CHECK(hunt_html.find("<th>faults fired</th><td>99</td>") != std::string::npos);
  CHECK(hunt_html.find("<th>not generated: wait_past_window</th>") != std::string::npos);
  CHECK(hunt_html.find("<th>shrunk to</th><td>8 op(s)</td>") != std::string::npos);
  CHECK(hunt_html.find("<th>broken: one_record</th>") != std::string::npos);
  CHECK(hunt_html.find(XmlEscape(hunt.failure->repro_file, false)) != std::string::npos);
  CHECK(hunt_html.find("<pre class=\"repro\">" + XmlEscape(hunt.failure->repro_command, false) + "</pre>") !=
        std::string::npos);
  const std::string md = RenderMarkdownReport(contents, review, "report-timelines").markdown;
  const auto md_section = md.find("## Hunt\n");
  REQUIRE(md_section != std::string::npos);
  CHECK(hunt.Line().rfind("hunt (1m): VIOLATION of identical_replay, in_progress, one_record, window", 0) == 0);
  CHECK(md.find("**" + MarkdownEscape(hunt.Line()) + "**", md_section) != std::string::npos);
  CHECK(md.find("| passed | 28 |", md_section) != std::string::npos);
  CHECK(md.find(MarkdownFence(hunt.failure->repro_command, "sh"), md_section) != std::string::npos);
  // A run without a hunt says it had none, on both pages.
  const RunDirectoryContents clean = Read("clean");
  const RunReview clean_review = ReviewRun(clean);
  CHECK(RenderHtmlReport(clean, clean_review).find("No hunt phase in this run") != std::string::npos);
  CHECK(RenderMarkdownReport(clean, clean_review, "t").markdown.find("No hunt phase in this run") != std::string::npos);
}
