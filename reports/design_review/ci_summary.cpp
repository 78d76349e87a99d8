#include "reports/design_review/ci_summary.h"

#include <map>
#include <vector>

#include "model/conformance.h"
#include "model/not_applicable.h"
#include "reports/design_review/markdown_escape.h"
#include "reports/design_review/run_review.h"

namespace idemproof {
namespace {

struct LayerCounts {
  int rows = 0, valid = 0, violated = 0, deviating = 0, undecided = 0, not_applicable = 0;
};

std::string Cut(const std::string& text) {
  if (text.size() <= kCiEvidenceChars) return text;
  std::size_t end = kCiEvidenceChars;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 sequence
  return text.substr(0, end) + " … (" + std::to_string(text.size() - end) + " bytes more in the run directory)";
}

std::string BindingText(const ScenarioResult& s) {
  std::string out;
  for (const auto& [param, name] : s.binding) out += (out.empty() ? "" : ", ") + param + " = " + name;
  return out;
}

std::string Heading(const ScenarioResult& s) {
  std::string h = "#### " + MarkdownEscapeInert(s.name) + " (" + MarkdownEscapeInert(s.layer) + ")";
  if (!s.binding.empty()) h += ", binding " + MarkdownEscapeInert(BindingText(s));
  return h + "\n\n";
}

// The profile's rules as a checklist (model/conformance.h), folded: the
// summary stays short, broken rules are named in the fold's title.
std::string CiConformance(const RunResults& r) {
  const ConformanceTable table = Conformance(r);
  if (!table.known_profile) return "";
  std::string md = "\n<details><summary>Conformance to " + MarkdownEscapeInert(r.profile) + ": " + table.CountsText() +
                   "</summary>\n\n";
  md += "| rule | level | state | scenarios |\n|---|---|---|---|\n";
  for (const auto& row : table.rows)
    md += "| `" + row.rule + "` | " + row.level + " | " + ConformanceStateName(row.state) + " | " +
          MarkdownEscapeInert(Cut(row.EvidenceText(r))) + " |\n";
  return md + "\n</details>\n";
}

}  // namespace

std::string RenderCiSummary(const RunResults& r) {
  const int exit_code = r.ExitCode();
  const char* outcome = exit_code == 0   ? "every property holds"
                        : exit_code == 1 ? "VIOLATIONS"
                                         : "could not decide";
  std::string md = "## idemproof: " + MarkdownEscapeInert(r.target_name) + ": " + outcome + " (exit " +
                   std::to_string(exit_code) + ")\n\n";
  md += "Seed `" + std::to_string(r.seed) + "`";
  if (!r.run_namespace.empty()) md += ", namespace `" + MarkdownEscapeInert(r.run_namespace) + "`";
  if (!r.flaw.empty()) md += ", flaw `" + MarkdownEscapeInert(r.flaw) + "`";
  md += ", profile " + MarkdownEscapeInert(r.profile) + (r.strict ? ", --strict" : "") + ".";
  if (const std::string shard = r.ShardNote(); !shard.empty()) md += " " + MarkdownEscapeInert(shard) + ".";
  md += "\n\n";

  std::map<std::string, LayerCounts> layers;
  std::vector<const ScenarioResult*> failed, undecided;
  for (const auto& s : r.scenarios) {
    LayerCounts& row = layers[s.layer];
    ++row.rows;
    switch (s.Outcome(r.strict)) {
      case VerdictStatus::kInvalid: ++row.violated; failed.push_back(&s); break;
      case VerdictStatus::kUnknown: ++row.undecided; undecided.push_back(&s); break;
      case VerdictStatus::kNotApplicable: ++row.not_applicable; break;
      case VerdictStatus::kValid:
        ++row.valid;
        if (s.Deviations() > 0) ++row.deviating;
        break;
    }
  }
  md += "| layer | rows | hold | violated | of those holding, deviating | undecided | not applicable |\n";
  md += "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [layer, row] : layers) {
    md += "| " + MarkdownEscapeInert(layer) + " | " + std::to_string(row.rows) + " | " + std::to_string(row.valid) +
          " | " + std::to_string(row.violated) + " | " + std::to_string(row.deviating) + " | " +
          std::to_string(row.undecided) + " | " + std::to_string(row.not_applicable) + " |\n";
  }
  if (const std::string na = NotApplicableNote(r); !na.empty()) md += "\n" + MarkdownEscapeInert(na) + "\n";

  if (!failed.empty()) {
    md += "\n### Violations\n\n";
    for (const ScenarioResult* s : failed) {
      md += Heading(*s);
      for (const auto& v : s->verdicts) {
        if (!v.is_violation() && !(r.strict && v.is_deviation())) continue;
        md += "- **" + MarkdownEscapeInert(v.oracle) + "**" + (v.is_deviation() ? " (deviation)" : "") + ": " +
              MarkdownEscapeInert(Cut(v.evidence)) + "\n";
        if (!v.rule.id.empty())
          md += "  rule " + MarkdownEscapeInert(v.rule.id + " (" + v.rule.level + "): " + v.rule.text) + "\n";
      }
      md += "\nReproduce:\n\n" + MarkdownFence(ReproCommand(r, *s), "sh") + "\n";
    }
  }
  if (!undecided.empty()) {
    md += "\n### Undecided\n\n";
    for (const ScenarioResult* s : undecided) {
      std::string why = s->error;
      for (const auto& v : s->verdicts)
        if (why.empty() && v.status == VerdictStatus::kUnknown) why = v.oracle + ": " + v.evidence;
      md += "- " + MarkdownEscapeInert(s->name) + ": " + MarkdownEscapeInert(Cut(why)) + "\n";
    }
  }
  if (r.hunt) md += "\n**" + MarkdownEscapeInert(Cut(r.hunt->Line())) + "**\n";
  md += CiConformance(r);
  md += "\nThe whole run (report.html, junit.xml, results.json, histories) is in its run directory `" +
        MarkdownEscapeInert(r.run_id) + "`.\n";
  return md;
}

}  // namespace idemproof
