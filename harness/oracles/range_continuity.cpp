// range_continuity: after a batch job failed part-way and was rerun, every
// range is processed once (none lost, none doubled, nothing already done is
// redone beyond one partition), the result equals a clean run's row by row,
// the markers agree with the rows, and later reruns change nothing.
#include <algorithm>
#include <functional>
#include <set>

#include "model/batch_history.h"
#include "model/job_result.h"
#include "oracles/oracle_support.h"

namespace idemproof::oracles {
namespace {

std::string Plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string RunName(const BatchRun& r) {
  return std::string(BatchRoleName(r.role)) + " #" + std::to_string(r.index()) + " of job " + r.job_name;
}

nlohmann::json RunJson(const BatchRun& r) {
  nlohmann::json j = {{"index", r.index()}, {"job", r.job}, {"job_name", r.job_name}, {"role", BatchRoleName(r.role)},
                      {"from", r.from}, {"to", r.to}};
  if (r.fail_after) j["fail_after"] = *r.fail_after;
  if (auto a = r.answer()) j["answer"] = {{"status", a->status}, {"body", a->body.substr(0, 400)}};
  else j["outcome"] = r.op.completion ? EventTypeName(r.op.completion->type) : "open";
  return j;
}

// "in 600–999 (partitions 60–99)"
std::string Where(const std::vector<std::int64_t>& ids, const std::vector<RangeMarker>* partitions) {
  std::string s = "in " + FormatIdRanges(ids);
  if (partitions != nullptr) {
    std::string p = PartitionsOf(ids, *partitions);
    if (!p.empty()) s += " (" + p + ")";
  }
  return s;
}

// What differs between a rerun's rows and the clean run's, one phrase each.
std::vector<std::string> Describe(const RowComparison& c, const std::vector<RangeMarker>* partitions) {
  std::vector<std::string> out;
  if (!c.missing.empty()) out.push_back(Plural(c.missing.size(), "row") + " missing " + Where(c.missing, partitions));
  if (!c.doubled.empty()) {
    std::string how = c.max_copies > 2 ? " duplicated (up to " + std::to_string(c.max_copies) + " copies) "
                                       : " doubled ";
    out.push_back(Plural(c.doubled.size(), "row").append(how) + Where(c.doubled, partitions));
  }
  if (!c.differing.empty())
    out.push_back(Plural(c.differing.size(), "row") + " differ from the clean run " + Where(c.differing, partitions));
  if (!c.extra.empty())
    out.push_back(Plural(c.extra.size(), "row") + " not in the clean run " + Where(c.extra, partitions));
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

// The ranges of `ids` one per element ("600–999"), as a finding lists them.
std::vector<std::string> IdRanges(const std::vector<std::int64_t>& ids) {
  std::vector<std::string> out;
  const std::string text = FormatIdRanges(ids, 20);
  std::size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(", ", at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  return out;
}

nlohmann::json ComparisonJson(const RowComparison& c) {
  return {{"diff_rows", c.diff_rows()},
          {"missing", c.missing.size()},   {"missing_ids", FormatIdRanges(c.missing, 20)},
          {"doubled", c.doubled.size()},   {"doubled_ids", FormatIdRanges(c.doubled, 20)},
          {"extra_copies", c.extra_copies}, {"max_copies", c.max_copies},
          {"differing", c.differing.size()}, {"differing_ids", FormatIdRanges(c.differing, 20)},
          {"extra", c.extra.size()},       {"extra_ids", FormatIdRanges(c.extra, 20)}};
}

// The verdict's "markers" record, made an object if it was none.
nlohmann::json& MarkersRecord(VerdictDetails& details) {
  if (!details.records.markers) details.records.markers = nlohmann::json::object();
  return *details.records.markers;
}

// The markers of `result` against its rows and the clean run's row ids.
std::vector<std::string> CheckMarkers(const BatchDescription& batch, const JobResult& result, const JobResult& clean,
                                      nlohmann::json& markers_record) {
  std::vector<std::string> findings;
  const auto& markers = *result.markers;
  std::vector<std::string> bad_counts, bad_sums;
  for (const auto& m : markers) {
    auto rows = result.RowsIn(m.from, m.to);
    if (static_cast<std::int64_t>(rows.size()) != m.rows_written)
      bad_counts.push_back("partition " + m.key + " says " + std::to_string(m.rows_written) + " rows written, " +
                           std::to_string(rows.size()) + " present");
    if (batch.checksum == ChecksumAlgorithm::kSha256Rows) {
      const nlohmann::json want = RowsChecksum(batch.checksum, rows);
      if (!m.checksum || *m.checksum != want) bad_sums.push_back(m.key);
    }
  }
  std::vector<std::int64_t> uncovered, overlapped;
  std::set<std::int64_t> clean_ids;
  for (const auto& r : clean.rows) clean_ids.insert(r.id);
  for (std::int64_t id : clean_ids) {
    int n = 0;
    for (const auto& m : markers) n += (id >= m.from && id < m.to) ? 1 : 0;
    if (n == 0) uncovered.push_back(id);
    if (n > 1) overlapped.push_back(id);
  }
  markers_record = {{"count", markers.size()},
                        {"rows_written_mismatches", bad_counts},
                        {"checksum_mismatches", bad_sums},
                        {"uncovered_ids", FormatIdRanges(uncovered, 20)},
                        {"overlapped_ids", FormatIdRanges(overlapped, 20)},
                        {"checksum", ChecksumAlgorithmName(batch.checksum)}};
  if (!bad_counts.empty())
    findings.push_back("markers disagree with the rows (" + Plural(bad_counts.size(), "partition") + ", e.g. " +
                       bad_counts.front() + ")");
  if (!bad_sums.empty())
    findings.push_back("marker checksums disagree with the rows in " + Plural(bad_sums.size(), "partition") +
                       " (e.g. " + bad_sums.front() + ")");
  if (!uncovered.empty()) findings.push_back(Plural(uncovered.size(), "row") + " covered by no range marker (" +
                                             FormatIdRanges(uncovered) + ")");
  if (!overlapped.empty()) findings.push_back(Plural(overlapped.size(), "row") + " covered by several markers (" +
                                              FormatIdRanges(overlapped) + ")");
  return findings;
}

// Every change from `before` to `after`: rows (volatile paths included) and markers.
std::vector<std::string> Changes(const JobResult& before, const JobResult& after) {
  std::vector<std::string> out;
  auto changed = RewrittenRows(before, after);
  auto added = RewrittenRows(after, before);  // ids now present that were not, or changed
  changed.insert(changed.end(), added.begin(), added.end());
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  if (!changed.empty()) out.push_back("changed " + Plural(changed.size(), "row") + " (" + FormatIdRanges(changed) + ")");
  if (std::string m = MarkerChanges(before, after); !m.empty()) out.push_back(m);
  return out;
}

// The findings of one verdict: each a phrase of the evidence and a Finding
// with the failed run, the rerun whose result broke it, the rows missing.
class Findings {
 public:
  Findings(std::string job, const BatchRun& failing) : job_(std::move(job)), failing_(failing) {}
  void Add(const std::string& problem, const BatchRun& rerun, const std::vector<std::int64_t>& missing = {}) {
    phrases_.push_back(problem);
    Finding f = MakeFinding(problem, {{"job", job_}});
    f.With(FindingRole::kFailure, RunJson(failing_));
    f.With(FindingRole::kRetry, RunJson(rerun));
    if (!missing.empty()) f.missing_ranges = IdRanges(missing);
    violations_.Add(f);
  }
  bool empty() const { return phrases_.empty(); }
  std::string Evidence() const { return "job " + job_ + ": " + Join(phrases_, "; "); }
  const std::vector<Finding>& findings() const { return violations_.findings(); }

 private:
  std::string job_;
  const BatchRun& failing_;
  std::vector<std::string> phrases_;
  Violations violations_;
};

// A marker's checksum as evidence shows it: its JSON ("abc", 42), cut.
std::string ChecksumText(const std::optional<nlohmann::json>& checksum) {
  if (!checksum) return "absent";
  std::string text = checksum->dump();
  return text.size() > 24 ? text.substr(0, 24) + "…" : text;
}

// The markers of `result` against the clean run's over the same [from, to):
// rows_written (when `counts`) and, under `checksum: same-as-clean`, the
// target's own checksums. One phrase, or none; counts in `markers_record`.
std::vector<std::string> AgainstCleanMarkers(const BatchDescription& batch, const JobResult& result,
                                             const JobResult& clean, bool counts, nlohmann::json& markers_record) {
  const bool sums = batch.checksum == ChecksumAlgorithm::kSameAsClean;
  if (!result.markers || !clean.markers || (!counts && !sums)) return {};
  std::vector<std::string> differ;
  std::int64_t compared = 0;
  for (const auto& m : *result.markers) {
    auto c = std::find_if(clean.markers->begin(), clean.markers->end(),
                          [&](const RangeMarker& o) { return o.from == m.from && o.to == m.to; });
    if (c == clean.markers->end()) continue;
    std::vector<std::string> what;
    if (counts && m.rows_written != c->rows_written)
      what.push_back("rows_written " + std::to_string(m.rows_written) + ", clean run " + std::to_string(c->rows_written));
    if (sums) {
      ++compared;
      // JSON values (ReadJobResult admits text and numbers): 42 equals 42.
      const bool equal = m.checksum.has_value() == c->checksum.has_value() && (!m.checksum || *m.checksum == *c->checksum);
      if (!equal)
        what.push_back("checksum " + ChecksumText(m.checksum) + ", clean run " + ChecksumText(c->checksum));
    }
    if (!what.empty()) differ.push_back(m.key + ": " + Join(what, ", "));
  }
  markers_record["clean_run_differences"] = differ;
  if (sums) markers_record["checksums_compared"] = compared;
  if (differ.empty()) return {};
  std::vector<std::string> shown(differ.begin(), differ.begin() + std::min<std::size_t>(differ.size(), 3));
  return {"markers differ from the clean run's over the same range in " + Plural(differ.size(), "partition") + " (" +
          Join(shown, "; ") + (differ.size() > 3 ? "; …" : "") + ")"};
}

// ---- The totals form: a result of a row count and a sum, no rows. ----

nlohmann::json TotalsJson(const JobTotals& t) { return {{"rows", t.rows}, {"sum", t.sum}}; }

// What a rerun's totals say against the clean run's, "" when equal. Totals
// cannot say which rows or where: the phrase says so.
std::string TotalsDiff(const JobTotals& got, const JobTotals& want) {
  const auto sum_text = [](const JobTotals& t) { return t.sum.is_string() ? t.sum.get<std::string>() : t.sum.dump(); };
  const bool sums = !(got.sum == want.sum);
  const std::string totals = "total " + Plural(got.rows, "row") + (sums ? " (sum " + sum_text(got) + ")" : "") +
                             ", clean run " + std::to_string(want.rows) +
                             (sums ? " (sum " + sum_text(want) + ")" : "") + ": ";
  if (got.rows < want.rows)
    return totals + Plural(want.rows - got.rows, "row") + " missing (by totals; no per-row ids to say where)";
  if (got.rows > want.rows)
    return totals + Plural(got.rows - want.rows, "row") +
           " too many, doubled or not in the clean run (by totals; no per-row ids to say which or where)";
  if (sums)
    return "total " + Plural(got.rows, "row") + " as the clean run, but sum " + sum_text(got) + " against " +
           sum_text(want) + ": rows differ in content, or as many were lost as doubled (by totals; no per-row ids to "
           "say which)";
  return "";
}

// The markers of a totals result: their rows_written add up to the total,
// each id of the clean run's range [from, to) is under exactly one marker,
// and they agree with the clean run's markers over the same range.
std::vector<std::string> CheckTotalsMarkers(const BatchDescription& batch, const JobResult& result,
                                            const JobResult& clean, const BatchRun& clean_run,
                                            nlohmann::json& markers_record) {
  std::vector<std::string> findings;
  const auto& markers = *result.markers;
  std::int64_t written = 0;
  for (const auto& m : markers) written += m.rows_written;
  const MarkerCoverage cover = CoverageOf(markers, clean_run.from, clean_run.to);
  markers_record = {{"count", markers.size()},
                        {"rows_written_total", written},
                        {"uncovered_ids", FormatIdRanges(cover.uncovered, 20)},
                        {"overlapped_ids", FormatIdRanges(cover.overlapped, 20)},
                        {"checksum", ChecksumAlgorithmName(batch.checksum)}};
  if (written != result.totals->rows)
    findings.push_back("the markers' rows_written add up to " + std::to_string(written) + ", the totals say " +
                       Plural(result.totals->rows, "row"));
  if (!cover.uncovered.empty())
    findings.push_back("rows " + FormatIdRanges(cover.uncovered) + " covered by no range marker");
  if (!cover.overlapped.empty())
    findings.push_back("rows " + FormatIdRanges(cover.overlapped) + " covered by several markers");
  for (auto& f : AgainstCleanMarkers(batch, result, clean, /*counts=*/true, markers_record)) findings.push_back(f);
  return findings;
}

using ReadResult = std::function<std::optional<JobResult>(const BatchRun&, std::string&)>;

// The runs range_continuity judges for one job, found by RangeContinuity.
struct JudgedRuns {
  std::string job;
  const BatchRun* failing = nullptr;
  bool killed = false;  // cut off, not failed by fail_after
  std::vector<const BatchRun*> reruns;
  const BatchRun* completing = nullptr;
  const BatchRun* clean = nullptr;
};

// range_continuity where the target gives totals, not rows.
Verdict ByTotals(const std::string& name, const OracleInput& in, const JudgedRuns& j, const ReadResult& read,
                 const std::vector<JobSnapshot>& snapshots, const JobResult& clean, const JobResult& first,
                 VerdictDetails details) {
  const BatchDescription& batch = *in.target.batch;
  const JobTotals& want = *clean.totals;
  details.texts.by = "totals";
  details.records.clean_totals = TotalsJson(want);
  if (want.rows == 0)
    return Verdict::Unknown(name, "the clean run of rows [" + std::to_string(j.clean->from) + ", " +
                                      std::to_string(j.clean->to) + ") produced no rows (by its totals): nothing to compare",
                            details);
  Findings findings(j.job, *j.failing);
  // 1. The rerun that completed ends at the clean run's totals.
  details.records.after_rerun = TotalsJson(*first.totals);
  if (std::string d = TotalsDiff(*first.totals, want); !d.empty()) {
    auto a = j.completing->answer();
    if (a && IsReplayMarked(*a, in.target.idempotency)) d += " (the rerun was answered as a replay: swallowed)";
    findings.Add("after the rerun: " + d, *j.completing);
  }

  // 2. What the failed run left to resume from: rows its totals count that
  // no marker accounts for must be redone, at most one partition of them.
  const std::int64_t allowance = in.params.contains("redo_rows") ? in.params["redo_rows"].get<std::int64_t>()
                                                                 : batch.partition_rows.value_or(-1);
  std::string why;
  if (allowance < 0) {
    details.texts.redone_rows_note = "not checked: the target declares no batch.partition_rows";
  } else if (!batch.declares_markers()) {
    details.texts.redone_rows_note = "not checked: totals give no per-row ids to say which rows a rerun rewrote, and the "
                             "target declares no markers";
  } else if (SnapshotAfter(snapshots, *j.failing) == nullptr) {
    details.texts.redone_rows_note = "not checked: the run was cut off and its result not read before the rerun";
  } else {
    auto before = read(*j.failing, why);
    if (!before) return Verdict::Unknown(name, why, details);
    std::int64_t marked = 0;
    for (const auto& m : *before->markers) marked += m.rows_written;
    const std::int64_t unmarked = before->totals->rows - marked;
    details.records.redone_rows = nlohmann::json{{"by", "the failed run's totals and markers (which rows a rerun rewrote is not known: "
                                     "no per-row ids)"},
                              {"written", before->totals->rows}, {"marked", marked}, {"unmarked", unmarked},
                              {"allowed", allowance}};
    if (unmarked > allowance)
      findings.Add("the failed run wrote " + Plural(before->totals->rows, "row") + " (by its totals) but its markers "
                   "account for " + std::to_string(marked) + ": a rerun has nothing to resume from for " +
                   Plural(unmarked, "row") + " already written (at most " + std::to_string(allowance) +
                   ", one partition, may be redone)",
                   *j.completing);
  }

  // 3. Later reruns change nothing: same totals, same markers.
  details.records.later_reruns = nlohmann::json::array();
  JobResult last = first;
  const BatchRun* last_run = j.completing;
  int ordinal = 1;
  for (const BatchRun* r : j.reruns) {
    if (r->index() <= j.completing->index()) continue;
    ++ordinal;
    auto later = read(*r, why);
    if (!later) return Verdict::Unknown(name, why, details);
    std::vector<std::string> changes;
    if (!(*later->totals == *first.totals))
      changes.push_back("changed the totals (" + first.totals->Text() + " → " + later->totals->Text() + ")");
    if (std::string m = MarkerChanges(first, *later); !m.empty()) changes.push_back(m);
    details.records.later_reruns->push_back(nlohmann::json{{"index", r->index()}, {"changes", changes}, {"totals", TotalsJson(*later->totals)}});
    if (!changes.empty()) findings.Add("rerun " + std::to_string(ordinal) + " " + Join(changes, " and "), *r);
    last = std::move(*later);
    last_run = r;
  }

  // 4. The markers agree with the totals and with the clean run's.
  if (batch.declares_markers()) {
    for (const auto& m : CheckTotalsMarkers(batch, last, clean, *j.clean, MarkersRecord(details))) findings.Add(m, *last_run);
  } else {
    details.texts.markers_note = "not checked: the target declares no markers";
  }

  const auto rerun_count = static_cast<std::int64_t>(j.reruns.size());
  if (!findings.empty()) {
    details.violations = findings.findings();
    return Verdict::Invalid(name, findings.Evidence(), details).Counted(rerun_count);
  }
  const std::string how = j.killed ? "was cut off (no answer: killed) in a run of "
                                   : "failed after " + std::to_string(*j.failing->fail_after) + " of ";
  std::string evidence = "job " + j.job + " " + how + std::to_string(j.failing->to - j.failing->from) + " rows; " +
                         Plural(j.reruns.size(), "rerun") + "; totals equal the clean run's (" + want.Text() +
                         "; no per-row ids: rows not compared one by one)";
  if (last.markers) {
    evidence += ", " + Plural(last.markers->size(), "marker") + " agree with the totals and the clean run's markers";
    if (batch.checksum == ChecksumAlgorithm::kSameAsClean && (!details.records.markers || details.records.markers->value("checksums_compared", 0) == 0))
      evidence += " (checksums not compared: no clean-run marker over the same range)";
  }
  if (ordinal > 1) evidence += ", later reruns changed nothing";
  return Verdict::Valid(name, evidence, details).Counted(rerun_count);
}

}  // namespace

Verdict RangeContinuity(const OracleInput& in) {
  const std::string name = "range_continuity";
  if (!in.target.batch) return Verdict::NotApplicable(name, "the target declares no batch section");
  const BatchDescription& batch = *in.target.batch;
  const auto runs = BatchRuns(in.history);
  const auto snapshots = JobSnapshots(in.history);
  VerdictDetails details;

  // A run fails part-way by its fail_after answer, or by being cut off: no
  // answer at all (the target was killed while it ran).
  const auto cut_off = [](const BatchRun& r) { return !r.fail_after && r.op.completion && !r.answer(); };
  std::string job = in.params.value("job", "");
  if (job.empty()) {
    for (const auto& r : runs)
      if ((r.fail_after || cut_off(r)) && r.role != BatchRole::kClean) { job = r.job_name; break; }
  }
  // No partial failure: the premise (reruns after one) never happened.
  if (job.empty())
    return Verdict::Unknown(name, "no batch run was made to fail (no fail_after, none cut off): nothing to resume")
        .Counted(0);
  details.texts.job = job;

  std::vector<const BatchRun*> mine;
  for (const auto& r : runs)
    if (r.job_name == job && r.role != BatchRole::kClean) mine.push_back(&r);
  if (mine.empty()) return Verdict::Unknown(name, "job " + job + " never ran").Counted(0);
  const BatchRun* failing = nullptr;
  for (const BatchRun* r : mine)
    if (r->fail_after || cut_off(*r)) { failing = r; break; }
  if (failing == nullptr)
    return Verdict::Unknown(name, "no run of job " + job + " was made to fail (fail_after) or cut off").Counted(0);
  details.records.failing_run = RunJson(*failing);
  auto failed_answer = failing->answer();
  const bool killed = !failing->fail_after;
  if (!failed_answer && !killed)
    return Verdict::Unknown(name, "the failing " + RunName(*failing) + " got no answer", details);
  if (failed_answer && failed_answer->is_2xx())
    return Verdict::Unknown(name, "the " + RunName(*failing) + " answered " + std::to_string(failed_answer->status) +
                                      ": the failure after " + std::to_string(*failing->fail_after) +
                                      " rows never happened, nothing to resume",
                            details);

  std::vector<const BatchRun*> reruns;
  for (const BatchRun* r : mine)
    if (r->index() > failing->index() && r->role == BatchRole::kRerun) reruns.push_back(r);
  details.records.reruns = nlohmann::json::array();
  for (const BatchRun* r : reruns) details.records.reruns->push_back(RunJson(*r));
  if (reruns.empty())
    return Verdict::Unknown(name, "job " + job + " was never rerun after its failed run", details).Counted(0);
  const BatchRun* completing = nullptr;
  bool any_answer = false;
  for (const BatchRun* r : reruns) {
    any_answer = any_answer || r->answer().has_value();
    if (r->answered_2xx()) { completing = r; break; }
  }
  if (completing == nullptr) {
    if (!any_answer) return Verdict::Unknown(name, "no rerun of job " + job + " got an answer", details);
    Finding f = MakeFinding("no rerun of job " + job + " completed: every rerun answered an error", {{"job", job}});
    f.With(FindingRole::kFailure, RunJson(*failing));
    for (const BatchRun* r : reruns) f.With(FindingRole::kOps, RunJson(*r));
    Violations violations;
    violations.Add(f);
    details.violations = violations.findings();
    return Verdict::Invalid(name, f.problem, details);
  }

  std::string clean_job = in.params.value("clean", "");
  const BatchRun* clean = nullptr;
  for (const auto& r : runs) {
    if (r.role != BatchRole::kClean) continue;
    if (!clean_job.empty()) {
      if (r.job_name == clean_job) { clean = &r; break; }
    } else if (r.of == job) {
      clean = &r;
      break;
    } else if (clean == nullptr) {
      clean = &r;
    }
  }
  if (clean == nullptr) return Verdict::Unknown(name, "no clean run to compare job " + job + " with", details);
  details.records.clean_run = RunJson(*clean);
  if (!clean->answered_2xx())
    return Verdict::Unknown(name, "the clean " + RunName(*clean) + " did not complete", details);

  // The results after the failed run, the completing rerun, every later rerun, and the clean run.
  auto read = [&](const BatchRun& r, std::string& why) -> std::optional<JobResult> {
    const JobSnapshot* s = SnapshotAfter(snapshots, r);
    if (s == nullptr) { why = "the result of job " + r.job_name + " was not read after " + RunName(r); return std::nullopt; }
    if (!s->ok) { why = "the result of job " + r.job_name + " could not be read after " + RunName(r) + ": " + s->error; return std::nullopt; }
    auto res = ReadJobResult(batch, s->result, s->markers);
    if (!res.ok()) { why = "the result of job " + r.job_name + " after " + RunName(r) + " does not match batch.result: " + res.status().message(); return std::nullopt; }
    return *res;
  };
  std::string why;
  auto clean_result = read(*clean, why);
  if (!clean_result) return Verdict::Unknown(name, why, details);
  auto first = read(*completing, why);
  if (!first) return Verdict::Unknown(name, why, details);
  if (batch.totals())
    return ByTotals(name, in, JudgedRuns{job, failing, killed, reruns, completing, clean}, read, snapshots,
                    *clean_result, *first, std::move(details));
  if (clean_result->rows.empty())
    return Verdict::Unknown(name, "the clean run of rows [" + std::to_string(clean->from) + ", " +
                                      std::to_string(clean->to) + ") produced no rows: nothing to compare",
                            details);
  // Partitions named in the evidence: by the declared granularity (partition
  // N = rows [N*partition_rows, (N+1)*partition_rows)), else the clean run's
  // markers. Never the rerun job's own markers: those may be the fault.
  std::vector<RangeMarker> numbered;
  const std::vector<RangeMarker>* partitions = nullptr;
  if (batch.partition_rows) {
    const std::int64_t n = *batch.partition_rows;
    const std::int64_t lo = std::min(clean->from, clean_result->rows.front().id);
    const std::int64_t hi = std::max(clean->to, clean_result->rows.back().id + 1);
    for (std::int64_t p = lo / n; p * n < hi; ++p) {
      RangeMarker m;
      m.key = std::to_string(p);
      m.from = p * n;
      m.to = (p + 1) * n;
      numbered.push_back(m);
    }
    partitions = &numbered;
  } else if (clean_result->markers && !clean_result->markers->empty()) {
    partitions = &*clean_result->markers;
  }

  Findings findings(job, *failing);  // the evidence, one phrase each
  const auto found = [&](const std::string& problem, const BatchRun& rerun, const std::vector<std::int64_t>& missing) {
    findings.Add(problem, rerun, missing);
  };
  // 1. The rerun that completed finishes the missing rows, and only those.
  RowComparison after_first = CompareRows(*first, *clean_result);
  details.records.after_rerun = ComparisonJson(after_first);
  if (!after_first.equal()) {
    std::string f = "after the rerun: " + Join(Describe(after_first, partitions), ", ");
    auto a = completing->answer();
    if (a && IsReplayMarked(*a, in.target.idempotency)) f += " (the rerun was answered as a replay: swallowed)";
    found(f, *completing, after_first.missing);
  }

  // 2. The rows the completing rerun rewrote although the failed run had written them.
  const std::int64_t redo_allowance = in.params.contains("redo_rows") ? in.params["redo_rows"].get<std::int64_t>()
                                                                      : batch.partition_rows.value_or(-1);
  if (redo_allowance >= 0 && killed && SnapshotAfter(snapshots, *failing) == nullptr) {
    // A cut-off run's result could not be read before the target came back.
    details.texts.redone_rows_note = "not checked: the run was cut off and its result not read before the rerun";
  } else if (redo_allowance >= 0) {
    auto before = read(*failing, why);
    if (!before) return Verdict::Unknown(name, why, details);
    auto redone = RewrittenRows(*before, *first);
    details.records.redone_rows = nlohmann::json{{"count", redone.size()}, {"ids", FormatIdRanges(redone, 20)}, {"allowed", redo_allowance}};
    if (static_cast<std::int64_t>(redone.size()) > redo_allowance)
      found("the rerun redid " + Plural(redone.size(), "row") + " already written " +
                         Where(redone, partitions) + ": the failed run left nothing to resume from (at most " +
                         std::to_string(redo_allowance) + ", one partition, may be redone)",
            *completing, {});
  } else {
    details.texts.redone_rows_note = "not checked: the target declares no batch.partition_rows";
  }

  // 3. Later reruns change nothing: same rows (stamps included), same markers.
  details.records.later_reruns = nlohmann::json::array();
  std::optional<JobResult> last = first;
  const BatchRun* last_run = completing;
  int ordinal = 1;
  for (const BatchRun* r : reruns) {
    if (r->index() <= completing->index()) continue;
    ++ordinal;
    auto later = read(*r, why);
    if (!later) return Verdict::Unknown(name, why, details);
    auto changes = Changes(*first, *later);
    details.records.later_reruns->push_back(nlohmann::json{{"index", r->index()}, {"changes", changes}});
    if (!changes.empty()) found("rerun " + std::to_string(ordinal) + " " + Join(changes, " and "), *r, {});
    last = later;
    last_run = r;
  }
  RowComparison final_cmp = CompareRows(*last, *clean_result);
  details.records.final_comparison = ComparisonJson(final_cmp);
  if (!final_cmp.equal() && ordinal > 1 &&
      (final_cmp.diff_rows() != after_first.diff_rows() || final_cmp.extra_copies != after_first.extra_copies))
    found("after rerun " + std::to_string(ordinal) + ": " + Join(Describe(final_cmp, partitions), ", "), *last_run,
          final_cmp.missing);

  // 4. The markers agree with the rows they describe.
  if (batch.declares_markers()) {
    for (const auto& m : CheckMarkers(batch, *last, *clean_result, MarkersRecord(details))) found(m, *last_run, {});
    for (const auto& m : AgainstCleanMarkers(batch, *last, *clean_result, /*counts=*/false, MarkersRecord(details)))
      found(m, *last_run, {});
  } else {
    details.texts.markers_note = "not checked: the target declares no markers";
  }

  const auto rerun_count = static_cast<std::int64_t>(reruns.size());
  if (!findings.empty()) {
    details.violations = findings.findings();
    return Verdict::Invalid(name, findings.Evidence(), details).Counted(rerun_count);
  }
  const std::string how = killed ? "was cut off (no answer: killed) in a run of "
                                  : "failed after " + std::to_string(*failing->fail_after) + " of ";
  std::string evidence = "job " + job + " " + how +
                         std::to_string(failing->to - failing->from) + " rows; " + Plural(reruns.size(), "rerun") +
                         "; result equals the clean run row by row (" + Plural(clean_result->rows.size(), "row") + ")";
  if (last->markers) evidence += ", " + Plural(last->markers->size(), "marker") + " agree with the rows";
  if (ordinal > 1) evidence += ", later reruns changed nothing";
  return Verdict::Valid(name, evidence, details).Counted(rerun_count);
}

}  // namespace idemproof::oracles
