// Findings as cards (issue 48 item 2): what FindingCardsOf takes from a
// run's review and how RenderFindingCards lays it out, on the literal
// broken run of data/ and on small inputs.
#include <catch2/catch.hpp>

#include "report_files.h"
#include "reports/design_review/finding_cards.h"
#include "reports/design_review/run_review.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

RunDirectoryContents ReadBroken() {
  auto contents = ReadRunDirectory(DataRun("broken").string());
  REQUIRE(contents.ok());
  return std::move(contents).value();
}

AnswerView Answer(const std::string& role, std::int64_t index, int status, HeaderList headers, std::string body) {
  AnswerView a;
  a.role = role;
  a.index = index;
  a.outcome = "ok";
  a.status = status;
  a.headers = std::move(headers);
  a.body = std::move(body);
  return a;
}

}  // namespace

TEST_CASE("every finding of the broken run is a card with its rule, premise, answers, timeline and repro",
          "[review][cards]") {
  const RunDirectoryContents contents = ReadBroken();
  const RunReview review = ReviewRun(contents);
  const FindingCardsInput in = FindingCardsOf(contents, review);
  // double-submit 2, identical-burst 1 + 3, resubmit-after-restart 2.
  REQUIRE(in.cards.size() == 8);
  int timelines = 0;
  for (const FindingCard& c : in.cards) {
    INFO(c.scenario << " " << c.oracle);
    CHECK_FALSE(c.deviation);
    CHECK_FALSE(c.problem.empty());
    CHECK(c.rule.rfind("ietf/", 0) == 0);
    CHECK(c.repro_command.find("--filter " + c.scenario) != std::string::npos);
    // The recorded in_progress findings of this run name no answer (an older format).
    if (c.oracle != "in_progress") CHECK_FALSE(c.answers.empty());
    if (!c.timeline_svg.empty()) ++timelines;
  }
  CHECK(timelines == 3);  // one per broken scenario, in its first card
  CHECK(in.cards[0].anchor == "s-1-double-submit");
  CHECK(in.cards[1].anchor == "f-s-1-double-submit-2");
  CHECK(in.cards[1].scenario_anchor == "s-1-double-submit");
  const std::string html = RenderFindingCards(in);
  CHECK(Count(html, "<article class=\"finding violation\"") == 8);
  CHECK(Count(html, "<table class=\"diff\">") >= 4);
  CHECK(Count(html, "<pre class=\"repro\">") == 8);
  CHECK(Count(html, "<dt>premise</dt>") == 8);
  CHECK(html.find("<h3 id=\"deviations\">") == std::string::npos);
}

TEST_CASE("deviations come after every violation, each kind said", "[review][cards]") {
  RunDirectoryContents contents = ReadBroken();
  // double-submit's identical_replay finding made a deviation (a SHOULD).
  REQUIRE(contents.results.scenarios[0].name == "double-submit");
  for (auto& v : contents.results.scenarios[0].verdicts)
    if (v.oracle == "identical_replay") v.severity = Severity::kDeviation;
  const RunReview review = ReviewRun(contents);
  const FindingCardsInput in = FindingCardsOf(contents, review);
  REQUIRE(in.cards.size() == 8);
  CHECK(in.cards.back().deviation);
  CHECK(in.cards.back().oracle == "identical_replay");
  for (std::size_t i = 0; i + 1 < in.cards.size(); ++i) CHECK_FALSE(in.cards[i].deviation);
  const std::string html = RenderFindingCards(in);
  const auto deviations = html.find("<h3 id=\"deviations\">");
  REQUIRE(deviations != std::string::npos);
  CHECK(html.rfind("<article class=\"finding violation\"") < deviations);
  CHECK(html.find("<article class=\"finding deviation\"") > deviations);
  CHECK(html.find("7 violation(s) (a MUST broken), then 1 deviation(s)") != std::string::npos);
}

TEST_CASE("two answers side by side: status, the differing headers, identical ones folded, body lines marked",
          "[review][cards]") {
  FindingCardsInput in;
  FindingCard c;
  c.anchor = "s-1-x";
  c.scenario = "x";
  c.oracle = "identical_replay";
  c.problem = "the replay differs";
  c.answers = {Answer("first", 3, 201, {{"Location", "/orders/1"}, {"Content-Type", "application/json"}},
                      R"({"id":1,"status":"created"})"),
               Answer("replay", 7, 200, {{"Location", "/orders/2"}, {"content-type", "application/json"}},
                      R"({"id":2,"status":"created"})"),
               Answer("retry", 9, 200, {}, "{}")};
  in.cards.push_back(c);
  const std::string html = RenderFindingCards(in);
  CHECK(html.find("<tr class=\"differs\"><th>status</th><td class=\"status\">201</td><td class=\"status\">200</td>") !=
        std::string::npos);
  CHECK(html.find("<tr class=\"differs\"><th><code>Location</code></th><td><code>/orders/1</code></td><td><code>"
                  "/orders/2</code></td>") != std::string::npos);
  // Content-Type is equal whatever the name's case: folded.
  CHECK(html.find("<summary>1 identical header(s)</summary>") != std::string::npos);
  // Pretty-printed JSON: the id line differs, the status line is common.
  CHECK(html.find("<mark>  &quot;id&quot;: 1,</mark>") != std::string::npos);
  CHECK(html.find("<mark>  &quot;id&quot;: 2,</mark>") != std::string::npos);
  CHECK(html.find("<mark>  &quot;status&quot;") == std::string::npos);
  // The third answer is folded.
  CHECK(html.find("<summary>1 more answer(s)</summary>") != std::string::npos);
}

TEST_CASE("HtmlBreakable breaks only long runs without a space, never inside a UTF-8 character", "[review][cards]") {
  CHECK(HtmlBreakable("a short <sentence> stays") == "a short &lt;sentence&gt; stays");
  const std::string key = "idem-1-" + std::string(60, 'x') + "k1";
  const std::string out = HtmlBreakable("key " + key + " ok");
  CHECK(Count(out, "<wbr/>") == 2);
  std::string joined = out;
  for (std::size_t p; (p = joined.find("<wbr/>")) != std::string::npos;) joined.erase(p, 6);
  CHECK(joined == "key " + key + " ok");
  const std::string accents = std::string(40, 'x') + "\xc3\xa9\xc3\xa9";
  const std::string broken = HtmlBreakable(accents);
  CHECK(broken.find("\xc3<wbr/>") == std::string::npos);
}
