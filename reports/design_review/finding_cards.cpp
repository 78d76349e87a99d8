#include "reports/design_review/finding_cards.h"

#include <algorithm>
#include <set>

#include "base/header_list.h"
#include "reports/design_review/timeline_svg.h"
#include "reports/markup_escape.h"

namespace idemproof {
namespace {

std::string H(const std::string& text) { return XmlEscape(text, false); }
std::string A(const std::string& text) { return XmlEscape(text, true); }

constexpr std::size_t kLongRun = 32;     // a run of more characters without a space gets breaks
constexpr std::size_t kBreakEvery = 24;  // ... this often
constexpr std::size_t kLinesCompared = 400;  // body lines diffed (each side); the rest shown as is
constexpr std::size_t kAnswersSideBySide = 2;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      if (start < text.size()) out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Which lines of `a` and `b` are in a longest common subsequence of both
// (true = the same on both sides); lines past kLinesCompared count as differing.
std::pair<std::vector<bool>, std::vector<bool>> CommonLines(const std::vector<std::string>& a,
                                                            const std::vector<std::string>& b) {
  const std::size_t n = std::min(a.size(), kLinesCompared), m = std::min(b.size(), kLinesCompared);
  std::vector<std::vector<std::uint16_t>> len(n + 1, std::vector<std::uint16_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      len[i][j] = a[i] == b[j] ? static_cast<std::uint16_t>(len[i + 1][j + 1] + 1)
                               : std::max(len[i + 1][j], len[i][j + 1]);
  std::vector<bool> in_a(a.size(), false), in_b(b.size(), false);
  for (std::size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i] == b[j]) {
      in_a[i++] = true;
      in_b[j++] = true;
    } else if (len[i + 1][j] >= len[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return {in_a, in_b};
}

// A body as lines, those not common to both sides marked.
std::string BodyLines(const std::vector<std::string>& lines, const std::vector<bool>& common) {
  std::string s = "<pre class=\"body\">";
  for (std::size_t i = 0; i < lines.size(); ++i)
    s += common[i] ? H(lines[i]) + "\n" : "<mark>" + H(lines[i]) + "</mark>\n";
  return s + "</pre>";
}

std::string StatusText(const AnswerView& a) {
  if (a.status) return std::to_string(*a.status);
  if (a.outcome == "info") return "no answer (lost)";
  if (a.outcome.empty() || a.outcome == "ok") return "\u2014";
  return a.outcome;
}

std::string AnswerHead(const AnswerView& a) {
  std::string s = "<span class=\"role\">" + H(a.role) + "</span>";
  if (a.index >= 0) s += " <span class=\"meta\">request #" + std::to_string(a.index) + "</span>";
  if (!a.process.empty()) s += " <span class=\"meta\">" + H(a.process) + "</span>";
  if (!a.key.empty()) s += "<div class=\"meta\">key <code>" + HtmlBreakable(a.key) + "</code></div>";
  if (!a.error.empty()) s += "<div class=\"meta\">error: " + H(a.error) + "</div>";
  return s;
}

std::optional<std::string> HeaderOf(const AnswerView& a, const std::string& name) {
  for (const auto& [k, v] : a.headers)
    if (equals_ignoring_case(k, name)) return v;
  return std::nullopt;
}

// Two answers side by side: status, headers (differing ones shown, the
// identical ones folded), body lines with the differing ones marked.
std::string AnswerDiff(const AnswerView& a, const AnswerView& b) {
  std::string s = "<table class=\"diff\"><thead><tr><th></th><th>" + AnswerHead(a) + "</th><th>" + AnswerHead(b) +
                  "</th></tr></thead><tbody>\n";
  const std::string sa = StatusText(a), sb = StatusText(b);
  s += "<tr class=\"" + std::string(sa == sb ? "same" : "differs") + "\"><th>status</th><td class=\"status\">" +
       H(sa) + "</td><td class=\"status\">" + H(sb) + "</td></tr>\n";
  std::vector<std::string> names;
  for (const auto* side : {&a, &b})
    for (const auto& [k, v] : side->headers)
      if (std::none_of(names.begin(), names.end(), [&](const std::string& n) { return equals_ignoring_case(n, k); }))
        names.push_back(k);
  std::string same_rows;
  int same = 0;
  for (const auto& name : names) {
    const auto va = HeaderOf(a, name), vb = HeaderOf(b, name);
    const auto cell = [](const std::optional<std::string>& v) {
      return v ? "<code>" + HtmlBreakable(*v) + "</code>" : std::string("<span class=\"meta\">(absent)</span>");
    };
    const std::string row = "<th><code>" + HtmlBreakable(name) + "</code></th><td>" + cell(va) + "</td><td>" +
                            cell(vb) + "</td></tr>\n";
    if (va == vb) {
      same_rows += "<tr class=\"same\">" + row;
      ++same;
    } else {
      s += "<tr class=\"differs\">" + row;
    }
  }
  if (same > 0)
    s += "<tr class=\"same\"><th>headers</th><td colspan=\"2\"><details><summary>" + std::to_string(same) +
         " identical header(s)</summary><table class=\"diff\"><tbody>" + same_rows +
         "</tbody></table></details></td></tr>\n";
  const auto la = Lines(DisplayBody(a.body)), lb = Lines(DisplayBody(b.body));
  const auto [ca, cb] = CommonLines(la, lb);
  const bool bodies_same = la == lb;
  s += "<tr class=\"" + std::string(bodies_same ? "same" : "differs") + "\"><th>body</th><td>" + BodyLines(la, ca) +
       "</td><td>" + BodyLines(lb, cb) + "</td></tr>\n";
  return s + "</tbody></table>\n";
}

// One answer alone (a finding about a single request).
std::string AnswerAlone(const AnswerView& a) {
  std::string s = "<table class=\"diff single\"><thead><tr><th></th><th>" + AnswerHead(a) +
                  "</th></tr></thead><tbody>\n<tr><th>status</th><td class=\"status\">" + H(StatusText(a)) +
                  "</td></tr>\n";
  if (!a.headers.empty()) {
    s += "<tr><th>headers</th><td><details><summary>" + std::to_string(a.headers.size()) +
         " header(s)</summary><pre class=\"headers\">";
    for (const auto& [k, v] : a.headers) s += H(k) + ": " + H(v) + "\n";
    s += "</pre></details></td></tr>\n";
  }
  if (!a.body.empty() || a.status) s += "<tr><th>body</th><td><pre class=\"body\">" + H(DisplayBody(a.body)) + "</pre></td></tr>\n";
  return s + "</tbody></table>\n";
}

std::string Card(const FindingCard& c, std::uint64_t seed) {
  const char* kind = c.deviation ? "deviation" : "violation";
  std::string s = "<article class=\"finding " + std::string(kind) + "\" id=\"" + A(c.anchor) + "\" data-scenario=\"" +
                  A(c.scenario) + "\" data-oracle=\"" + A(c.oracle) + "\">\n";
  s += "<header><span class=\"kind\">" + std::string(kind) + "</span> <strong>" + H(c.scenario) +
       "</strong> <span class=\"meta\">" + H(c.layer) + " \u00b7 " + H(c.oracle) + "</span></header>\n";
  s += "<p class=\"sentence\">" + HtmlBreakable(c.problem) + "</p>\n";
  s += "<dl class=\"facts\">";
  s += "<dt>rule</dt><dd>" + (c.rule.empty() ? std::string("\u2014") : H(c.rule)) + "</dd>";
  s += "<dt>premise</dt><dd>" + (c.premise.empty() ? std::string("\u2014 (not counted by this oracle)") : H(c.premise)) +
       "</dd>";
  if (!c.hunts.empty()) s += "<dt>hunts</dt><dd>" + H(c.hunts) + "</dd>";
  if (c.records)
    s += "<dt>records</dt><dd><strong>" + std::to_string(*c.records) + "</strong>" +
         (c.expected_records.empty() ? "" : " (expected " + H(c.expected_records) + ")") + "</dd>";
  s += "</dl>\n";
  if (!c.differences.empty()) {
    s += "<details class=\"differences\"" + std::string(c.differences.size() <= 3 ? " open=\"open\"" : "") + "><summary>" +
         std::to_string(c.differences.size()) + " difference(s)</summary><ul class=\"tight\">";
    for (const auto& d : c.differences) s += "<li>" + HtmlBreakable(d) + "</li>";
    s += "</ul></details>\n";
  }
  if (!c.missing_ranges.empty()) {
    s += "<details class=\"ranges\"><summary>" + std::to_string(c.missing_ranges.size()) +
         " missing range(s)</summary><ul class=\"tight\">";
    for (const auto& r : c.missing_ranges) s += "<li><code>" + H(r) + "</code></li>";
    s += "</ul></details>\n";
  }
  if (c.answers.size() >= kAnswersSideBySide) {
    s += AnswerDiff(c.answers[0], c.answers[1]);
  } else if (c.answers.size() == 1) {
    s += AnswerAlone(c.answers[0]);
  }
  if (c.answers.size() > kAnswersSideBySide) {
    s += "<details class=\"more-answers\"><summary>" + std::to_string(c.answers.size() - kAnswersSideBySide) +
         " more answer(s)</summary>";
    for (std::size_t i = kAnswersSideBySide; i < c.answers.size(); ++i) s += AnswerAlone(c.answers[i]);
    s += "</details>\n";
  }
  if (!c.timeline_svg.empty()) {
    s += "<h4>Timeline</h4><div class=\"timeline-wrap\">" + c.timeline_svg + "</div>\n";
  } else if (!c.has_history) {
    s += "<p class=\"meta\">No history recorded: no timeline.</p>\n";
  } else {
    s += "<p class=\"meta\">Timeline: in <a href=\"#" + A(c.scenario_anchor) + "\">the first card of " +
         H(c.scenario) + "</a>.</p>\n";
  }
  s += "<p class=\"meta\">Seed <code>" + std::to_string(seed) + "</code>. Reproduce:</p><pre class=\"repro\">" +
       H(c.repro_command) + "</pre>\n</article>\n";
  return s;
}

}  // namespace

std::string HtmlBreakable(const std::string& text) {
  std::string out;
  std::size_t run_start = 0;
  auto flush = [&](std::size_t end) {
    const std::size_t n = end - run_start;
    if (n <= kLongRun) {
      out += H(text.substr(run_start, n));
      return;
    }
    std::size_t piece = run_start, count = 0;
    for (std::size_t i = run_start; i < end; ++i) {
      const unsigned char ch = static_cast<unsigned char>(text[i]);
      if ((ch & 0xC0) == 0x80) continue;  // inside a UTF-8 character
      if (count == kBreakEvery) {
        out += H(text.substr(piece, i - piece)) + "<wbr/>";
        piece = i;
        count = 0;
      }
      ++count;
    }
    out += H(text.substr(piece, end - piece));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ' || text[i] == '\n' || text[i] == '\t') {
      flush(i);
      out += H(std::string(1, text[i]));
      run_start = i + 1;
    }
  }
  if (run_start < text.size()) flush(text.size());
  return out;
}

FindingCardsInput FindingCardsOf(const RunDirectoryContents& contents, const RunReview& review) {
  FindingCardsInput in;
  in.seed = contents.results.seed;
  std::vector<FindingCard> violations, deviations;
  for (const ScenarioReview& sr : review.scenarios) {
    const ScenarioResult& s = *sr.result;
    in.omitted += sr.violations_omitted;
    bool first_of_scenario = true;
    std::string scenario_anchor;  // the card holding the scenario's timeline
    int n = 0;
    for (const Verdict& v : s.verdicts) {
      if (v.status != VerdictStatus::kInvalid) continue;
      // The findings the review kept for this oracle; none: the evidence alone.
      std::vector<const ViolationView*> views;
      for (const auto& view : sr.violations)
        if (view.oracle == v.oracle) views.push_back(&view);
      const std::size_t cards = std::max<std::size_t>(1, views.size());
      for (std::size_t i = 0; i < cards; ++i) {
        FindingCard c;
        c.anchor = "f-" + sr.anchor + "-" + std::to_string(++n);
        c.scenario_anchor = scenario_anchor;
        c.scenario = s.name;
        c.layer = sr.layer_title;
        c.hunts = s.hunts;
        c.oracle = v.oracle;
        c.deviation = v.is_deviation();
        c.rule = RuleText(v);
        c.premise = PremiseText(v);
        c.repro_command = sr.repro_command;
        if (views.empty()) {
          c.problem = v.evidence;
        } else {
          const ViolationView& view = *views[i];
          c.problem = view.problem;
          c.answers = view.answers;
          c.differences = view.differences;
          c.records = view.records;
          c.expected_records = view.expected_records;
          c.missing_ranges = view.missing_ranges;
        }
        // The scenario's timeline goes with its first card, which carries the
        // scenario's anchor (links from the matrix and tables land on it).
        if (first_of_scenario) {
          // A scenario that is not broken (deviations only) keeps its anchor
          // on its row of the scenario table: its card takes its own.
          if (sr.outcome == VerdictStatus::kInvalid) c.anchor = sr.anchor;
          scenario_anchor = c.anchor;
          c.timeline_svg = RenderScenarioTimeline(contents, sr);
          c.has_history = !c.timeline_svg.empty();
          first_of_scenario = false;
        }
        (c.deviation ? deviations : violations).push_back(std::move(c));
      }
    }
  }
  in.cards = std::move(violations);
  // A deviation-only scenario's first card is among the deviations: its
  // timeline moves with it, wherever it lands.
  for (auto& c : deviations) in.cards.push_back(std::move(c));
  return in;
}

std::string RenderFindingCards(const FindingCardsInput& input) {
  if (input.cards.empty()) return "<p>Nothing broke: no oracle found a violation.</p>\n";
  std::string s;
  const auto violations = std::count_if(input.cards.begin(), input.cards.end(),
                                        [](const FindingCard& c) { return !c.deviation; });
  const auto deviations = static_cast<std::ptrdiff_t>(input.cards.size()) - violations;
  s += "<p class=\"meta\">" + std::to_string(violations) + " violation(s) (a MUST broken), then " +
       std::to_string(deviations) + " deviation(s) (a SHOULD missed).</p>\n<div class=\"findings\">\n";
  bool deviations_begun = false;
  for (const FindingCard& c : input.cards) {
    if (c.deviation && !deviations_begun) {
      s += "</div>\n<h3 id=\"deviations\">Deviations</h3>\n<div class=\"findings\">\n";
      deviations_begun = true;
    }
    s += Card(c, input.seed);
  }
  s += "</div>\n";
  if (input.omitted > 0)
    s += "<p class=\"meta\">" + std::to_string(input.omitted) + " more finding(s) in results.json.</p>\n";
  return s;
}

const char* FindingCardsStyle() {
  return R"CSS(
.findings { display: grid; grid-template-columns: 1fr; gap: 14px; }
article.finding { border: 1px solid var(--line); border-left: 6px solid var(--broken); padding: 6px 16px 12px; border-radius: 4px; min-width: 0; }
article.finding.deviation { border-left-color: var(--undecided); }
article.finding header .kind { text-transform: uppercase; font-weight: 700; font-size: 12px; color: var(--broken); }
article.finding.deviation header .kind { color: var(--undecided); }
article.finding .sentence { font-size: 15px; font-weight: 600; margin: 6px 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; font-size: 13px; }
dl.facts dt { font-weight: 700; color: #555; } dl.facts dd { margin: 0; }
table.diff { table-layout: auto; margin: 8px 0; }
table.diff > thead th:first-child, table.diff > tbody > tr > th { width: 1%; white-space: nowrap; }
table.diff > thead th:not(:first-child) { width: 49.5%; font-weight: 400; }
table.diff.single > thead th:not(:first-child) { width: 99%; }
table.diff tr.differs > th { color: var(--broken); }
table.diff tr.differs > td { background: #fff5f5; }
table.diff td.status { font-size: 16px; font-weight: 700; }
table.diff pre { max-height: 300px; }
table.diff .role { font-weight: 700; text-transform: uppercase; font-size: 12px; }
pre mark { background: #ffcdd2; color: inherit; }
)CSS";
}

}  // namespace idemproof
