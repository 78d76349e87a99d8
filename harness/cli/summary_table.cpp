#include "cli/summary_table.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

namespace idemproof::cli {

namespace {

std::string one_line(std::string s, std::size_t max) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

}  // namespace

void PrintSummaryTable(const RunResults& results, std::ostream& out) {
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows;
  rows.push_back({"scenario", "layer", "oracle", "verdict", "evidence"});
  std::map<std::string, int> totals;
  for (const auto& s : results.scenarios) {
    if (!s.error.empty()) {
      rows.push_back({s.name, s.layer, "-", "error", one_line(s.error, 160)});
      ++totals["error"];
    }
    for (const auto& v : s.verdicts) {
      rows.push_back({s.name, s.layer, v.oracle, VerdictStatusName(v.status), one_line(v.evidence, 160)});
      ++totals[VerdictStatusName(v.status)];
    }
    for (const auto& w : s.warnings) rows.push_back({s.name, s.layer, "-", "warning", one_line(w, 160)});
  }
  std::array<std::size_t, 4> width{};
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (std::size_t n = 0; n < rows.size(); ++n) {
    const Row& r = rows[n];
    for (std::size_t i = 0; i < width.size(); ++i) out << r[i] << std::string(width[i] - r[i].size() + 2, ' ');
    out << r[4] << "\n";
    if (n == 0) {
      std::size_t total = 0;
      for (auto w : width) total += w + 2;
      out << std::string(total + 8, '-') << "\n";
    }
  }
  out << "\n" << results.scenarios.size() << " scenarios:";
  for (const char* k : {"valid", "invalid", "unknown", "not_applicable", "error"}) {
    if (totals[k] > 0) out << " " << totals[k] << " " << k;
  }
  out << "\n";
}

}  // namespace idemproof::cli
