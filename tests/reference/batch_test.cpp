// Batch jobs of the reference service: the correct rerun (resume, then
// nothing), and each batch flaw's symptom, on the core with a fake clock;
// then the fault reached from outside, over HTTP, through the real binary.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "http_client.h"
#include "idemproof/ref/batch_job.h"
#include "idemproof/ref/sqlite_store.h"
#include "service_process.h"
#include "temp_dir.h"

using namespace idemproof::ref;
using idemproof::HttpRequest;
using idemproof::HttpResponse;
using idemproof::ref::testing::TempDir;
using nlohmann::json;

namespace {

const TimePoint kStart = from_epoch_ns(1'714'564'800'000'000'000);  // 2024-05-01T12:00:00Z

// One service's batch part on a fresh SQLite file.
struct BatchRig {
  explicit BatchRig(Flaw flaw = Flaw::none) : service(config_for(flaw)) {}
  static ServiceConfig config_for(Flaw flaw) {
    ServiceConfig c;
    c.flaw = flaw;
    c.dedup_ttl = std::chrono::seconds(4);
    return c;
  }
  TempDir dir;
  FakeClock clock{kStart};
  ServiceConfig service;
  SqliteStore requests{dir.file("ref.db")};
  RangeMarkerStore markers{dir.file("ref.db")};
  BatchRoutes routes{BatchConfig{10, 1'000'000, batch_discipline_for(service.flaw)}, service, requests, markers,
                     clock};

  HttpResponse call(const std::string& method, const std::string& target, const std::string& body = "") {
    HttpRequest r{method, target, {{"Content-Type", "application/json"}}, body};
    const auto q = target.find('?');
    const std::string path = target.substr(0, q);
    auto answer = routes.route(r, path, path, q == std::string::npos ? "" : target.substr(q + 1));
    REQUIRE(answer);
    return *answer;
  }
  json run(const std::string& job, std::optional<int> fail_after = std::nullopt, int from = 0, int to = 1000) {
    json body = {{"from", from}, {"to", to}};
    if (fail_after) body["fail_after"] = *fail_after;
    last = call("POST", "/jobs/" + job + "/run", body.dump());
    return json::parse(last.body);
  }
  json result(const std::string& job) { return json::parse(call("GET", "/jobs/" + job + "/result?rows=true").body); }

  HttpResponse last;
};

// Row ids with their number of copies.
std::map<std::int64_t, int> copies(const json& result) {
  std::map<std::int64_t, int> out;
  for (const auto& r : result["rows"]) ++out[r["id"].get<std::int64_t>()];
  return out;
}

json without_run(json rows) {
  for (auto& r : rows) r.erase("run");
  return rows;
}

}  // namespace

TEST_CASE("a batch run that failed at 60 % resumes: the rerun writes the missing 40 %, later reruns nothing", "[batch][slow]") {
  BatchRig rig;
  json failed = rig.run("j1", 600);
  CHECK(rig.last.status == 500);
  CHECK(failed["type"] == "urn:idemproof:batch-failed");
  CHECK(failed["rows_written"] == 600);
  json after_fail = rig.result("j1");
  CHECK(after_fail["rows"].size() == 600);
  CHECK(after_fail["markers"].size() == 60);

  json rerun = rig.run("j1");
  CHECK(rig.last.status == 200);
  CHECK(rerun["rows_written"] == 400);
  CHECK(rerun["partitions_skipped"] == 60);
  json done = rig.result("j1");
  rig.run("clean");
  json clean = rig.result("clean");
  CHECK(without_run(done["rows"]) == without_run(clean["rows"]));
  CHECK(done["digest"] == clean["digest"]);
  CHECK(done["totals"] == clean["totals"]);
  REQUIRE(done["markers"].size() == 100);
  for (const auto& m : done["markers"]) {
    std::vector<BatchRow> rows;
    for (std::int64_t id = m["from"]; id < m["to"].get<std::int64_t>(); ++id) rows.push_back(transform_source_row(id, 0));
    CHECK(m["rows_written"] == 10);
    CHECK(m["checksum"] == rows_checksum(rows));
  }
  for (int i = 0; i < 3; ++i) {
    rig.clock.advance(std::chrono::seconds(10));
    CHECK(rig.run("j1")["rows_written"] == 0);
  }
  json after_three = rig.result("j1");
  CHECK(after_three["rows"] == done["rows"]);
  CHECK(after_three["markers"] == done["markers"]);  // done_at included: nothing redone
}

TEST_CASE("a failure inside a partition leaves it unmarked, the rerun redoes it by upsert", "[batch][slow]") {
  BatchRig rig;
  rig.run("j1", 605);
  json partial = rig.result("j1");
  CHECK(partial["rows"].size() == 605);
  CHECK(partial["markers"].size() == 60);
  CHECK(rig.run("j1")["rows_written"] == 400);  // partition 60 again (10 rows) + 390
  json done = rig.result("j1");
  CHECK(done["rows"].size() == 1000);
  for (const auto& [id, n] : copies(done)) CHECK(n == 1);
}

TEST_CASE("range markers are never swept with the request records", "[batch][slow]") {
  BatchRig rig;
  rig.run("j1");
  rig.clock.advance(std::chrono::hours(24 * 365));
  rig.requests.sweep(rig.clock.now());
  CHECK(rig.result("j1")["markers"].size() == 100);
  CHECK(rig.run("j1")["rows_written"] == 0);
}

TEST_CASE("batch requests are validated", "[batch]") {
  BatchRig rig;
  CHECK(rig.call("POST", "/jobs/j1/run", "{\"from\": 10, \"to\": 10}").status == 400);
  CHECK(rig.call("POST", "/jobs/j1/run", "{\"from\": 0, \"to\": 10, \"fail_after\": -1}").status == 400);
  CHECK(rig.call("POST", "/jobs/j1/run", "nope").status == 400);
  CHECK(rig.call("POST", "/jobs/j1/run", "{\"from\": 0, \"to\": 2000000}").status == 400);
  CHECK(rig.call("GET", "/jobs/j1/run").status == 405);
  CHECK(rig.call("GET", "/jobs/never/result").status == 404);
  CHECK(rig.call("GET", "/jobs/bad%20name/result").status == 404);
  HttpRequest other{"GET", "/jobs/j1/other", {}, ""};
  CHECK_FALSE(rig.routes.route(other, "/jobs/j1/other", "/jobs/j1/other", ""));
}

TEST_CASE("flaw whole-batch-marker: the rerun after a partial failure skips the rest", "[batch][flaw][slow]") {
  BatchRig rig(Flaw::whole_batch_marker);
  rig.run("j1", 600);
  CHECK(rig.last.status == 500);
  CHECK(rig.run("j1")["rows_written"] == 0);
  CHECK(rig.last.status == 200);
  json r = rig.result("j1");
  CHECK(r["rows"].size() == 600);  // 400 rows never written
  REQUIRE(r["markers"].size() == 1);
  CHECK(r["markers"][0]["rows_written"] == 1000);  // the marker claims them
}

TEST_CASE("flaw no-range-marker: the rerun doubles what was done", "[batch][flaw][slow]") {
  BatchRig rig(Flaw::no_range_marker);
  rig.run("j1", 600);
  rig.run("j1");
  json r = rig.result("j1");
  CHECK(r["markers"].empty());
  auto c = copies(r);
  CHECK(c[0] == 2);
  CHECK(c[599] == 2);
  CHECK(c[600] == 1);
  CHECK(r["totals"]["rows"] == 1600);
}

TEST_CASE("flaw batch-id-in-request-table: swallowed inside the TTL, redone after it", "[batch][flaw][slow]") {
  BatchRig rig(Flaw::batch_id_in_request_table);
  rig.run("j1", 600);
  CHECK(rig.last.status == 500);
  rig.clock.advance(std::chrono::seconds(1));
  json swallowed = rig.run("j1");
  CHECK(rig.last.status == 202);
  CHECK(rig.last.header("Idempotent-Replayed") == "true");
  CHECK(swallowed["status"] == "accepted");
  CHECK(rig.result("j1")["rows"].size() == 600);
  rig.clock.advance(std::chrono::seconds(5));  // past the 4 s request TTL
  CHECK(rig.run("j1")["rows_written"] == 1000);
  auto c = copies(rig.result("j1"));
  CHECK(c[0] == 2);
  CHECK(c[999] == 1);

  BatchRig correct;  // the same steps on the correct service
  correct.run("j1", 600);
  correct.clock.advance(std::chrono::seconds(1));
  CHECK(correct.run("j1")["rows_written"] == 400);
  CHECK(correct.last.header("Idempotent-Replayed") == std::nullopt);
}

TEST_CASE("flaw coarse-marker: a partial failure cannot resume, the rerun redoes the whole range", "[batch][flaw][slow]") {
  BatchRig rig(Flaw::coarse_marker);
  rig.run("j1", 600);
  CHECK(rig.result("j1")["markers"].empty());
  CHECK(rig.run("j1")["rows_written"] == 1000);
  json r = rig.result("j1");
  CHECK(r["rows"].size() == 1000);  // upsert: the right rows, written twice
  CHECK(r["rows"][0]["run"] == 2);
  REQUIRE(r["markers"].size() == 1);
  CHECK(r["markers"][0]["partition"] == "0-1000");
  CHECK(rig.run("j1")["rows_written"] == 0);
}

TEST_CASE("the fail_after fault is reachable over HTTP through the real binary", "[batch][server][slow]") {
  using namespace idemproof::ref::testing;
  TempDir dir;
  ServiceProcess service({"--port", "0", "--db", dir.file("ref.db"), "--batch-partition-rows", "25"});
  auto post = [&](const std::string& body) {
    return http_call({"POST", service.url() + "/jobs/nightly/run", {"Content-Type: application/json"}, body});
  };
  HttpResult failed = post(R"({"from": 100, "to": 300, "fail_after": 120})");
  CHECK(failed.status == 500);
  CHECK(json::parse(failed.body)["rows_written"] == 120);
  HttpResult rerun = post(R"({"from": 100, "to": 300})");
  CHECK(rerun.status == 200);
  CHECK(json::parse(rerun.body)["rows_written"] == 100);  // partition 8 again (25) + 75
  HttpResult result = http_call({"GET", service.url() + "/jobs/nightly/result", {}, std::nullopt});
  json r = json::parse(result.body);
  CHECK(r["totals"]["rows"] == 200);
  CHECK(r["markers"].size() == 8);
  CHECK_FALSE(r.contains("rows"));  // rows only on request
  ExitedProcess list = run_reference_to_exit({"--flaw", "list"});
  for (const char* flaw : {"whole-batch-marker", "no-range-marker", "batch-id-in-request-table", "coarse-marker"})
    CHECK(list.out.find(flaw) != std::string::npos);
}
