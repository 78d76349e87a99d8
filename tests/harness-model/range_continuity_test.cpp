// range_continuity and the rerun-diff metric on literal batch histories: the
// correct rerun (resume, then stable), and each batch flaw of the reference
// service written by hand as the results it leaves behind.
#include <catch2/catch.hpp>

#include "batch_history_builder.h"
#include "literal_history.h"
#include "model/finding.h"
#include "model/job_result.h"
#include "model/metrics.h"
#include "model/results_json.h"

using namespace idemproof;
using namespace idemproof::testing;
using nlohmann::json;

namespace {

Verdict Check(const History& h, json params = json::object()) {
  return RunOracle("range_continuity", h, BatchTarget(), std::move(params));
}

// The clean run j2 of [0, 1000): every row written once by its run 1.
void CleanRun(BatchHistory& h) {
  auto c = h.Run("j2", "clean", 0, 1000, std::nullopt, 200, false, "j1");
  json rows = RowsJson(0, 1000, 1);
  h.Result("j2", c, rows, MarkersJson(rows, 0, 1000));
}

// The correct service: fails after 600 rows (partitions 0-59 marked), the
// rerun writes 600-999 only, three more reruns skip everything.
BatchHistory CorrectHistory() {
  BatchHistory h;
  auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
  json after_fail = RowsJson(0, 600, 1);
  h.Result("j1", r1, after_fail, MarkersJson(after_fail, 0, 600));
  json done = Concat({RowsJson(0, 600, 1), RowsJson(600, 1000, 2)});
  for (int i = 0; i < 4; ++i) {
    auto r = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    h.Result("j1", r, done, MarkersJson(done, 0, 1000));
  }
  CleanRun(h);
  return h;
}

}  // namespace

TEST_CASE("the checksum is SHA-256 over sorted compact JSON lines minus volatile paths") {
  auto r = ReadJobResult(*BatchTarget().batch,
                         {{"rows", json::array({{{"id", 2}, {"amount", 14}, {"run", 9}}, {{"id", 1}, {"amount", 7}, {"run", 3}}})},
                          {"markers", json::array()}},
                         std::nullopt);
  REQUIRE(r.ok());
  // python3: hashlib.sha256(b'{"amount":7,"id":1}\n{"amount":14,"id":2}\n').hexdigest()
  CHECK(RowsChecksum(ChecksumAlgorithm::kSha256Rows, r->RowsIn(0, 10)) ==
        "df34441647be8c9fcfb56f214ccbf6768b11d2fb3b1bd3db3032d3f68af186c6");
  CHECK(RowsChecksum(ChecksumAlgorithm::kNone, r->RowsIn(0, 10)).empty());
}

TEST_CASE("id ranges and partitions are named compactly") {
  CHECK(FormatIdRanges({5, 3, 4, 9, 11, 10}) == "3–5, 9–11");
  CHECK(FormatIdRanges({1, 3, 5, 7, 9, 11}, 3) == "1, 3, 5, …");
  json rows = RowsJson(0, 1000, 1);
  auto r = ReadJobResult(*BatchTarget().batch, {{"rows", rows}, {"markers", MarkersJson(rows, 0, 1000)}}, std::nullopt);
  REQUIRE(r.ok());
  CHECK(PartitionsOf({600, 601, 999}, *r->markers) == "partitions 60, 99");
  std::vector<std::int64_t> ids;
  for (int i = 600; i < 1000; ++i) ids.push_back(i);
  CHECK(PartitionsOf(ids, *r->markers) == "partitions 60–99");
}

TEST_CASE("range_continuity without a partial failure is premise not reached, never valid") {
  // No batch run at all (an explore plan of a kill, a restart, a wait).
  Verdict none = Check(History());
  CHECK(none.status == VerdictStatus::kUnknown);
  CHECK(none.PremiseNotReached());
}

TEST_CASE("range_continuity holds for a resumed rerun that later reruns leave unchanged") {
  BatchHistory h = CorrectHistory();
  Verdict v = Check(h.history());
  INFO(v.evidence << "\n" << VerdictDetailsToJson(v.details).dump(2));
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.evidence.find("result equals the clean run row by row (1000 rows)") != std::string::npos);
  CHECK(v.evidence.find("100 markers agree") != std::string::npos);
  CHECK(v.evidence.find("later reruns changed nothing") != std::string::npos);
  CHECK(v.details.records.after_rerun.value()["diff_rows"] == 0);
  CHECK(v.details.records.redone_rows.value()["count"] == 0);
  Metrics m = ComputeMetrics(BatchTarget(), h.history());
  REQUIRE(m.rerun_diff_rows.has_value());
  CHECK(*m.rerun_diff_rows == 0);
  CHECK(MetricsToJson(m)["rerun_diff_rows"] == 0);
}

TEST_CASE("range_continuity accepts redoing the one partition a failure cut in half") {
  BatchHistory h;
  auto r1 = h.Run("j1", "run", 0, 1000, 605, 500);
  json after_fail = RowsJson(0, 605, 1);  // 600-604 written, partition 60 not marked
  h.Result("j1", r1, after_fail, MarkersJson(RowsJson(0, 600, 1), 0, 600));
  json done = Concat({RowsJson(0, 600, 1), RowsJson(600, 1000, 2)});
  auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
  h.Result("j1", r2, done, MarkersJson(done, 0, 1000));
  CleanRun(h);
  Verdict v = Check(h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kValid);
  CHECK(v.details.records.redone_rows.value()["count"] == 5);
}

// whole-batch-marker: a run fails at 600 of 1000 rows with one marker for the
// whole job, and the rerun (r2) trusts it and skips the missing 40 %.
struct WholeBatchMarkerRun {
  BatchHistory h;
  std::int64_t r1 = 0, r2 = 0;
  WholeBatchMarkerRun() {
    r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    json rows = RowsJson(0, 600, 1);
    json whole = json::array({{{"partition", "job"}, {"from", 0}, {"to", 1000}, {"rows_written", 1000}, {"checksum", ""}}});
    h.Result("j1", r1, rows, whole);
    r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    h.Result("j1", r2, rows, whole);
    CleanRun(h);
  }
};

TEST_CASE("range_continuity catches whole-batch-marker: the rerun skips the missing 40 %") {
  WholeBatchMarkerRun run;
  BatchHistory& h = run.h;
  Verdict v = Check(h.history());
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("after the rerun: 400 rows missing in 600–999 (partitions 60–99)") != std::string::npos);
  CHECK(v.evidence.find("says 1000 rows written, 600 present") != std::string::npos);
  Metrics m = ComputeMetrics(BatchTarget(), h.history());
  CHECK(m.rerun_diff_rows == std::optional<std::int64_t>(400));
}

TEST_CASE("range_continuity lists each thing that broke as a Finding with the failed run and the rerun and the missing ranges") {
  WholeBatchMarkerRun run;
  BatchHistory& h = run.h;
  const std::int64_t r1 = run.r1, r2 = run.r2;
  Verdict v = Check(h.history());
  REQUIRE(v.status == VerdictStatus::kInvalid);
  REQUIRE(v.details.violations.has_value());
  REQUIRE(v.details.Findings().size() >= 2);  // the rows, the marker
  std::string evidence = "job j1: ";
  for (std::size_t i = 0; i < v.details.Findings().size(); ++i) {
    const Finding f = v.details.Findings().at(i);
    evidence += (i == 0 ? "" : "; ") + f.problem;
    REQUIRE(f.ops.size() == 2);
    CHECK(f.OpsOf(FindingRole::kFailure).at(0)->index() == r1);
    CHECK(f.OpsOf(FindingRole::kRetry).at(0)->index() == r2);
  }
  CHECK(evidence == v.evidence);  // one finding per phrase of the evidence
  const Finding rows_missing = v.details.Findings().at(0);
  CHECK(rows_missing.missing_ranges == std::vector<std::string>{"600–999"});
}

TEST_CASE("range_continuity catches no-range-marker: the rerun doubles what was done") {
  BatchHistory h;
  auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
  h.Result("j1", r1, RowsJson(0, 600, 1), json::array());
  json once = Concat({RowsJson(0, 600, 1), RowsJson(0, 1000, 2)});
  auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
  h.Result("j1", r2, once, json::array());
  json twice = Concat({once, RowsJson(0, 1000, 3)});
  auto r3 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
  h.Result("j1", r3, twice, json::array());
  CleanRun(h);
  Verdict v = Check(h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("after the rerun: 600 rows doubled in 0–599 (partitions 0–59)") != std::string::npos);
  CHECK(v.evidence.find("rerun 2 changed 1000 rows (0–999)") != std::string::npos);
  CHECK(v.evidence.find("1000 rows covered by no range marker") != std::string::npos);
  CHECK(ComputeMetrics(BatchTarget(), h.history()).rerun_diff_rows == std::optional<std::int64_t>(1000));
}

TEST_CASE("range_continuity catches batch-id-in-request-table both ways") {
  SECTION("a rerun inside the window is swallowed as a replay") {
    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    h.Result("j1", r1, RowsJson(0, 600, 1), json::array());
    auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 202, /*replayed=*/true);
    h.Result("j1", r2, RowsJson(0, 600, 1), json::array());
    CleanRun(h);
    Verdict v = Check(h.history());
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("400 rows missing in 600–999 (partitions 60–99)") != std::string::npos);
    CHECK(v.evidence.find("swallowed") != std::string::npos);
  }
  SECTION("a rerun after the window redoes everything") {
    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    h.Result("j1", r1, RowsJson(0, 600, 1), json::array());
    auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 202);
    h.Result("j1", r2, Concat({RowsJson(0, 600, 1), RowsJson(0, 1000, 2)}), json::array());
    CleanRun(h);
    Verdict v = Check(h.history());
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("600 rows doubled in 0–599 (partitions 0–59)") != std::string::npos);
    CHECK(v.evidence.find("the rerun redid 600 rows already written") != std::string::npos);
  }
}

TEST_CASE("range_continuity catches coarse-marker: a partial failure cannot resume") {
  BatchHistory h;
  auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
  h.Result("j1", r1, RowsJson(0, 600, 1), json::array());  // the run range never completed: no marker
  json rows = RowsJson(0, 1000, 2);  // redone from row 0 by upsert: right values, work done twice
  json coarse = json::array({{{"partition", "0-1000"}, {"from", 0}, {"to", 1000}, {"rows_written", 1000}}});
  {
    auto r = ReadJobResult(*BatchTarget().batch, {{"rows", rows}, {"markers", json::array()}}, std::nullopt);
    coarse[0]["checksum"] = RowsChecksum(ChecksumAlgorithm::kSha256Rows, r->RowsIn(0, 1000));
  }
  auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
  h.Result("j1", r2, rows, coarse);
  auto r3 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
  h.Result("j1", r3, rows, coarse);
  CleanRun(h);
  Verdict v = Check(h.history());
  INFO(v.evidence);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(v.evidence.find("the rerun redid 600 rows already written in 0–599 (partitions 0–59)") != std::string::npos);
  CHECK(v.details.records.after_rerun.value()["diff_rows"] == 0);  // the rows themselves are right
  CHECK(ComputeMetrics(BatchTarget(), h.history()).rerun_diff_rows == std::optional<std::int64_t>(0));
  // Without a declared granularity the redo cannot be judged: the same history passes.
  CHECK(Check(h.history(), {{"redo_rows", 1000}}).status == VerdictStatus::kValid);
}

TEST_CASE("range_continuity catches markers that disagree with the rows, and reruns that move markers") {
  json done = RowsJson(0, 1000, 1);
  SECTION("rows_written and checksum") {
    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    h.Result("j1", r1, RowsJson(0, 600, 1), MarkersJson(RowsJson(0, 600, 1), 0, 600));
    json markers = MarkersJson(done, 0, 1000);
    markers[3]["rows_written"] = 9;
    markers[7]["checksum"] = "0000";
    auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    h.Result("j1", r2, done, markers);
    CleanRun(h);
    Verdict v = Check(h.history());
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("partition 3 says 9 rows written, 10 present") != std::string::npos);
    CHECK(v.evidence.find("checksums disagree with the rows in 1 partition (e.g. 7)") != std::string::npos);
  }
  SECTION("a later rerun rewrites a marker") {
    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    h.Result("j1", r1, RowsJson(0, 600, 1), MarkersJson(RowsJson(0, 600, 1), 0, 600));
    json markers = MarkersJson(done, 0, 1000);
    auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    h.Result("j1", r2, done, markers);
    markers[42]["done_at"] = "later";
    auto r3 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    h.Result("j1", r3, done, markers);
    CleanRun(h);
    Verdict v = Check(h.history());
    CHECK(v.status == VerdictStatus::kInvalid);
    CHECK(v.evidence.find("rerun 2 changed the markers of 1 partition (e.g. 42)") != std::string::npos);
  }
}

TEST_CASE("range_continuity never passes without evidence") {
  CHECK(RunOracle("range_continuity", History(), ShopTarget()).status == VerdictStatus::kNotApplicable);
  CHECK(Check(History()).status == VerdictStatus::kUnknown);
  SECTION("the failure never fired") {
    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 200);
    h.Result("j1", r1, RowsJson(0, 1000, 1), json::array());
    h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    CleanRun(h);
    Verdict v = Check(h.history());
    CHECK(v.status == VerdictStatus::kUnknown);
    CHECK(v.evidence.find("never happened") != std::string::npos);
  }
  SECTION("no rerun, no clean run, an unreadable result") {
    BatchHistory norerun;
    norerun.Run("j1", "run", 0, 1000, 600, 500);
    CleanRun(norerun);
    CHECK(Check(norerun.history()).status == VerdictStatus::kUnknown);

    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    h.Result("j1", r1, RowsJson(0, 600, 1), json::array());
    auto r2 = h.Run("j1", "rerun", 0, 1000, std::nullopt, 200);
    CHECK(Check(h.history()).status == VerdictStatus::kUnknown);  // no clean run
    h.ResultFailed("j1", r2, "connection refused");
    CleanRun(h);
    Verdict v = Check(h.history());
    CHECK(v.status == VerdictStatus::kUnknown);
    CHECK(v.evidence.find("connection refused") != std::string::npos);
  }
  SECTION("every rerun failed") {
    BatchHistory h;
    auto r1 = h.Run("j1", "run", 0, 1000, 600, 500);
    h.Result("j1", r1, RowsJson(0, 600, 1), json::array());
    h.Run("j1", "rerun", 0, 1000, std::nullopt, 500);
    CleanRun(h);
    CHECK(Check(h.history()).status == VerdictStatus::kInvalid);
  }
  CHECK_FALSE(ComputeMetrics(BatchTarget(), History()).rerun_diff_rows.has_value());
}
