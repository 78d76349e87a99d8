#include "reports/design_review/markdown_report.h"

#include <cstdio>
#include <set>

#include "model/conformance.h"
#include "model/not_applicable.h"
#include "reports/design_review/markdown_escape.h"
#include "reports/design_review/timeline_svg.h"

namespace idemproof {
namespace {

std::string M(const std::string& text) { return MarkdownEscape(text); }

std::string StateMark(LayerState state) {
  switch (state) {
    case LayerState::kBroken: return "\u274c **broken**";
    case LayerState::kUndecided: return "\u2753 **undecided**";
    case LayerState::kHeld: return "\u2705 held";
    case LayerState::kNotTested: return "\u2796 not tested";
  }
  return "?";
}

// A request already shown in full for this scenario gets one line.
void Answer(std::string& md, const AnswerView& a, std::set<std::int64_t>& shown) {
  md += "**" + M(a.role) + "** \u2014 request \\#" + std::to_string(a.index);
  if (a.index >= 0 && !shown.insert(a.index).second) {
    md += (a.status ? ": " + std::to_string(*a.status) : std::string()) + " (shown above)\n\n";
    return;
  }
  if (!a.process.empty()) md += " (" + M(a.process) + ")";
  if (!a.key.empty()) md += ", key " + M(a.key);
  if (a.status) md += ": **" + std::to_string(*a.status) + "**";
  else if (a.outcome == "info") md += ": no answer (lost)";
  else if (!a.outcome.empty() && a.outcome != "ok") md += ": " + M(a.outcome);
  if (!a.error.empty()) md += ", error " + M(a.error);
  md += "\n\n";
  if (!a.headers.empty() || !a.body.empty() || a.status) {
    std::string text;
    for (const auto& [k, v] : a.headers) text += k + ": " + v + "\n";
    if (!a.headers.empty()) text += "\n";
    text += DisplayBody(a.body);
    md += MarkdownFence(text, "http") + "\n";
  }
}

}  // namespace

namespace {

// The profile's rules as a checklist (model/conformance.h); each cell short:
// a few scenario names, the rest counted.
std::string ConformanceMarkdown(const RunResults& r) {
  const ConformanceTable table = Conformance(r);
  std::string md = "\n## Conformance to profile " + M(r.profile) + "\n\n";
  if (!table.known_profile) return md + "This build does not know the profile: no checklist.\n";
  md += table.CountsText() + ".\n\n| rule | level | state | scenarios | the rule |\n|---|---|---|---|---|\n";
  for (const auto& row : table.rows) {
    const std::string state = ConformanceStateName(row.state);
    md += "| `" + row.rule + "` | " + row.level + " | " +
          (row.state == ConformanceState::kBroken ? "**" + state + "**" : state) + " | " + M(row.EvidenceText(r)) +
          " | " + M(row.text) + " |\n";
  }
  return md;
}

}  // namespace

namespace {

// The cells of a table line, split on '|' not escaped by '\' (the line's
// leading and trailing bars dropped).
std::vector<std::string> TableCells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|' && line[i - 1] != '\\') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// `cell` cut to at most `max` bytes where the Markdown stays whole: after a
// "<br>" list item when there is one, else at a space outside any link, never
// after a lone escaping '\'.
std::string CutCell(const std::string& cell, std::size_t max) {
  std::size_t cut = cell.rfind("<br>", max);
  if (cut == std::string::npos || cut == 0) {
    cut = cell.rfind(' ', max);
    if (cut == std::string::npos || cut == 0) cut = max;
    // Not inside a link: an unescaped '[' after the last "](...)" closed.
    for (std::size_t i = cut; i-- > 0;) {
      if (cell[i] == ')' && (i == 0 || cell[i - 1] != '\\')) break;
      if (cell[i] == '[' && (i == 0 || cell[i - 1] != '\\')) {
        cut = i;
        break;
      }
    }
    std::size_t slashes = 0;
    while (slashes < cut && cell[cut - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 1) --cut;
    while (cut > 0 && (static_cast<unsigned char>(cell[cut]) & 0xC0) == 0x80) --cut;  // not inside UTF-8
  }
  return cell.substr(0, cut);
}

// Every table cell longer than kMarkdownCellChars cut, with a numbered link
// to its whole text, which follows the table.
std::string CapTableCells(const std::string& md) {
  std::string out, notes;
  int numbered = 0;
  std::size_t pos = 0;
  while (pos < md.size()) {
    std::size_t end = md.find('\n', pos);
    if (end == std::string::npos) end = md.size();
    const std::string line = md.substr(pos, end - pos);
    pos = end + 1;
    const bool row = line.size() > 1 && line[0] == '|';
    if (!row && !notes.empty()) {
      out += "\n" + notes;
      notes.clear();
    }
    if (!row) {
      out += line + "\n";
      continue;
    }
    std::vector<std::string> cells = TableCells(line);
    std::string rebuilt = "|";
    for (auto& cell : cells) {
      if (cell.size() > kMarkdownCellChars) {
        const std::string id = "cell-" + std::to_string(++numbered);
        // The anchor on a line of its own, as every anchor of ours.
        notes += "<a id=\"" + id + "\"></a>\n\n[" + std::to_string(numbered) + "] " + cell + "\n\n";
        cell = CutCell(cell, kMarkdownCellChars - 40) + " … [[" + std::to_string(numbered) + "]](#" + id + ") ";
      }
      rebuilt += cell + "|";
    }
    out += rebuilt + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  if (!md.empty() && md.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

}  // namespace

MarkdownReport RenderMarkdownReport(const RunDirectoryContents& contents, const RunReview& review,
                                    const std::string& timeline_dir) {
  const RunResults& r = contents.results;
  MarkdownReport out;
  std::string& md = out.markdown;
  md += "# idemproof: " + M(review.headline) + "\n\n";
  md += "Target **" + M(r.target_name) + "**" + (r.flaw.empty() ? "" : " with flaw **" + M(r.flaw) + "**") +
        " \u00b7 profile **" + M(r.profile) + "** \u00b7 " +
        std::to_string(r.scenarios.size()) + " scenario(s) \u00b7 seed `" + std::to_string(r.seed) +
        "` \u00b7 exit code " + std::to_string(review.exit_code) + " \u00b7 run " + M(r.run_id) + " \u00b7 " +
        M(r.started) + "\n\n";
  if (const std::string note = r.ShardNote(); !note.empty()) md += "**" + M(note) + "**\n\n";
  if (const std::string note = r.TlsNote(); !note.empty()) md += "**" + M(note) + "**\n\n";
  if (const std::string note = NotApplicableHeadline(r); !note.empty())
    md += "**" + M(note) + "**" + (NotApplicableCauses(r).empty() ? "" : " (what would test them: below)") + "\n\n";

  // Layers against properties: each cell the worst verdict, how many, a link.
  md += "## Verdict at a glance\n\n| layer | verdict |";
  std::string rule = "|---|---|";
  for (const auto& p : MatrixProperties()) {
    md += " " + p.title + " |";
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (const auto& row : review.matrix) {
    md += "| " + M(row.layer_title) + " | " + StateMark(row.state) + " |";
    for (const auto& c : row.cells) {
      const std::string label = CellStateName(c.state);
      if (c.state == CellState::kNone) md += " " + label + " |";
      else md += " [" + (c.state == CellState::kBroken ? "**" + label + "**" : label) + " \u00d7" +
                 std::to_string(c.count) + "](#" + c.anchor + ") |";
    }
    md += "\n";
  }
  if (const auto causes = NotApplicableCauses(r); !causes.empty()) {
    md += "\n### Not tested, and what would test it\n\n";
    for (const auto& c : causes)
      md += "- **" + std::to_string(c.rows) + " row(s)** need " + M(c.cause) +
            (c.add.empty() ? std::string() : ": add " + M(c.add)) + "\n";
  }

  md += ConformanceMarkdown(r);

  md += "\n## The four-layer table\n\n| layer | duplicate source exercised | key observed | store and window (declared) "
        "| concurrency guard observed | side-effect reconciliation observed | verdict | evidence |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : review.layers) {
    std::string sources;
    for (const auto& s : row.sources) sources += (sources.empty() ? "" : "<br>") + M(s);
    std::string links;
    for (const auto& l : row.evidence)
      links += (links.empty() ? "" : "<br>") + std::string("[") + M(l.label) + "](#" + l.anchor + ") (" +
               (l.error ? "could not run" : OutcomeName(l.outcome)) + ")";
    md += "| " + M(row.title) + " | " + (sources.empty() ? "not exercised" : sources) + " | " + M(row.key_observed) +
          " | " + M(row.store_window) + " | " + M(row.concurrency_guard) + " | " + M(row.reconciliation) + " | " +
          StateMark(row.state) + " | " + (links.empty() ? "\u2014" : links) + " |\n";
  }

  md += "\n## What broke\n\n";
  int failing = 0;
  for (const auto& sr : review.scenarios) {
    if (sr.outcome != VerdictStatus::kInvalid) continue;
    ++failing;
    const ScenarioResult& s = *sr.result;
    // An explicit anchor: heading slugs differ between renderers.
    md += "<a id=\"" + sr.anchor + "\"></a>\n\n### " + M(s.name) + " (" + M(sr.layer_title) + ")\n\n";
    md += "**" + M(sr.what_broke) + "**\n\n";
    if (!s.hunts.empty()) md += "Hunts: " + M(s.hunts) + "\n\n";
    std::set<std::int64_t> shown;
    for (const auto& v : sr.violations) {
      md += "- **" + M(v.oracle) + "**: " + M(v.problem) + "\n";
      if (v.records)
        md += "  - records counted: **" + std::to_string(*v.records) + "**" +
              (v.expected_records.empty() ? "" : " (expected " + M(v.expected_records) + ")") + "\n";
      for (const auto& d : v.differences) md += "  - difference: " + M(d) + "\n";
      for (const auto& range : v.missing_ranges) md += "  - missing range: " + M(range) + "\n";
      md += "\n";
      for (const auto& a : v.answers) Answer(md, a, shown);
    }
    if (sr.violations_omitted > 0)
      md += std::to_string(sr.violations_omitted) + " more violation(s) in results.json.\n\n";
    std::string svg = RenderScenarioTimeline(contents, sr);
    if (svg.empty()) {
      md += "No history recorded: no timeline.\n\n";
    } else {
      const std::string file = (timeline_dir.empty() ? "" : timeline_dir + "/") + sr.anchor + ".svg";
      out.timelines.emplace_back(file, std::move(svg));
      md += "Timeline: [![timeline of " + M(s.name) + "](" + file + ")](" + file + ")\n\n";
    }
    md += "Seed `" + std::to_string(r.seed) + "`. Reproduce:\n\n" + MarkdownFence(sr.repro_command, "sh") + "\n";
  }
  if (failing == 0) md += "Nothing broke: no oracle found a violation.\n\n";

  md += "## Hunt\n\n";
  if (!r.hunt) {
    md += "No hunt phase in this run (`--hunt 0`).\n\n";
  } else {
    md += "**" + M(r.hunt->Line()) + "**\n\n| hunt | value | meaning |\n|---|---|---|\n";
    for (const auto& row : HuntRows(*r.hunt, M)) md += "| " + row.name + " | " + row.value + " | " + row.meaning + " |\n";
    md += "\n";
    if (r.hunt->failure) md += "Replay the shrunk workload:\n\n" + MarkdownFence(r.hunt->failure->repro_command, "sh") + "\n";
  }

  md += "## All scenarios\n\n| scenario | layer | oracle | verdict | premise | rule | evidence |\n|---|---|---|---|---|---|---|\n";
  for (const auto& sr : review.scenarios) {
    const ScenarioResult& s = *sr.result;
    const std::string name = sr.outcome == VerdictStatus::kInvalid ? "[" + M(s.name) + "](#" + sr.anchor + ")" : M(s.name);
    for (const auto& v : s.verdicts) {
      md += "| " + name + " | " + M(sr.layer_title) + " | " + M(v.oracle) + " | " +
            (v.is_violation() ? "**invalid**" : std::string(v.Label())) + " | " + M(PremiseText(v)) + " | " +
            M(v.rule.id.empty() ? "" : v.rule.id + " (" + v.rule.level + ")") + " | " + M(v.evidence) + " |\n";
    }
    if (!s.error.empty()) md += "| " + name + " | " + M(sr.layer_title) + " | (run) | **error** | | | " + M(s.error) + " |\n";
    if (s.verdicts.empty() && s.error.empty()) md += "| " + name + " | " + M(sr.layer_title) + " | \u2014 | none | | | no verdicts |\n";
  }

  md += "\n## Premises exercised\n\n";
  if (review.premises.empty()) {
    md += "No verdict counted a premise.\n";
  } else {
    md += "| property | premise | occurrences | scenarios | never reached in |\n|---|---|---:|---:|---|\n";
    for (const auto& p : review.premises) {
      std::string names;
      for (const auto& n : p.unreached) names += (names.empty() ? "" : ", ") + n;
      md += "| " + M(p.oracle) + " | " + M(p.what) + " | " +
            (p.count == 0 ? std::string("**0 \u26a0 never exercised: proves nothing**") : std::to_string(p.count)) +
            " | " + std::to_string(p.scenarios) + " | " + (names.empty() ? "\u2014" : "\u26a0 " + M(names)) + " |\n";
    }
  }

  // Every family, exercised or not, and what a family nothing exercised lacks.
  if (!review.coverage.families.empty()) {
    md += "\n### Premises by family\n\nEach family (scenario file) is exercised when a row of it ran and what its "
          "properties are about happened; a family that ran while its premises stayed at 0 proved nothing; a "
          "family nothing could exercise says what the target lacks.\n\n"
          "| family | layer | exercised | premises | what the target lacks |\n|---|---|---|---|---|\n";
    for (const auto& f : review.coverage.families) {
      const std::string premises = f.PremisesText();
      const std::string lacking = f.LackingText();
      const bool flag = f.exercise != FamilyExercise::kExercised;
      md += "| " + M(f.family) + " | " + M(f.layer_title) + " | " +
            (flag ? "**\u26a0 " + std::string(FamilyExerciseName(f.exercise)) + "**"
                  : std::string(FamilyExerciseName(f.exercise))) +
            " | " + (premises.empty() ? std::string("\u2014") : M(premises)) + " | " +
            (lacking.empty() ? std::string("\u2014") : "\u26a0 " + M(lacking)) + " |\n";
    }
  }

  const FamilyCoverage& cov = review.coverage;
  md += "\n## Families by action\n\nEach scenario file is a family of failures, bound to every action of the "
        "target that fits; a cell is the worst outcome of the family's rows on that action.\n\n";
  if (cov.families.empty()) {
    md += "No scenario ran.\n";
  } else {
    std::string head = "| family | layer |", rule = "|---|---|";
    for (const auto& a : cov.actions) head += " " + M(a) + " |", rule += "---|";
    if (cov.any_target_wide) head += " target-wide |", rule += "---|";
    md += head + " not exercised: what the target lacks |\n" + rule + "---|\n";
    auto cell = [](const std::optional<VerdictStatus>& o) {
      if (!o) return std::string(" \u2014 |");
      return std::string(" ") + (*o == VerdictStatus::kInvalid ? "**broken**" : OutcomeName(*o)) + " |";
    };
    for (const auto& f : cov.families) {
      md += "| " + (f.anchor.empty() ? M(f.family) : "[" + M(f.family) + "](#" + f.anchor + ")") + " | " +
            M(f.layer_title) + " |";
      for (const auto& a : cov.actions) {
        auto it = f.by_action.find(a);
        md += cell(it == f.by_action.end() ? std::nullopt : std::optional<VerdictStatus>(it->second));
      }
      if (cov.any_target_wide) md += cell(f.target_wide);
      std::string lacking;
      for (const auto& l : f.lacking) lacking += (lacking.empty() ? "" : "; ") + l;
      md += " " + (lacking.empty() ? std::string("\u2014") : "\u26a0 " + M(lacking)) + " |\n";
    }
    if (!cov.unexercised.empty()) {
      std::string names;
      for (const auto& a : cov.unexercised) names += (names.empty() ? "" : ", ") + a;
      md += "\n\u26a0 No family judged these actions: " + M(names) +
            " (give them a role, or write a scenario for them).\n";
    }
  }

  md += "\n## Faults injected\n\n";
  if (review.faults.empty()) {
    md += "No scenario declared a fault.\n";
  } else {
    md += "| injector | times injected | scenarios |\n|---|---:|---|\n";
    for (const auto& f : review.faults) {
      std::string names;
      for (const auto& n : f.scenarios) names += (names.empty() ? "" : ", ") + n;
      md += "| " + M(f.name) + " | " +
            (f.injected == 0 ? std::string("**0 \u26a0 never fired: proves nothing**") : std::to_string(f.injected)) +
            " | " + M(names) + " |\n";
    }
  }
  if (!review.warnings.empty()) {
    md += "\nWarnings:\n\n";
    for (const auto& w : review.warnings) md += "- \u26a0 " + M(w) + "\n";
  }

  md += "\n## Metrics\n\n| metric | value | meaning |\n|---|---|---|\n";
  for (const auto& row : MetricRows(review, M))
    md += "| " + row.name + " | " + row.value + " | " + row.meaning + " |\n";
  md += "\n---\nidemproof " + M(r.tool_version) + " \u00b7 run " + M(r.run_id) + " \u00b7 target file " +
        M(r.target_file) + "\n";
  out.markdown = CapTableCells(out.markdown);
  return out;
}

}  // namespace idemproof
