// Conformance: the run's semantics profile as a checklist, one row per rule
// (model/profile.h: each oracle's effect rule, then its status rule when the
// profile has one), each held / broken / undecided / not tested, with the
// scenarios behind it. Derived from the verdicts alone, here and nowhere
// else: report.html, report.md, the CI job summary, results.json
// ("conformance") and `idemproof report --conformance` render this table.
//
//  broken     some verdict found the rule broken (for a SHOULD: a deviation).
//             A finding tagged "rule": "status" breaks the oracle's status
//             rule, any other finding its effect rule;
//  undecided  nothing broke it, some verdict of its oracle was unknown (or
//             its scenario could not run);
//  held       nothing broke it or left it undecided, and some verdict judged
//             it: a valid verdict holds both rules of its oracle, a finding
//             only about the status code holds the effect rule;
//  not tested no verdict of its oracle judged the target (none ran, or every
//             one was not applicable: `why_not` says what they lacked).
//
// Thread-safety: pure functions over plain values.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/results.h"

namespace idemproof {

enum class ConformanceState { kBroken, kUndecided, kHeld, kNotTested };
// "broken", "undecided", "held", "not tested".
const char* ConformanceStateName(ConformanceState state);

struct ConformanceRow {
  std::string rule;    // "ietf/mismatch-status"
  std::string level;   // "MUST" | "SHOULD"
  std::string text;    // the rule in its source's words
  std::string oracle;  // the oracle that applies it
  ConformanceState state = ConformanceState::kNotTested;
  // Scenario rows (RunResults::scenarios indices) behind each state, in run
  // order; `broken` decides the state before `undecided` before `held`.
  std::vector<std::size_t> broken, undecided, held;
  // For a not-tested rule: what its oracle's not-applicable verdicts lacked,
  // each said once ("no scenario of the run applies <oracle>" when none ran).
  std::vector<std::string> why_not;

  // The scenarios behind the state, short enough for a table cell:
  // "broken in a, b (+3 more)"; "held in 12 rows: a, b, c (+9 more)";
  // for not tested the first reason (and how many others).
  std::string EvidenceText(const RunResults& results, std::size_t names_shown = 3) const;
};

struct ConformanceTable {
  std::string profile;  // results.profile
  bool known_profile = false;  // false: this build has no such profile, rows empty
  std::vector<ConformanceRow> rows;  // by oracle name, effect rule before status rule
  int Count(ConformanceState state) const;
  // "3 held, 1 broken, 0 undecided, 19 not tested of 23 rules".
  std::string CountsText() const;
};

ConformanceTable Conformance(const RunResults& results);

// [{"rule","level","text","oracle","state","broken":[names],"undecided":[...],
//   "held":[...],"why_not":[...]}]: results.json's "conformance".
nlohmann::json ConformanceToJson(const ConformanceTable& table, const RunResults& results);

// The console table of `idemproof report --conformance`: a header line, then
// one line per rule (state, level, rule id, scenarios), every column aligned.
std::string ConformanceConsoleText(const ConformanceTable& table, const RunResults& results);

}  // namespace idemproof
