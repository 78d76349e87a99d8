#include "model/not_applicable.h"

#include <algorithm>
#include <map>
#include <set>

namespace idemproof {

std::string NotApplicableHeadline(const RunResults& results) {
  int rows = 0;
  for (const auto& s : results.scenarios)
    if (!s.NotApplicableReason().empty()) ++rows;
  std::string out;
  if (results.NothingTested()) {
    out = "nothing was tested: no row judged the target (" + std::to_string(results.scenarios.size()) + " row(s)";
    const auto undecided = std::count_if(results.scenarios.begin(), results.scenarios.end(), [](const ScenarioResult& s) {
      return s.Outcome() == VerdictStatus::kUnknown;
    });
    if (undecided > 0) out += ", " + std::to_string(undecided) + " undecided";
    out += "), exit 3";
    if (rows > 0) out += "; ";
  }
  if (rows == 0) return out;
  return out + std::to_string(rows) + " of " + std::to_string(results.scenarios.size()) + " row(s) not applicable";
}

std::string NotApplicableNote(const RunResults& results) {
  const auto groups = results.NotApplicableGroups();
  std::string out = NotApplicableHeadline(results);
  if (groups.empty()) return out;
  out += ":";
  for (std::size_t i = 0; i < groups.size(); ++i)
    out += std::string(i ? ";" : "") + " " + std::to_string(groups[i].second) + " " + groups[i].first;
  return out;
}

std::vector<NotApplicableCause> NotApplicableCauses(const RunResults& results) {
  std::map<std::string, int> rows;  // need -> rows
  for (const auto& s : results.scenarios) {
    if (s.Outcome() != VerdictStatus::kNotApplicable) continue;
    std::set<std::string> needs;
    for (const auto& v : s.verdicts) {
      if (const auto& n = v.details.lists.needs) needs.insert(n->begin(), n->end());
    }
    if (needs.empty()) needs.insert(s.NotApplicableReason());
    for (const auto& need : needs) ++rows[need];
  }
  std::vector<NotApplicableCause> out;
  for (const auto& [need, n] : rows) {
    NotApplicableCause c{need, need, "", n};
    // "... (target 'egress' with protocol: tcp: ...) for fault x": the
    // parenthesis names what to add; the cause reads on without it.
    const std::size_t open = need.find("(target '");
    if (open != std::string::npos) {
      int depth = 0;
      std::size_t close = open;
      for (; close < need.size(); ++close) {
        if (need[close] == '(') ++depth;
        if (need[close] == ')' && --depth == 0) break;
      }
      if (close < need.size()) {
        c.add = need.substr(open + 1, close - open - 1);
        std::string cause = need.substr(0, open);
        while (!cause.empty() && cause.back() == ' ') cause.pop_back();
        c.cause = cause + need.substr(close + 1);
      }
    }
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rows > b.rows; });
  return out;
}

}  // namespace idemproof
