#include "cli/summary_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/console_text.h"
#include "model/not_applicable.h"

namespace idemproof::cli {

namespace {

// The quoted bodies of `s` ("201 {...}"): from a '{' to its matching '}',
// or to the "..." AnswerSummary cut it at (or the end), as [begin, end).
std::vector<std::pair<std::size_t, std::size_t>> BodySpans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = 0;
  while ((i = s.find('{', i)) != std::string::npos) {
    int depth = 0;
    bool in_string = false;
    std::size_t j = i;
    for (; j < s.size(); ++j) {
      const char c = s[j];
      if (s.compare(j, 3, "...") == 0) {  // AnswerSummary's cut, inside a string or not
        j += 3;
        break;
      }
      if (in_string) {
        if (c == '\\') ++j;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        ++j;
        break;
      }
    }
    out.emplace_back(i, std::min(j, s.size()));
    i = std::min(j, s.size());
  }
  return out;
}

// Where the tail a shortened evidence keeps starts: its set-aside clause
// ("; 3 answer(s) set aside: ...", oracles/oracle_support.h) with anything
// after it, else a trailing " [reason]"; npos when there is neither.
std::size_t KeptTail(const std::string& s) {
  const std::size_t mark = s.rfind(" answer(s) set aside: ");
  if (mark != std::string::npos) {
    const std::size_t semi = s.rfind("; ", mark);
    if (semi != std::string::npos && semi + 2 < mark &&
        std::all_of(s.begin() + semi + 2, s.begin() + mark, [](unsigned char c) { return std::isdigit(c); }))
      return semi;
  }
  return !s.empty() && s.back() == ']' ? s.rfind(" [") : std::string::npos;
}

// One line of at most `max` characters that keeps the words: the quoted
// bodies are shortened first, then the text before the tail it keeps (how
// many answers were set aside and why, a trailing "[reason]"), and only a
// tail longer than the whole column is cut itself.
// Target text reaches the evidence: never a raw control byte on the terminal.
std::string one_line(const std::string& text, std::size_t max) {
  std::string s = text;
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  s = ConsoleSafe(s);
  for (std::size_t keep : {48, 24, 12}) {
    if (s.size() <= max) return s;
    auto spans = BodySpans(s);
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      if (it->second - it->first > keep + 3) s.replace(it->first + keep, it->second - it->first - keep, "...");
    }
  }
  if (s.size() <= max) return s;
  for (std::size_t open : {KeptTail(s), s.back() == ']' ? s.rfind(" [") : std::string::npos}) {
    if (open != std::string::npos && s.size() - open + 3 < max) {
      const std::string tail = s.substr(open);
      return s.substr(0, max - tail.size() - 3) + "..." + tail;
    }
  }
  return s.substr(0, max - 3) + "...";
}

}  // namespace

namespace {

// `text` cut into lines of at most `width` characters at spaces (a word
// longer than that is its own line).
std::vector<std::string> Wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(i, end - i);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    i = end + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

void PrintNotApplicableTable(const RunResults& results, std::ostream& out, std::size_t column) {
  const std::string headline = NotApplicableHeadline(results);
  if (headline.empty()) return;
  const auto causes = NotApplicableCauses(results);
  out << ConsoleSafe(headline) << (causes.empty() ? "" : ":") << "\n";
  if (causes.empty()) return;
  std::size_t cause_width = 5;
  for (const auto& c : causes) cause_width = std::max(cause_width, std::min(column, ConsoleSafe(c.cause).size()));
  auto pad = [](const std::string& s, std::size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s; };
  out << "  rows  #    " << pad("cause", cause_width) << "  what to add to the target file\n";
  for (std::size_t k = 0; k < causes.size(); ++k) {
    const auto& c = causes[k];
    const auto cause = Wrap(ConsoleSafe(c.cause), column);
    const auto add = Wrap(c.add.empty() ? "-" : ConsoleSafe(c.add), column);
    const std::string n = std::to_string(c.rows);
    for (std::size_t i = 0; i < std::max(cause.size(), add.size()); ++i) {
      std::string line = "  " + (i == 0 ? pad(std::string(n.size() < 4 ? 4 - n.size() : 0, ' ') + n, 4) : "    ") +
                         "  " + pad(i == 0 ? "#" + std::to_string(k + 1) : "", 3) + "  " +
                         pad(i < cause.size() ? cause[i] : "", cause_width) + "  " + (i < add.size() ? add[i] : "");
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
  }
}

void PrintSummaryTable(const RunResults& results, std::ostream& out) {
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows;
  rows.push_back({"scenario", "layer", "oracle", "verdict", "evidence"});
  std::map<std::string, int> totals;
  for (const auto& s : results.scenarios) {
    if (!s.error.empty()) {
      rows.push_back({ConsoleSafe(s.name), ConsoleSafe(s.layer), "-", "error", one_line(s.error, 160)});
      ++totals["error"];
    }
    for (const auto& v : s.verdicts) {
      rows.push_back({ConsoleSafe(s.name), ConsoleSafe(s.layer), ConsoleSafe(v.oracle), ConsoleSafe(v.Label()),
                      one_line(v.evidence, 160)});
      ++totals[v.Label()];
    }
    for (const auto& w : s.warnings)
      rows.push_back({ConsoleSafe(s.name), ConsoleSafe(s.layer), "-", "warning", one_line(w, 160)});
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
  // Rows first, then verdicts: "38 rows, 82 verdicts: ..." cannot be read as
  // 82 things tested when 76 of them are not applicable.
  std::size_t verdicts = 0;
  for (const auto& s : results.scenarios) verdicts += s.verdicts.size();
  out << "\n" << results.scenarios.size() << " row(s), " << verdicts << " verdict(s):";
  for (const char* k : {"valid", "invalid", "deviation", "unknown", "not_applicable", "error"}) {
    if (totals[k] > 0) out << " " << totals[k] << " " << k;
  }
  out << "\n";
  PrintNotApplicableTable(results, out);
  if (const std::string note = results.ShardNote(); !note.empty()) out << ConsoleSafe(note) << "\n";
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
      << ", swallowed-new rate " << rate(m.swallowed_new_rate(), m.new_key_answers_as_replay, m.new_key_answers)
      << ", rerun diff rows " << (m.rerun_diff_rows ? std::to_string(*m.rerun_diff_rows) : std::string("n/a"))
      << ", window hit rate " << rate(m.window_hit_rate(), m.window_retries_recognised, m.window_retries) << "\n";
}

}  // namespace idemproof::cli
