#include "cli/summary_table.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
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
      rows.push_back({s.name, s.layer, v.oracle, v.Label(), one_line(v.evidence, 160)});
      ++totals[v.Label()];
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
  for (const char* k : {"valid", "invalid", "deviation", "unknown", "not_applicable", "error"}) {
    if (totals[k] > 0) out << " " << totals[k] << " " << k;
  }
  out << "\n";
  if (totals["deviation"] > 0)
    out << (results.strict ? "deviations (a SHOULD missed) fail this run: --strict\n"
                           : "deviations (a SHOULD missed) do not fail the run; --strict makes them fail\n");
  // The four metrics of the design article (seed 002, section 5), always
  // printed: "n/a" when the run gave nothing to measure them on.
  const Metrics m = results.TotalMetrics();
  auto rate = [](const std::optional<double>& r, std::int64_t num, std::int64_t den) {
    if (!r) return std::string("n/a");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f (%lld/%lld)", *r, static_cast<long long>(num), static_cast<long long>(den));
    return std::string(buf);
  };
  out << "metrics: duplicate rate " << rate(m.duplicate_rate(), m.keys_sent_more_than_once, m.keys_sent)
      << ", false-dedup rate " << rate(m.false_dedup_rate(), m.replay_answers_without_record, m.replay_answers)
      << ", rerun diff rows " << (m.rerun_diff_rows ? std::to_string(*m.rerun_diff_rows) : std::string("n/a"))
      << ", window hit rate " << rate(m.window_hit_rate(), m.window_retries_recognised, m.window_retries) << "\n";
}

}  // namespace idemproof::cli
