// The report pages in a real browser: Debian's headless Chromium loads each
// page from disk and we read back the DOM it built (--dump-dom) and a
// screenshot. Chromium is a declared dependency: missing, these tests FAIL.
//
// Screenshots land in <build>/tests/reports/screens/ (docs/report-*.png are
// copies of these).
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "headless_chromium.h"
#include "report_files.h"
#include "reports/design_review/design_reports.h"

using namespace idemproof;
using namespace idemproof::testing;
namespace fs = std::filesystem;

namespace {

std::string Title(const std::string& dom) {
  std::smatch m;
  if (std::regex_search(dom, m, std::regex("<title>([^<]*)</title>"))) return m[1];
  return "<no title>";
}

// The rendered DOM of the run's report.html (written by WriteDesignReports).
std::string RenderedDom(const fs::path& run) {
  REQUIRE(WriteDesignReports(run.string()).ok());
  auto chromium = FindChromium();
  if (!chromium.ok()) FAIL(chromium.status().message());
  auto dom = DumpDom(fs::absolute(run / "report.html").string());
  if (!dom.ok()) FAIL(dom.status().ToString());
  return *dom;
}

void Screenshot(const fs::path& run, const std::string& name) {
  const fs::path png = fs::path(IDEMPROOF_BINARY_DIR) / "tests/reports/screens" / name;
  fs::create_directories(png.parent_path());
  Status s = idemproof::testing::Screenshot(fs::absolute(run / "report.html").string(), png.string());
  if (!s.ok()) FAIL(s.ToString());
  REQUIRE(fs::exists(png));
  const std::string bytes = ReadText(png);
  CHECK(bytes.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(bytes.size() > 20000);  // a blank page is a few KB
}

}  // namespace

TEST_CASE("Chromium renders a broken run: layer table, verdicts, timelines", "[browser][slow]") {
  ScratchDir scratch("browser-broken");
  const fs::path run = CopyRun("broken", scratch);
  const std::string dom = RenderedDom(run);
  CHECK(Title(dom) == "idemproof \u2014 reference \u2014 Broken: client, gateway / network, concurrency");
  // The four-layer table, a row per layer, with its verdict.
  CHECK(Count(dom, "<table class=\"layers\">") == 1);
  for (const char* row : {"<tr class=\"broken\" data-layer=\"client\"><th>client</th>",
                          "<tr class=\"broken\" data-layer=\"gateway / network\">",
                          "<tr class=\"untested\" data-layer=\"queue\">",
                          "<tr class=\"held\" data-layer=\"side effect\">",
                          "<tr class=\"broken\" data-layer=\"concurrency\">",
                          "<tr class=\"untested\" data-layer=\"batch re-run\">"}) {
    INFO(row);
    CHECK(Count(dom, row) == 1);
  }
  // The first screen's matrix: a row per layer, the broken cells linking to their scenario.
  CHECK(Count(dom, "<table class=\"matrix\" id=\"matrix\">") == 1);
  CHECK(Count(dom, "<span class=\"layer-state\">broken</span>") == 3);
  // client: one record and identical replay both broke in double-submit.
  CHECK(Count(dom, "<td class=\"cell broken\"><a href=\"#s-1-double-submit\">broken \u00d71</a></td>") == 2);
  // A timeline per failing scenario, the evidence outlined, lost answers marked.
  CHECK(Count(dom, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\"") == 3);
  CHECK(Count(dom, "<g class=\"op evidence\"") >= 4);
  // A card per finding (8), violations only; each with its repro command.
  CHECK(Count(dom, "<article class=\"finding violation\"") == 8);
  CHECK(Count(dom, "<pre class=\"repro\">") == 8);
  CHECK(Count(dom, "<table class=\"diff\">") >= 4);
  CHECK(dom.find("idemproof run scenarios/client/double-submit.yaml --target scenarios/targets/reference.yaml "
                 "--seed 42 --filter double-submit --flaw check-then-insert") != std::string::npos);
  CHECK(dom.find("0 \u2014 never fired: proves nothing") != std::string::npos);
  Screenshot(run, "report-broken.png");
}

TEST_CASE("Chromium renders a clean run", "[browser][slow]") {
  ScratchDir scratch("browser-clean");
  const fs::path run = CopyRun("clean", scratch);
  const std::string dom = RenderedDom(run);
  CHECK(Title(dom) == "idemproof \u2014 reference \u2014 Held: client, gateway / network, concurrency");
  CHECK(Count(dom, "<span class=\"layer-state\">held</span>") == 3);
  CHECK(Count(dom, "<span class=\"layer-state\">broken</span>") == 0);
  CHECK(Count(dom, "class=\"cell broken\"") == 0);
  CHECK(Count(dom, "<svg") == 0);  // timelines only for failing scenarios
  CHECK(dom.find("Nothing broke") != std::string::npos);
  Screenshot(run, "report-clean.png");
}

// The first screen answers: at 1280 x 800 the verdict and the whole matrix
// show without scrolling, nothing scrolls sideways, no table cell on the
// page is taller than kTallestCellPx (a list of 18 sentences in one cell
// made one row taller than two screens) and none is narrower than its
// longest word (names wrapped letter by letter in a narrow column).
namespace {

constexpr double kTallestCellPx = 400;

void CheckFirstScreen(const std::string& run_name) {
  ScratchDir scratch("browser-first-screen-" + run_name);
  const fs::path run = CopyRun(run_name, scratch);
  REQUIRE(WriteDesignReports(run.string()).ok());
  auto m = MeasureFirstScreen(fs::absolute(run / "report.html").string());
  if (!m.ok()) FAIL(m.status().ToString());
  INFO("headline bottom " << m->headline_bottom << ", matrix bottom " << m->matrix_bottom << ", scroll width "
                          << m->scroll_width << " of " << m->client_width << ", tallest cell " << m->tallest_cell
                          << ", width with whole words " << m->words_scroll_width << ", cells narrower than a word "
                          << m->narrow_cells << ", past the page: " << m->overflowing);
  CHECK(m->headline_bottom > 0);
  CHECK(m->matrix_bottom > m->headline_bottom);
  CHECK(m->matrix_bottom <= 800);
  CHECK(m->client_width > 1000);
  CHECK(m->scroll_width <= m->client_width);
  CHECK(m->tallest_cell > 0);
  CHECK(m->tallest_cell <= kTallestCellPx);
  // No column narrower than its longest word: wrapped only between words,
  // every table still fits the page and no cell overflows.
  CHECK(m->words_scroll_width <= m->client_width);
  CHECK(m->narrow_cells == 0);
  const fs::path png = fs::path(IDEMPROOF_BINARY_DIR) / "tests/reports/screens" / ("first-screen-" + run_name + ".png");
  fs::create_directories(png.parent_path());
  Status s = idemproof::testing::Screenshot(fs::absolute(run / "report.html").string(), png.string(),
                                            std::chrono::seconds(60), "1280,800");
  if (!s.ok()) FAIL(s.ToString());
  CHECK(ReadText(png).substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace

TEST_CASE("the first screen shows the verdict and the whole matrix at 1280 x 800", "[browser][slow]") {
  for (const std::string run : {"clean", "broken", "injection"}) {
    SECTION(run) { CheckFirstScreen(run); }
  }
}

TEST_CASE("a target's markup never runs in the report", "[browser][escape][slow]") {
  ScratchDir scratch("browser-injection");
  const fs::path run = CopyRun("injection", scratch);
  const std::string dom = RenderedDom(run);
  // Every payload sets document.title or adds an element: none took effect.
  const std::string title = Title(dom);
  INFO("title: " << title);
  CHECK(title.rfind("idemproof \u2014 evil&lt;/title&gt;&lt;script&gt;", 0) == 0);
  CHECK(Count(dom.substr(0, dom.find("</head>")), "<title>") == 1);
  CHECK(Count(dom, "<script") == 0);
  CHECK(Count(dom, "<img") == 0);
  CHECK(Count(dom, "<pwned-element") == 0);
  CHECK(Count(dom, "<b>") == 0);
  CHECK(!HasEventHandlerAttribute(dom));
  // The SVG was not closed early by "</svg>" in the answers: one timeline,
  // holding its axis (drawn last).
  CHECK(Count(dom, "<svg") == 1);
  CHECK(Count(dom, "</svg>") == 1);
  const auto svg_start = dom.find("<svg"), svg_end = dom.find("</svg>");
  REQUIRE(svg_start != std::string::npos);
  REQUIRE(svg_end != std::string::npos);
  CHECK(dom.substr(svg_start, svg_end - svg_start).find("text-anchor=\"middle\"") != std::string::npos);
  // The payloads are on the page as text.
  CHECK(dom.find("&lt;script&gt;document.title='pwned-body'&lt;/script&gt;") != std::string::npos);
  CHECK(dom.find("&lt;/svg&gt;&lt;svg onload=") != std::string::npos);
  // The page is whole: its last section and footer rendered.
  CHECK(dom.find("<section id=\"metrics\">") != std::string::npos);
  CHECK(dom.find("<footer>") != std::string::npos);
  Screenshot(run, "report-injection.png");
}
