// Findings as cards (issue 48 item 2): report.html's "What broke" section.
// One card per finding an oracle reported, violations first (run order),
// then deviations (a SHOULD missed). A card shows the problem in one line,
// the rule it breaks and the premise count of its verdict, its first two
// answers side by side as a diff (status, headers, body lines; identical
// headers and further answers folded into <details>), the scenario's
// timeline (in the scenario's first card; later ones link to it) and the
// command that reproduces the scenario.
//
// The renderer reads only FindingCardsInput, filled in one place
// (FindingCardsOf) from the run's review: a change to how findings are
// stored touches that function, not the markup.
//
// Every string is raw text; the renderer escapes it (a target's answers
// stay inert), the timeline SVG excepted (RenderScenarioTimeline escapes).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/design_review/run_review.h"
#include "session/run_contents.h"

namespace idemproof {

struct FindingCard {
  std::string anchor;           // the card's id: "f-<scenario anchor>-<n>"
  std::string scenario_anchor;  // the scenario's first card (its timeline)
  std::string scenario;         // name
  std::string layer;            // "client"
  std::string hunts;            // the scenario's one line
  std::string oracle;
  bool deviation = false;       // a SHOULD missed, else a violation (MUST)
  std::string problem;          // one line
  std::string rule;             // "ietf/mismatch-status (SHOULD): ..." ("" = none)
  std::string premise;          // "overlapping duplicates ×7" ("" = the oracle counts none)
  std::vector<AnswerView> answers;        // the first two are diffed side by side
  std::vector<std::string> differences;   // what the oracle compared and found unequal
  std::optional<std::int64_t> records;    // records counted, when the oracle counted
  std::string expected_records;
  std::vector<std::string> missing_ranges;
  std::string timeline_svg;     // "" = in an earlier card of the scenario, or no history
  bool has_history = true;      // false: the scenario recorded no history
  std::string repro_command;
};

struct FindingCardsInput {
  std::vector<FindingCard> cards;  // violations, then deviations
  int omitted = 0;                 // findings past those shown per verdict (in results.json)
  std::uint64_t seed = 0;
};

// The one place the cards are filled from the review: every scenario's
// invalid verdicts, each finding its review kept (ScenarioReview::violations)
// or, for a verdict without one, its evidence.
FindingCardsInput FindingCardsOf(const RunDirectoryContents& contents, const RunReview& review);

// The section's inner HTML: the cards, or a line saying nothing broke.
std::string RenderFindingCards(const FindingCardsInput& input);

// The CSS the cards need (part of the page's one <style>).
const char* FindingCardsStyle();

// `text` escaped for HTML text, a break opportunity (<wbr/>) placed every
// 24 characters inside any run of more than 32 without a space (a key, a
// URL, a hash), so a table column need never be narrower than its longest
// word: ordinary words are never cut.
std::string HtmlBreakable(const std::string& text);

}  // namespace idemproof
