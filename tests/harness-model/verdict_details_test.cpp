// The typed details of a verdict (model/verdict_details.h) and their one
// JSON codec (model/results_json.h): typed -> JSON -> typed is the same
// value for every kind, and the JSON keeps the results.json shape.
#include <catch2/catch.hpp>

#include "model/finding.h"
#include "model/results_json.h"
#include "model/verdict_details.h"

namespace idemproof {
namespace {

VerdictDetails RoundTrip(const VerdictDetails& d) { return VerdictDetailsFromJson(VerdictDetailsToJson(d)); }

Finding SampleFinding() {
  Finding f = MakeFinding("replay differs", {{"key", "k1"}, {"action", "pay"}});
  f.rule = "status";
  f.With(FindingRole::kFirst, {{"index", 1}, {"process", "client-0"}, {"outcome", "ok"}});
  f.With(FindingRole::kReplay, {{"index", 4}, {"process", "client-1"}, {"outcome", "ok"}, {"completion_index", 5}});
  f.With(FindingRole::kExecutions, {{"index", 6}});
  f.With(FindingRole::kExecutions, {{"index", 8}});
  f.differences = {"status 200 != 201"};
  f.records = 2;
  f.expected = 1;
  f.missing_ranges = {"3-5"};
  f.values = {{"before", 3}, {"after", nlohmann::json{{"n", 4}}}};
  return f;
}

}  // namespace

TEST_CASE("details counts round-trip, each under its own name", "[verdict_details]") {
  VerdictDetails d;
  d.counts = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  const nlohmann::json j = VerdictDetailsToJson(d);
  CHECK(j.size() == 31);  // no two members under one name
  CHECK(j["judged"] == 1);
  CHECK(j["struck_event"] == 31);
  CHECK(RoundTrip(d) == d);
}

TEST_CASE("details tallies round-trip", "[verdict_details]") {
  VerdictDetails d;
  d.tallies.answered = {{"400", 1}, {"422", 2}};
  d.tallies.auth_refused = {{"401", 3}};
  d.tallies.key_unheld = std::map<std::string, std::int64_t>{};
  d.tallies.refused = {{"503", 1}};
  d.tallies.set_aside = {{"no answer", 1}};
  d.tallies.messages = {{"m1", 2}};
  d.tallies.worth = {{"m1", -5}};
  d.tallies.injected = {{"drop", 2}};
  d.tallies.picked = {{"drop", 3}};
  const nlohmann::json j = VerdictDetailsToJson(d);
  CHECK(j.size() == 9);
  CHECK(j["answered"] == nlohmann::json{{"400", 1}, {"422", 2}});
  CHECK(j["key_unheld"] == nlohmann::json::object());
  CHECK(RoundTrip(d) == d);
}

TEST_CASE("details texts and lists round-trip", "[verdict_details]") {
  VerdictDetails d;
  d.texts = {"applications", "required", "1s", "401 x2", "ledger", "POST", "/charge", "totals", "nightly",
             "not checked: the target declares no markers", "not checked: no partition_rows"};
  d.lists = {std::vector<std::string>{"role pay"}, std::vector<std::string>{"query differs"},
             std::vector<std::string>{"401 to caller b"}, std::vector<std::string>{"tx_1", "tx_2"},
             std::vector<std::string>{"pk-1"}, std::vector<std::string>{"pay/b1: no count"}};
  const nlohmann::json j = VerdictDetailsToJson(d);
  CHECK(j.size() == 17);
  CHECK(j["markers"] == "not checked: the target declares no markers");
  CHECK(j["undecided"] == nlohmann::json::array({"pay/b1: no count"}));
  CHECK(RoundTrip(d) == d);
}

TEST_CASE("details probes and records round-trip", "[verdict_details]") {
  VerdictDetails d;
  d.probes.a = FindingValue{"before", nlohmann::json{{"total", 3}}};
  d.probes.b = FindingValue{"after", 3};
  d.records.judged_rows = nlohmann::json::array({{{"biz", "b1"}, {"window_executions", 2}}});
  d.records.key_rows = nlohmann::json::array({{{"key", "k1"}}});
  d.records.requests = nlohmann::json::array({{{"index", 1}}});
  d.records.calls = nlohmann::json::array();
  d.records.ledger = nlohmann::json{{"entries", {1, 2}}};
  d.records.recorded = "tx_1";
  d.records.markers = nlohmann::json{{"count", 3}, {"checksums_compared", 0}};
  d.records.redone_rows = nlohmann::json{{"count", 5}};
  d.records.clean_totals = nlohmann::json{{"rows", 10}, {"sum", 55}};
  d.records.after_rerun = nlohmann::json{{"diff_rows", 0}};
  d.records.later_reruns = nlohmann::json::array();
  d.records.failing_run = nlohmann::json{{"index", 2}};
  d.records.reruns = nlohmann::json::array({{{"index", 3}}});
  d.records.clean_run = nlohmann::json{{"index", 1}};
  d.records.final_comparison = nlohmann::json{{"diff_rows", 0}};
  d.records.missed = nlohmann::json{{"drop", {{"count", 1}, {"why", "no connection"}, {"event", 7}}}};
  const nlohmann::json j = VerdictDetailsToJson(d);
  CHECK(j.size() == 18);
  CHECK(j["a"] == nlohmann::json{{"label", "before"}, {"value", {{"total", 3}}}});
  CHECK(j["final"] == nlohmann::json{{"diff_rows", 0}});
  CHECK(j["judged"][0]["window_executions"] == 2);
  CHECK(RoundTrip(d) == d);
}

TEST_CASE("a name two kinds share is read by the shape of its value", "[verdict_details]") {
  VerdictDetails counted;
  counted.counts.judged = 3;
  counted.counts.keys = 2;
  counted.counts.undecided = 1;
  counted.texts.markers_note = "not checked";
  VerdictDetails rows;
  rows.records.judged_rows = nlohmann::json::array({{{"biz", "b1"}}});
  rows.records.key_rows = nlohmann::json::array();
  rows.lists.undecided_lines = std::vector<std::string>{"b1: no answer"};
  rows.records.markers = nlohmann::json{{"count", 1}};
  CHECK(RoundTrip(counted) == counted);
  CHECK(RoundTrip(rows) == rows);
  CHECK_FALSE(RoundTrip(rows).counts.judged.has_value());
  CHECK_FALSE(RoundTrip(counted).records.judged_rows.has_value());
}

TEST_CASE("findings round-trip through the details, in role order", "[verdict_details]") {
  const Finding f = SampleFinding();
  CHECK(FindingFromJson(FindingToJson(f)) == f);
  VerdictDetails d;
  d.violations = std::vector<Finding>{f, MakeFinding("second")};
  d.counts.judged = 2;
  const nlohmann::json j = VerdictDetailsToJson(d);
  REQUIRE(j["violations"].size() == 2);
  CHECK(j["violations"][0]["replay"]["completion_index"] == 5);
  CHECK(RoundTrip(d) == d);
  // An empty list is said (the oracle judged and found nothing), unset is not.
  VerdictDetails none;
  none.violations = std::vector<Finding>{};
  CHECK(VerdictDetailsToJson(none) == nlohmann::json{{"violations", nlohmann::json::array()}});
  CHECK(RoundTrip(none) == none);
  CHECK(VerdictDetailsToJson(VerdictDetails{}) == nlohmann::json::object());
}

TEST_CASE("InRoleOrder makes a finding what its JSON reads back", "[verdict_details]") {
  Finding f = MakeFinding("twice");
  f.With(FindingRole::kRetry, {{"index", 9}});
  f.With(FindingRole::kFirst, {{"index", 1}});
  f.With(FindingRole::kFirst, {{"index", 2}});  // one op per single role: the first
  CHECK_FALSE(FindingFromJson(FindingToJson(f)) == f);
  const Finding ordered = InRoleOrder(f);
  REQUIRE(ordered.ops.size() == 2);
  CHECK(ordered.ops[0].index() == 1);
  CHECK(ordered.ops[1].index() == 9);
  CHECK(FindingFromJson(FindingToJson(ordered)) == ordered);
}

TEST_CASE("members this version does not know are kept and written back", "[verdict_details]") {
  const nlohmann::json old = {{"judged", 1}, {"from_a_newer_oracle", {{"x", 1}}}, {"needs", 3}};
  const VerdictDetails d = VerdictDetailsFromJson(old);
  CHECK(d.counts.judged == 1);
  CHECK_FALSE(d.lists.needs.has_value());  // not a list of strings: not typed as one
  CHECK(d.unknown == nlohmann::json{{"from_a_newer_oracle", {{"x", 1}}}, {"needs", 3}});
  CHECK(VerdictDetailsToJson(d) == old);
  CHECK(VerdictDetailsFromJson(nlohmann::json("not an object")) == VerdictDetails{});
}

TEST_CASE("a verdict round-trips with its typed details", "[verdict_details]") {
  VerdictDetails d;
  d.violations = std::vector<Finding>{SampleFinding()};
  d.counts.replays_checked = 2;
  d.tallies.set_aside = {{"503 failed on purpose", 1}};
  d.lists.request_differences = std::vector<std::string>{"k1: query differs"};
  Verdict v = Verdict::Invalid("identical_replay", "replay differs", d).Counted(2);
  v.premise.what = "replays";
  v.rule = {"ietf/replay", "a replay gets the first answer", "MUST"};
  const nlohmann::json j = VerdictToJson(v);
  CHECK(j["details"]["replays_checked"] == 2);
  CHECK(j["details"]["set_aside"]["503 failed on purpose"] == 1);
  auto back = VerdictFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->details == v.details);
  CHECK(back->oracle == v.oracle);
  CHECK(back->premise.count == 2);
  CHECK(back->rule.id == "ietf/replay");
}

}  // namespace idemproof

namespace idemproof {

TEST_CASE("an op reference reads typed, its absent members at their defaults", "[verdict_details]") {
  const OpRefView full = ReadOpRef({{"index", 4}, {"process", "client-1"}, {"key", "k1"}, {"outcome", "fail"},
                                    {"error", "connection refused"}, {"completion_index", 5},
                                    {"answer", {{"status", 201}}}});
  CHECK(full.index == 4);
  CHECK(full.process == "client-1");
  CHECK(full.key == "k1");
  CHECK(full.outcome == "fail");
  CHECK(full.error == "connection refused");
  CHECK(full.completion_index == 5);
  CHECK(full.answer == nlohmann::json{{"status", 201}});
  const OpRefView swallowed = ReadOpRef({{"status", 200}, {"error", 7}});  // no index: no op of the history
  CHECK(swallowed.index == -1);
  CHECK(swallowed.error.empty());
  CHECK_FALSE(swallowed.completion_index.has_value());
  CHECK(swallowed.answer.is_null());
}

}  // namespace idemproof
