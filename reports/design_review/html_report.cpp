#include "reports/design_review/html_report.h"

#include <cstdio>
#include <set>

#include "model/conformance.h"
#include "model/not_applicable.h"
#include "reports/design_review/finding_cards.h"
#include "reports/markup_escape.h"

namespace idemproof {
namespace {

std::string H(const std::string& text) { return XmlEscape(text, false); }
std::string A(const std::string& text) { return XmlEscape(text, true); }

const char* StateClass(LayerState state) {
  switch (state) {
    case LayerState::kBroken: return "broken";
    case LayerState::kUndecided: return "undecided";
    case LayerState::kHeld: return "held";
    case LayerState::kNotTested: return "untested";
  }
  return "untested";
}

const char* OutcomeClass(VerdictStatus outcome) {
  switch (outcome) {
    case VerdictStatus::kInvalid: return "broken";
    case VerdictStatus::kUnknown: return "undecided";
    case VerdictStatus::kValid: return "held";
    case VerdictStatus::kNotApplicable: return "untested";
  }
  return "untested";
}

constexpr const char* kStyle = R"CSS(
:root { --broken:#c62828; --held:#2e7d32; --undecided:#ef6c00; --untested:#757575; --ink:#212121; --line:#d0d0d0; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1800px; margin: 0 auto; padding: 0 24px 48px; }
table.matrix { table-layout: fixed; margin-top: 14px; }
table.matrix th, table.matrix td { padding: 6px 8px; }
table.matrix thead th:first-child { width: 230px; }
table.matrix td.cell { font-weight: 700; text-align: center; }
table.matrix td.cell a { color: inherit; display: block; }
td.cell.broken { background: #ffcdd2; color: var(--broken); } td.cell.held { background: #c8e6c9; color: var(--held); }
td.cell.undecided, td.cell.deviation { background: #ffe0b2; color: var(--undecided); }
td.cell.untested { background: #eeeeee; color: var(--untested); } td.cell.none { color: #bdbdbd; }
.layer-state { font-weight: 400; font-size: 12px; color: #555; }
ul.causes { margin: 4px 0; padding-left: 18px; } ul.causes li { margin: 2px 0; }
table.conformance td:nth-child(2), table.conformance td:nth-child(3) { white-space: nowrap; }
header.banner { padding: 18px 24px; color: #fff; }
header.banner.broken { background: var(--broken); } header.banner.held { background: var(--held); }
header.banner.undecided { background: var(--undecided); } header.banner.untested { background: var(--untested); }
header.banner h1 { margin: 0 0 4px; font-size: 24px; }
header.banner p { margin: 0; opacity: .95; }
h2 { margin: 32px 0 10px; font-size: 19px; border-bottom: 2px solid var(--ink); padding-bottom: 4px; }
h3 { margin: 24px 0 6px; font-size: 16px; }
.cards { display: grid; grid-template-columns: repeat(6, 1fr); gap: 10px; }
.card { border: 1px solid var(--line); border-top: 6px solid var(--untested); padding: 8px 10px; border-radius: 4px; }
.card.broken { border-top-color: var(--broken); background: #ffebee; } .card.held { border-top-color: var(--held); }
.card.undecided { border-top-color: var(--undecided); background: #fff3e0; }
.card .layer { font-weight: 700; } .card .state { font-size: 18px; font-weight: 700; text-transform: uppercase; }
.card.broken .state { color: var(--broken); } .card.held .state { color: var(--held); }
.card.undecided .state { color: var(--undecided); } .card.untested .state { color: var(--untested); }
.card .counts { font-size: 12px; color: #555; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 5px 7px; text-align: left; vertical-align: top; }
td { overflow-wrap: break-word; }
th { background: #eeeeee; }
td.state, td.verdict { font-weight: 700; white-space: nowrap; }
.broken .state, td.broken { color: var(--broken); } td.held { color: var(--held); }
td.undecided { color: var(--undecided); } td.untested { color: var(--untested); }
tr.broken td:first-child { border-left: 5px solid var(--broken); }
p.hunt-line.broken { color: var(--broken); } p.hunt-line.held { color: var(--held); } p.hunt-line.undecided { color: var(--undecided); }
ul.tight { margin: 0; padding-left: 16px; }
code, pre, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f6f6f6; border: 1px solid var(--line); padding: 6px 8px; white-space: pre-wrap; word-break: break-all; margin: 4px 0; max-height: 320px; overflow: auto; }
.flag { color: var(--broken); font-weight: 700; }
.timeline-wrap { overflow-x: auto; margin: 8px 0; }
svg.timeline { max-width: 100%; height: auto; border: 1px solid var(--line); }
.meta { color: #555; font-size: 12px; }
footer { margin-top: 36px; color: #777; font-size: 12px; }
@media print {
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { font-size: 10pt; } main { max-width: none; padding: 0; }
  header.banner { padding: 10px 12px; }
  .cards { grid-template-columns: repeat(3, 1fr); }
  pre { max-height: none; overflow: visible; }
  article.finding, table { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
)CSS";

// A list whose first kListShown items show and the rest fold into
// <details>, so one long list never makes a row taller than the screen.
constexpr std::size_t kListShown = 4;
template <typename T, typename ItemHtml>
std::string FoldedList(const std::vector<T>& items, ItemHtml item_html) {
  std::string s = "<ul class=\"tight\">";
  for (std::size_t i = 0; i < items.size() && i < kListShown; ++i) s += "<li>" + item_html(items[i]) + "</li>";
  s += "</ul>";
  if (items.size() <= kListShown) return s;
  s += "<details><summary>" + std::to_string(items.size() - kListShown) + " more</summary><ul class=\"tight\">";
  for (std::size_t i = kListShown; i < items.size(); ++i) s += "<li>" + item_html(items[i]) + "</li>";
  return s + "</ul></details>";
}

std::string EvidenceLinks(const std::vector<EvidenceLink>& links) {
  if (links.empty()) return "\u2014";
  return FoldedList(links, [](const EvidenceLink& l) {
    return "<a href=\"#" + A(l.anchor) + "\">" + HtmlBreakable(l.label) + "</a> <span class=\"" + OutcomeClass(l.outcome) +
           "\">(" + (l.error ? "could not run" : OutcomeName(l.outcome)) + ")</span>";
  });
}

const char* ConformanceClass(ConformanceState state) {
  switch (state) {
    case ConformanceState::kBroken: return "broken";
    case ConformanceState::kUndecided: return "undecided";
    case ConformanceState::kHeld: return "held";
    case ConformanceState::kNotTested: return "untested";
  }
  return "untested";
}

// The scenario rows behind a rule, each linking to its section; more than a
// few go inside <details> so one rule never makes a tall row.
std::string ConformanceLinks(const RunResults& r, const std::vector<std::size_t>& rows) {
  constexpr std::size_t kShown = 3;
  std::string s;
  for (std::size_t n = 0; n < rows.size(); ++n) {
    if (n == kShown) s += "<details><summary>" + std::to_string(rows.size() - kShown) + " more</summary>";
    const std::string& name = r.scenarios[rows[n]].name;
    s += std::string(n == 0 || n == kShown ? "" : ", ") + "<a href=\"#" + A(ScenarioAnchor(rows[n], name)) + "\">" +
         H(name) + "</a>";
  }
  if (rows.size() > kShown) s += "</details>";
  return s;
}

const char* CellClass(CellState state) {
  switch (state) {
    case CellState::kBroken: return "broken";
    case CellState::kUndecided: return "undecided";
    case CellState::kDeviation: return "deviation";
    case CellState::kHeld: return "held";
    case CellState::kNotApplicable: return "untested";
    case CellState::kNone: return "none";
  }
  return "none";
}

// Layers down, properties across, each cell its worst verdict with a count
// linking to the scenario; then each distinct not-applicable cause once,
// with what to add to the target file.
std::string FirstScreen(const RunResults& r, const RunReview& review) {
  std::string h = "<section id=\"glance\"><table class=\"matrix\" id=\"matrix\"><thead><tr><th>layer</th>";
  for (const auto& p : MatrixProperties()) h += "<th>" + H(p.title) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (const auto& row : review.matrix) {
    h += "<tr data-layer=\"" + A(row.layer_title) + "\"><th class=\"" + StateClass(row.state) + "\">" +
         H(row.layer_title) + " <span class=\"layer-state\">" + LayerStateName(row.state) + "</span></th>";
    for (const auto& c : row.cells) {
      const std::string label = CellStateName(c.state);
      h += "<td class=\"cell " + std::string(CellClass(c.state)) + "\">" +
           (c.state == CellState::kNone
                ? label
                : "<a href=\"#" + A(c.anchor) + "\">" + label + " \u00d7" + std::to_string(c.count) + "</a>") +
           "</td>";
    }
    h += "</tr>\n";
  }
  h += "</tbody></table>\n";
  const auto causes = NotApplicableCauses(r);
  if (!causes.empty()) {
    h += "<h2 id=\"not-tested\">Not tested, and what would test it</h2>\n<ul class=\"causes\">";
    for (const auto& c : causes)
      h += "<li><strong>" + std::to_string(c.rows) + " row(s)</strong> need " + H(c.cause) +
           (c.add.empty() ? std::string() : ": add <code>" + H(c.add) + "</code>") + "</li>";
    h += "</ul>\n";
  }
  return h + "</section>\n";
}

// The profile's rules as a checklist (model/conformance.h).
std::string ConformanceSection(const RunResults& r) {
  const ConformanceTable table = Conformance(r);
  std::string h = "<section id=\"conformance\"><h2>Conformance to profile " + H(r.profile) + "</h2>\n";
  if (!table.known_profile) return h + "<p>This build does not know the profile: no checklist.</p></section>\n";
  h += "<p>" + table.CountsText() + ".</p>\n";
  h += "<table class=\"conformance\"><thead><tr><th>rule</th><th>level</th><th>state</th><th>scenarios</th>"
       "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    const char* cls = ConformanceClass(row.state);
    std::string behind;
    switch (row.state) {
      case ConformanceState::kBroken: behind = ConformanceLinks(r, row.broken); break;
      case ConformanceState::kUndecided: behind = ConformanceLinks(r, row.undecided); break;
      case ConformanceState::kHeld: behind = ConformanceLinks(r, row.held); break;
      case ConformanceState::kNotTested: behind = H(row.EvidenceText(r)); break;
    }
    h += "<tr class=\"" + std::string(cls) + "\" data-rule=\"" + A(row.rule) + "\"><td><code>" + H(row.rule) +
         "</code><div class=\"meta\">" + H(row.text) + "</div></td><td>" + H(row.level) +
         "</td><td class=\"state " + cls + "\">" + ConformanceStateName(row.state) + "</td><td>" + behind +
         "</td></tr>\n";
  }
  return h + "</tbody></table></section>\n";
}

// The hunt phase (model/results.h HuntResults): its rows, then the replay.
std::string HuntSection(const RunResults& r) {
  std::string h = "<section id=\"hunt\"><h2>Hunt</h2>\n";
  if (!r.hunt) return h + "<p>No hunt phase in this run (<code>--hunt 0</code>).</p></section>\n";
  const HuntResults& hunt = *r.hunt;
  const char* cls = hunt.outcome == "violation" ? "broken" : hunt.outcome == "clean" ? "held" : "undecided";
  h += "<p class=\"hunt-line " + std::string(cls) + "\"><strong>" + H(hunt.Line()) + "</strong></p>\n";
  h += "<table class=\"hunt\"><tbody>\n";
  for (const auto& row : HuntRows(hunt, H))
    h += "<tr><th>" + row.name + "</th><td>" + row.value + "</td><td class=\"meta\">" + row.meaning + "</td></tr>\n";
  h += "</tbody></table>\n";
  if (hunt.failure)
    h += "<p>Replay the shrunk workload:</p><pre class=\"repro\">" + H(hunt.failure->repro_command) + "</pre>\n";
  return h + "</section>\n";
}

}  // namespace

std::string RenderHtmlReport(const RunDirectoryContents& contents, const RunReview& review) {
  const RunResults& r = contents.results;
  std::string banner_class = "untested";
  for (const auto& row : review.layers) {
    if (row.state == LayerState::kBroken) { banner_class = "broken"; break; }
    if (row.state == LayerState::kUndecided) banner_class = "undecided";
    else if (row.state == LayerState::kHeld && banner_class == "untested") banner_class = "held";
  }
  if (r.hunt && r.hunt->outcome == "violation") banner_class = "broken";

  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n";
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\" />\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n";
  h += "<title>idemproof \u2014 " + H(r.target_name) + " \u2014 " + H(review.headline) + "</title>\n";
  h += "<style>" + std::string(kStyle) + FindingCardsStyle() + "</style>\n</head>\n<body>\n";

  h += "<header class=\"banner " + banner_class + "\" id=\"headline\"><h1>" + H(review.headline) + "</h1><p>target <strong>" +
       H(r.target_name) + "</strong>" + (r.flaw.empty() ? "" : " with flaw <strong>" + H(r.flaw) + "</strong>") +
       " \u00b7 profile <strong>" + H(r.profile) + "</strong>" +
       " \u00b7 " + std::to_string(r.scenarios.size()) + " scenario(s) \u00b7 seed <code>" + std::to_string(r.seed) +
       "</code> \u00b7 exit code " + std::to_string(review.exit_code) + " \u00b7 run " + H(r.run_id) + " \u00b7 " +
       H(r.started) + "</p>" +
       (r.ShardNote().empty() ? std::string() : "<p class=\"shard\">" + H(r.ShardNote()) + "</p>") +
       (r.TlsNote().empty() ? std::string() : "<p class=\"tls-off\"><strong>" + H(r.TlsNote()) + "</strong></p>") +
       (NotApplicableHeadline(r).empty()
            ? std::string()
            : "<p class=\"untested\">" + H(NotApplicableHeadline(r)) +
                  (NotApplicableCauses(r).empty() ? "" : " (what would test them: below the matrix)") + "</p>") +
       "</header>\n<main>\n";

  // The first screen: layers against properties, then what was not tested.
  h += FirstScreen(r, review);
  h += ConformanceSection(r);

  // The four-layer table.
  h += "<section id=\"layers\"><h2>The four-layer table</h2>\n<table class=\"layers\"><thead><tr><th>layer</th>"
       "<th>duplicate source exercised</th><th>key observed</th><th>store and window (declared)</th>"
       "<th>concurrency guard observed</th><th>side-effect reconciliation observed</th><th>verdict</th>"
       "<th>evidence</th></tr></thead><tbody>\n";
  for (const auto& row : review.layers) {
    h += "<tr class=\"" + std::string(StateClass(row.state)) + "\" data-layer=\"" + A(row.title) + "\"><th>" +
         H(row.title) + "</th><td>";
    if (row.sources.empty()) {
      h += "not exercised";
    } else {
      h += FoldedList(row.sources, HtmlBreakable);
    }
    // Target text (keys, fault and scenario names) may run long without a
    // space: break points keep the table inside the page.
    h += "</td><td>" + HtmlBreakable(row.key_observed) + "</td><td>" + HtmlBreakable(row.store_window) + "</td><td>" +
         HtmlBreakable(row.concurrency_guard) + "</td><td>" + HtmlBreakable(row.reconciliation) + "</td><td class=\"state " +
         StateClass(row.state) + "\">" + LayerStateName(row.state) + "</td><td>" + EvidenceLinks(row.evidence) +
         "</td></tr>\n";
  }
  h += "</tbody></table></section>\n";

  // What broke: a card per finding, violations before deviations.
  h += "<section id=\"failures\"><h2>What broke</h2>\n" + RenderFindingCards(FindingCardsOf(contents, review)) +
       "</section>\n";
  h += HuntSection(r);

  // All scenarios.
  h += "<section id=\"scenarios\"><h2>All scenarios</h2>\n<table><thead><tr><th>scenario</th><th>layer</th>"
       "<th>oracle</th><th>verdict</th><th>premise</th><th>rule</th><th>evidence</th></tr></thead><tbody>\n";
  for (const auto& sr : review.scenarios) {
    const ScenarioResult& s = *sr.result;
    const std::string id = sr.outcome == VerdictStatus::kInvalid ? "" : " id=\"" + A(sr.anchor) + "\"";
    const std::size_t rows = std::max<std::size_t>(1, s.verdicts.size() + (s.error.empty() ? 0 : 1));
    h += "<tr class=\"" + std::string(OutcomeClass(sr.outcome)) + "\"" + id + "><td rowspan=\"" +
         std::to_string(rows) + "\">" + (sr.outcome == VerdictStatus::kInvalid
                                             ? "<a href=\"#" + A(sr.anchor) + "\">" + H(s.name) + "</a>"
                                             : H(s.name)) +
         "</td><td rowspan=\"" + std::to_string(rows) + "\">" + H(sr.layer_title) + "</td>";
    bool first = true;
    auto open_row = [&] {
      if (!first) h += "<tr>";
      first = false;
    };
    for (const auto& v : s.verdicts) {
      open_row();
      // A deviation (a SHOULD missed) reads as undecided-orange, not broken-red.
      h += "<td>" + H(v.oracle) + "</td><td class=\"verdict " +
           (v.is_deviation() ? "undecided" : OutcomeClass(v.status)) + "\">" + v.Label() + "</td><td" +
           (v.premise.count == std::optional<std::int64_t>(0) ? " class=\"flag\"" : "") + ">" + H(PremiseText(v)) +
           "</td><td>" + H(v.rule.id.empty() ? "" : v.rule.id + " (" + v.rule.level + ")") + "</td><td>" +
           HtmlBreakable(v.evidence) + "</td></tr>\n";
    }
    if (!s.error.empty()) {
      open_row();
      h += "<td>(run)</td><td class=\"verdict undecided\">error</td><td></td><td></td><td>" + H(s.error) + "</td></tr>\n";
    }
    if (first) h += "<td>\u2014</td><td class=\"verdict untested\">none</td><td></td><td></td><td>no verdicts</td></tr>\n";
  }
  h += "</tbody></table></section>\n";

  // Premises: a property whose premise never occurred proved nothing.
  h += "<section id=\"premises\"><h2>Premises exercised</h2>\n";
  if (review.premises.empty()) {
    h += "<p>No verdict counted a premise.</p>\n";
  } else {
    h += "<table><thead><tr><th>property</th><th>premise</th><th>occurrences</th><th>scenarios</th>"
         "<th>never reached in</th></tr></thead><tbody>\n";
    for (const auto& p : review.premises) {
      std::string names;
      for (const auto& n : p.unreached) names += (names.empty() ? "" : ", ") + n;
      h += "<tr" + std::string(p.count == 0 ? " class=\"zero\"" : "") + "><td>" + H(p.oracle) + "</td><td>" +
           H(p.what) + "</td><td>" +
           (p.count == 0 ? "<span class=\"flag\">0 \u2014 never exercised: proves nothing</span>"
                         : std::to_string(p.count)) +
           "</td><td>" + std::to_string(p.scenarios) + "</td><td" + (names.empty() ? "" : " class=\"flag\"") + ">" +
           (names.empty() ? "\u2014" : H(names)) + "</td></tr>\n";
    }
    h += "</tbody></table>\n";
  }
  // Every family, exercised or not, and what a family nothing exercised lacks.
  if (!review.coverage.families.empty()) {
    h += "<h3>Premises by family</h3>\n<p>Each family (scenario file) is exercised when a row of it ran and what "
         "its properties are about happened; a family that ran while its premises stayed at 0 proved nothing; a "
         "family nothing could exercise says what the target lacks.</p>\n"
         "<table id=\"premises-by-family\"><thead><tr><th>family</th><th>layer</th><th>exercised</th><th>premises</th>"
         "<th>what the target lacks</th></tr></thead><tbody>\n";
    for (const auto& f : review.coverage.families) {
      const std::string premises = f.PremisesText();
      const std::string lacking = f.LackingText();
      const bool flag = f.exercise != FamilyExercise::kExercised;
      h += "<tr><td title=\"" + H(f.hunts) + "\">" + H(f.family) + "</td><td>" + H(f.layer_title) + "</td><td" +
           (flag ? " class=\"flag\"" : "") + ">" + FamilyExerciseName(f.exercise) + "</td><td>" +
           (premises.empty() ? "\u2014" : H(premises)) + "</td><td" + (lacking.empty() ? "" : " class=\"flag\"") +
           ">" + (lacking.empty() ? "\u2014" : H(lacking)) + "</td></tr>\n";
    }
    h += "</tbody></table>\n";
  }
  h += "</section>\n";

  // Families against actions: what lies between the files shows as an empty cell.
  const FamilyCoverage& cov = review.coverage;
  h += "<section id=\"families\"><h2>Families by action</h2>\n"
       "<p>Each scenario file is a family of failures, bound to every action of the target that fits; a cell is "
       "the worst outcome of the family's rows on that action.</p>\n";
  if (cov.families.empty()) {
    h += "<p>No scenario ran.</p>\n";
  } else {
    h += "<table><thead><tr><th>family</th><th>layer</th>";
    for (const auto& a : cov.actions) h += "<th>" + H(a) + "</th>";
    if (cov.any_target_wide) h += "<th>target-wide</th>";
    h += "<th>not exercised: what the target lacks</th></tr></thead><tbody>\n";
    auto cell = [&](const std::optional<VerdictStatus>& o) {
      if (!o) return std::string("<td>\u2014</td>");
      return "<td class=\"verdict " + std::string(OutcomeClass(*o)) + "\">" + OutcomeName(*o) + "</td>";
    };
    for (const auto& f : cov.families) {
      std::string name = f.anchor.empty() ? H(f.family) : "<a href=\"#" + A(f.anchor) + "\">" + H(f.family) + "</a>";
      h += "<tr><td title=\"" + H(f.hunts) + "\">" + name + "</td><td>" + H(f.layer_title) + "</td>";
      for (const auto& a : cov.actions) {
        auto it = f.by_action.find(a);
        h += cell(it == f.by_action.end() ? std::nullopt : std::optional<VerdictStatus>(it->second));
      }
      if (cov.any_target_wide) h += cell(f.target_wide);
      std::string lacking;
      for (const auto& l : f.lacking) lacking += (lacking.empty() ? "" : "; ") + l;
      h += "<td" + std::string(lacking.empty() ? "" : " class=\"flag\"") + ">" +
           (lacking.empty() ? "\u2014" : H(lacking)) + "</td></tr>\n";
    }
    h += "</tbody></table>\n";
    if (!cov.unexercised.empty()) {
      std::string names;
      for (const auto& a : cov.unexercised) names += (names.empty() ? "" : ", ") + a;
      h += "<p class=\"flag\">No family judged these actions: " + H(names) +
           " (give them a role, or write a scenario for them).</p>\n";
    }
  }
  h += "</section>\n";

  // Faults.
  h += "<section id=\"faults\"><h2>Faults injected</h2>\n";
  if (review.faults.empty()) {
    h += "<p>No scenario declared a fault.</p>\n";
  } else {
    h += "<table><thead><tr><th>injector</th><th>times injected</th><th>scenarios</th></tr></thead><tbody>\n";
    for (const auto& f : review.faults) {
      std::string names;
      for (const auto& n : f.scenarios) names += (names.empty() ? "" : ", ") + n;
      h += "<tr" + std::string(f.injected == 0 ? " class=\"zero\"" : "") + "><td>" + H(f.name) + "</td><td>" +
           (f.injected == 0 ? "<span class=\"flag\">0 \u2014 never fired: proves nothing</span>"
                            : std::to_string(f.injected)) +
           "</td><td>" + H(names) + "</td></tr>\n";
    }
    h += "</tbody></table>\n";
  }
  if (!review.warnings.empty()) {
    h += "<h3>Warnings</h3><ul>";
    for (const auto& w : review.warnings) h += "<li class=\"flag\">" + H(w) + "</li>";
    h += "</ul>\n";
  }
  h += "</section>\n";

  // Metrics.
  h += "<section id=\"metrics\"><h2>Metrics</h2>\n<table class=\"metrics\"><tbody>\n";
  for (const auto& row : MetricRows(review, H))
    h += "<tr><th>" + row.name + "</th><td>" + row.value + "</td><td class=\"meta\">" + row.meaning + "</td></tr>\n";
  h += "</tbody></table></section>\n";

  h += "<footer>idemproof " + H(r.tool_version) + " \u00b7 run " + H(r.run_id) + " \u00b7 " + H(r.started) + " \u2192 " +
       (r.complete ? H(r.finished) : std::string("did not finish")) + " \u00b7 target file " + H(r.target_file) + "</footer>\n</main>\n</body>\n</html>\n";
  return h;
}

}  // namespace idemproof
