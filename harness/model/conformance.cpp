#include "model/conformance.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "model/console_text.h"
#include "model/finding.h"
#include "model/profile.h"

namespace idemproof {

const char* ConformanceStateName(ConformanceState state) {
  switch (state) {
    case ConformanceState::kBroken: return "broken";
    case ConformanceState::kUndecided: return "undecided";
    case ConformanceState::kHeld: return "held";
    case ConformanceState::kNotTested: return "not tested";
  }
  return "?";
}

namespace {

void AddOnce(std::vector<std::size_t>& rows, std::size_t i) {
  if (rows.empty() || rows.back() != i) rows.push_back(i);
}

void AddOnce(std::vector<std::string>& texts, const std::string& text) {
  if (std::find(texts.begin(), texts.end(), text) == texts.end()) texts.push_back(text);
}

// Which of an oracle's two rules an invalid verdict broke: {effect, status}.
// With no status rule in the profile every finding is about the effect rule
// (the registry applies it to them, model/profile.h RuleFor).
std::pair<bool, bool> BrokenRules(const Verdict& v, const OracleRules& rules) {
  if (!rules.status) return {true, false};
  if (const auto& findings = v.details.Findings(); !findings.empty()) {
    bool effect = false, status = false;
    for (const Finding& f : findings) (f.rule == "status" ? status : effect) = true;
    return {effect, status};
  }
  const bool status = v.rule.id == rules.status->id;
  return {!status, status};
}

std::string NameList(const RunResults& results, const std::vector<std::size_t>& rows, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < rows.size() && i < shown; ++i) out += (i ? ", " : "") + results.scenarios[rows[i]].name;
  if (rows.size() > shown) out += " (+" + std::to_string(rows.size() - shown) + " more)";
  return out;
}

nlohmann::json Names(const RunResults& results, const std::vector<std::size_t>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i : rows) out.push_back(results.scenarios[i].name);
  return out;
}

}  // namespace

std::string ConformanceRow::EvidenceText(const RunResults& results, std::size_t names_shown) const {
  auto counted = [&](const char* what, const std::vector<std::size_t>& rows) {
    return std::string(what) + " in " + (rows.size() > 1 ? std::to_string(rows.size()) + " rows: " : "") +
           NameList(results, rows, names_shown);
  };
  switch (state) {
    case ConformanceState::kBroken: return counted("broken", broken);
    case ConformanceState::kUndecided: return counted("undecided", undecided);
    case ConformanceState::kHeld: return counted("held", held);
    case ConformanceState::kNotTested:
      if (why_not.empty()) return "";
      return why_not.front() + (why_not.size() > 1 ? " (+" + std::to_string(why_not.size() - 1) + " other reasons)" : "");
  }
  return "";
}

int ConformanceTable::Count(ConformanceState state) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [&](const ConformanceRow& r) { return r.state == state; }));
}

std::string ConformanceTable::CountsText() const {
  return std::to_string(Count(ConformanceState::kHeld)) + " held, " + std::to_string(Count(ConformanceState::kBroken)) +
         " broken, " + std::to_string(Count(ConformanceState::kUndecided)) + " undecided, " +
         std::to_string(Count(ConformanceState::kNotTested)) + " not tested of " + std::to_string(rows.size()) +
         " rules";
}

ConformanceTable Conformance(const RunResults& results) {
  ConformanceTable table;
  table.profile = results.profile;
  const SemanticsProfile* profile = FindProfile(results.profile);
  if (profile == nullptr) return table;
  table.known_profile = true;
  for (const auto& [oracle, rules] : profile->rules) {
    ConformanceRow effect, status;
    effect.oracle = status.oracle = oracle;
    effect.rule = rules.effect.id;
    effect.text = rules.effect.text;
    effect.level = RuleLevelName(rules.effect.level);
    if (rules.status) {
      status.rule = rules.status->id;
      status.text = rules.status->text;
      status.level = RuleLevelName(rules.status->level);
    }
    bool ran = false;
    for (std::size_t i = 0; i < results.scenarios.size(); ++i) {
      for (const Verdict& v : results.scenarios[i].verdicts) {
        if (v.oracle != oracle) continue;
        ran = true;
        // The level the run applied (retry_after takes it from the target).
        if (!v.rule.level.empty() && v.rule.id == effect.rule) effect.level = v.rule.level;
        switch (v.status) {
          case VerdictStatus::kValid:
            AddOnce(effect.held, i);
            AddOnce(status.held, i);
            break;
          case VerdictStatus::kInvalid: {
            const auto [effect_broken, status_broken] = BrokenRules(v, rules);
            AddOnce(effect_broken ? effect.broken : effect.held, i);
            if (status_broken) AddOnce(status.broken, i);
            break;
          }
          case VerdictStatus::kUnknown:
            AddOnce(effect.undecided, i);
            AddOnce(status.undecided, i);
            break;
          case VerdictStatus::kNotApplicable: {
            const auto& needs = v.details.lists.needs;
            std::string why = v.evidence;
            if (needs && !needs->empty()) {
              why = "needs ";
              for (std::size_t n = 0; n < needs->size(); ++n) why += (n ? ", " : "") + (*needs)[n];
            }
            AddOnce(effect.why_not, why);
            AddOnce(status.why_not, why);
            break;
          }
        }
      }
    }
    if (!ran) effect.why_not = status.why_not = {"no scenario of the run applies " + oracle};
    // Judged, but only its effect: no finding was about the status code alone.
    if (ran && status.broken.empty() && status.undecided.empty() && status.held.empty() && status.why_not.empty())
      status.why_not = {"not judged apart: every finding of " + oracle + " was about its effect"};
    for (ConformanceRow* row : {&effect, &status}) {
      if (row->rule.empty()) continue;
      row->state = !row->broken.empty()      ? ConformanceState::kBroken
                   : !row->undecided.empty() ? ConformanceState::kUndecided
                   : !row->held.empty()      ? ConformanceState::kHeld
                                             : ConformanceState::kNotTested;
      if (row->state != ConformanceState::kNotTested) row->why_not.clear();
      table.rows.push_back(std::move(*row));
    }
  }
  return table;
}

nlohmann::json ConformanceToJson(const ConformanceTable& table, const RunResults& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : table.rows) {
    rows.push_back({{"rule", r.rule},
                    {"level", r.level},
                    {"text", r.text},
                    {"oracle", r.oracle},
                    {"state", ConformanceStateName(r.state)},
                    {"broken", Names(results, r.broken)},
                    {"undecided", Names(results, r.undecided)},
                    {"held", Names(results, r.held)},
                    {"why_not", r.why_not}});
  }
  return rows;
}

std::string ConformanceConsoleText(const ConformanceTable& table, const RunResults& results) {
  if (!table.known_profile) return "conformance: profile " + ConsoleSafe(table.profile) + " is not known to this build\n";
  std::size_t rule_width = 4;
  for (const auto& r : table.rows) rule_width = std::max(rule_width, r.rule.size());
  auto pad = [](std::string s, std::size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s; };
  std::string out = "conformance to profile " + ConsoleSafe(table.profile) + ": " + table.CountsText() + "\n";
  out += pad("state", 11) + pad("level", 7) + pad("rule", rule_width + 2) + "scenarios\n";
  for (const auto& r : table.rows)
    out += pad(ConformanceStateName(r.state), 11) + pad(r.level, 7) + pad(r.rule, rule_width + 2) +
           ConsoleSafe(r.EvidenceText(results)) + "\n";
  return out;
}

}  // namespace idemproof
