// The target file's `batch` section and the batch steps of a scenario:
// what loads, what each mistake says, and how a scenario fits a target.
#include <catch2/catch.hpp>

#include "batch_history_builder.h"
#include "literal_history.h"
#include "model/scenario.h"
#include "oracles/oracle.h"

using namespace idemproof;

namespace {
std::string TargetError(const std::string& batch_block) {
  std::string text = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n  a: {request: {path: /}}\n" + batch_block;
  auto r = ParseTarget(text, "t.yaml");
  REQUIRE_FALSE(r.ok());
  return r.status().ToString();
}

Result<Scenario> Load(const std::string& steps) {
  return ParseScenario("layer: batch\nhunts: a rerun doubles the counts\nsteps:\n" + steps + "expect: [range_continuity]\n",
                       "b.yaml", BuiltinOracles().Vocabulary());
}
}  // namespace

TEST_CASE("the batch section loads with every field") {
  const auto& b = *testing::BatchTarget().batch;
  CHECK(b.run.method == "POST");
  CHECK(b.run.path == "/jobs/{{job}}/run");
  REQUIRE(b.failing_run);
  CHECK(b.failing_run->body->find("{{fail_after}}") != std::string::npos);
  CHECK(b.result.request->path == "/jobs/{{job}}/result?rows=true");
  CHECK(b.rows.text() == "$.rows");
  CHECK(b.row_id.text() == "$.id");
  REQUIRE(b.volatile_paths.size() == 1);
  CHECK(b.markers->text() == "$.markers");
  CHECK(b.marker.key->text() == "$.partition");
  CHECK(b.marker.rows_written.text() == "$.rows_written");
  CHECK(b.checksum == ChecksumAlgorithm::kSha256Rows);
  CHECK(b.partition_rows == std::optional<std::int64_t>(10));
}

TEST_CASE("batch markers may come from a command, e.g. a SQL query") {
  auto r = ParseTarget(R"(name: t
base_url: http://127.0.0.1:1
actions: {a: {role: create, request: {path: /}}}
batch:
  run: {method: POST, path: "/jobs/{{job}}/run", body: '{"from": {{from}}, "to": {{to}}}'}
  result: {command: [sqlite3, -json, "{{run_dir}}/ref.db", "SELECT * FROM rows WHERE job = '{{job}}'"], rows: "$", row_id: "$.row_id"}
  markers: {command: [sqlite3, -json, "{{run_dir}}/ref.db", "SELECT * FROM markers WHERE job = '{{job}}'"]}
  marker: {from: "$.range_from", to: "$.range_to", rows_written: "$.rows_written"}
)", "t.yaml");
  REQUIRE(r.ok());
  CHECK(r->batch->markers_call->command->at(0) == "sqlite3");
  CHECK(r->batch->markers_items.text() == "$");
  CHECK(r->batch->declares_markers());
  CHECK_FALSE(r->batch->failing_run);
}

TEST_CASE("batch section errors say what is wrong and where") {
  CHECK(TargetError("batch:\n  run: {path: /r}\n  result: {request: {path: /x}, rows: $.rows, row_id: $.id}\n  chekcsum: none\n")
            .find("t.yaml:8:3: unknown key 'chekcsum'") != std::string::npos);
  CHECK(TargetError("batch:\n  run: {path: \"/r/{{fail_after}}\"}\n  result: {request: {path: /x}, rows: $.rows, row_id: $.id}\n")
            .find("fail_after") != std::string::npos);
  CHECK(TargetError("batch:\n  run: {path: /r}\n  result: {request: {path: /x}, rows: $.rows}\n")
            .find("row_id") != std::string::npos);
  CHECK(TargetError("batch:\n  run: {path: /r}\n  result: {request: {path: /x}, rows: $.rows, row_id: $.id, markers: $.m}\n")
            .find("marker: {from, to, rows_written}") != std::string::npos);
  CHECK(TargetError("batch:\n  run: {path: /r}\n  result: {request: {path: /x}, rows: $.rows, row_id: $.id}\n  checksum: md5\n")
            .find("unknown algorithm 'md5'") != std::string::npos);
  CHECK(TargetError("batch:\n  run: {path: /r}\n  result: {request: {path: /x}, rows: $.rows, row_id: $.id}\n  partition_rows: 0\n")
            .find("at least 1") != std::string::npos);
}

TEST_CASE("batch steps load, reruns and clean runs take the job's range") {
  auto r = Load(R"(  - run_batch: j1
    from: 0
    to: 1000
    fail_after: 600
  - rerun: j1
  - rerun: j1
    repeat: 3
  - clean_run: j2
)");
  REQUIRE(r.ok());
  const auto& s = r->steps;
  REQUIRE(s.size() == 4);
  CHECK(s[0].KindName() == "run_batch");
  CHECK(s[0].Options<BatchOptions>().fail_after == std::optional<std::int64_t>(600));
  CHECK(s[1].KindName() == "rerun");
  CHECK((s[1].Options<BatchOptions>().from == 0 && s[1].Options<BatchOptions>().to == 1000));
  CHECK(s[2].Options<BatchOptions>().repeat == 3);
  CHECK(s[3].KindName() == "clean_run");
  CHECK(s[3].Options<BatchOptions>().of == "j1");
  CHECK((s[3].Options<BatchOptions>().from == 0 && s[3].Options<BatchOptions>().to == 1000));
  CHECK(r->UsesBatch());
}

TEST_CASE("batch step errors") {
  auto error = [](const std::string& steps) {
    auto r = Load(steps);
    REQUIRE_FALSE(r.ok());
    return r.status().ToString();
  };
  CHECK(error("  - rerun: j1\n").find("no earlier run_batch") != std::string::npos);
  CHECK(error("  - run_batch: j1\n    from: 5\n    to: 5\n").find("greater than 'from'") != std::string::npos);
  CHECK(error("  - run_batch: j1\n    to: 5\n").find("needs 'from' and 'to'") != std::string::npos);
  CHECK(error("  - run_batch: j1\n    from: 0\n    to: 5\n  - clean_run: j1\n").find("fresh job") != std::string::npos);
  CHECK(error("  - run_batch: j1\n    from: 0\n    to: 5\n    fail_aftr: 3\n").find("did you mean 'fail_after'") !=
        std::string::npos);
  CHECK(error("  - clean_run: j2\n").find("needs 'of'") != std::string::npos);
}

TEST_CASE("batch steps need the target's batch section") {
  auto s = Load("  - run_batch: j1\n    from: 0\n    to: 10\n    fail_after: 5\n");
  REQUIRE(s.ok());
  ScenarioFit shop = CheckScenarioAgainstTarget(*s, testing::ShopTarget());
  REQUIRE(shop.needs.size() == 1);
  CHECK(shop.needs[0].find("a batch section") != std::string::npos);
  CHECK(CheckScenarioAgainstTarget(*s, testing::BatchTarget()).runnable());
}
