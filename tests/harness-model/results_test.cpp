#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "literal_history.h"
#include "model/finding.h"
#include "model/metrics.h"
#include "model/not_applicable.h"
#include "model/results.h"
#include "model/results_json.h"
#include "reports/junit.h"
#include "reports/markup_escape.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

// A replay's finding whose evidence carries markup, for the escaping checks.
VerdictDetails ReplayDiffersDetails() {
  Finding f = MakeFinding("replay differs", {{"key", "k1"}});
  f.differences = {"replay body <script>alert(1)</script>"};
  return VerdictDetails::OfFindings({f});
}
RunResults SampleRun() {
  RunResults r;
  r.run_id = "20240501-120000-ab12";
  r.seed = 18446744073709551557ull;
  r.target_name = "reference";
  r.target_file = "scenarios/targets/reference.yaml";
  r.flaw = "empty-replay";
  r.started = "2024-05-01T12:00:00.000Z";
  r.finished = "2024-05-01T12:00:03.250Z";
  r.tool_version = "0.1.0";
  ScenarioResult a;
  a.name = "double-submit";
  a.file = "scenarios/client/double-submit.yaml";
  a.layer = "client";
  a.hunts = "a second click creates a second order";
  a.verdicts.push_back(Verdict::Valid("one_record", "1 business id(s) with the expected record count"));
  a.verdicts.push_back(Verdict::Invalid("identical_replay", "replay answered 200 {\"status\":\"duplicate\"} <&>",
                                        ReplayDiffersDetails()));
  a.verdicts.push_back(Verdict::Unknown("in_progress", "no duplicate overlapped"));
  a.verdicts.push_back(Verdict::NotApplicable("no_false_dedup", "target declares no replay marker"));
  a.fault_counts = {{"proxy-drop", 2}};
  a.warnings = {"fault delay declared but injected 0 times"};
  a.events = 12;
  a.elapsed_ms = 1250;
  a.history_file = "double-submit/history.jsonl";
  a.metrics.keys_sent = 4;
  a.metrics.keys_sent_more_than_once = 1;
  a.metrics.replay_answers = 2;
  ScenarioResult b;
  b.name = "unreachable";
  b.layer = "gateway";
  b.error = "target did not become ready within 10s";
  r.scenarios = {a, b};
  return r;
}
}  // namespace

TEST_CASE("results.json round-trips and carries the exit code and total metrics") {
  RunResults r = SampleRun();
  nlohmann::json j = RunResultsToJson(r);
  CHECK(j["exit_code"] == 1);
  CHECK(j["target"]["name"] == "reference");
  CHECK(j["scenarios"][0]["outcome"] == "invalid");
  CHECK(j["scenarios"][1]["outcome"] == "unknown");
  CHECK(j["metrics"]["keys_sent"] == 4);
  CHECK(j["metrics"]["duplicate_rate"] == 0.25);
  CHECK(j["metrics"]["rerun_diff_rows"].is_null());
  auto back = RunResultsFromJson(j);
  REQUIRE(back.ok());
  CHECK(RunResultsToJson(*back) == j);
  CHECK(back->seed == r.seed);

  auto path = (std::filesystem::temp_directory_path() / ("idemproof-results-test-" + std::to_string(::getpid()) + ".json")).string();
  REQUIRE(WriteRunResults(r, path).ok());
  auto read = ReadRunResults(path);
  REQUIRE(read.ok());
  CHECK(RunResultsToJson(*read) == j);
  std::remove(path.c_str());
}

TEST_CASE("the exit code: 1 on a violation, 3 when undecided, 0 otherwise") {
  RunResults r = SampleRun();
  CHECK(r.ExitCode() == 1);
  r.scenarios[0].verdicts.erase(r.scenarios[0].verdicts.begin() + 1);
  CHECK(r.ExitCode() == 3);
  r.scenarios.pop_back();
  r.scenarios[0].verdicts.erase(r.scenarios[0].verdicts.begin() + 1);  // the unknown one
  CHECK(r.ExitCode() == 0);
  CHECK(r.scenarios[0].Outcome() == VerdictStatus::kValid);
}

TEST_CASE("a run in which no row judged the target exits 3: nothing was tested") {
  RunResults r;
  auto na = [](const std::string& name, std::vector<std::string> needs) {
    ScenarioResult s;
    s.name = name;
    std::string why = "needs " + needs.front();
    s.verdicts.push_back(Verdict::NotApplicable("one_record", why, VerdictDetails::OfNeeds(needs)));
    s.verdicts.push_back(Verdict::NotApplicable("identical_replay", why, VerdictDetails::OfNeeds(needs)));
    return s;
  };
  r.scenarios.push_back(na("kill-after-charge", {"an action with role pay"}));
  r.scenarios.push_back(na("delete-releases-once", {"an action with role delete"}));
  r.scenarios.push_back(na("repeated-callback", {"an action with role pay"}));
  CHECK(r.NothingTested());
  CHECK(r.ExitCode() == 3);
  const std::string note = NotApplicableNote(r);
  CHECK(note.rfind("nothing was tested", 0) == 0);
  CHECK(note.find("3 of 3 row(s) not applicable: 2 needs an action with role pay; 1 needs an action with role "
                  "delete") != std::string::npos);
  CHECK(RunResultsToJson(r)["nothing_tested"] == true);

  // Every verdict undecided (a premise never reached) tests nothing either.
  ScenarioResult undecided;
  undecided.name = "burst-after-window";
  undecided.verdicts.push_back(Verdict::Unknown("identical_replay", "premise not reached: no replay happened"));
  r.scenarios.push_back(undecided);
  CHECK(r.NothingTested());
  CHECK(NotApplicableNote(r).find("1 undecided") != std::string::npos);
  r.scenarios.pop_back();

  // One row that judged the target: the run is decided by its verdicts.
  ScenarioResult tested;
  tested.name = "double-submit";
  tested.verdicts.push_back(Verdict::Valid("one_record", "1 business id(s) with the expected record count"));
  r.scenarios.push_back(tested);
  CHECK_FALSE(r.NothingTested());
  CHECK(r.ExitCode() == 0);
  CHECK(NotApplicableNote(r) == "3 of 4 row(s) not applicable: 2 needs an action with role pay; 1 needs an "
                                 "action with role delete");

  // A shard is judged by its merge: its rows may all be not applicable.
  r.scenarios.pop_back();
  r.shard = ShardOfRun{};
  CHECK_FALSE(r.NothingTested());
  // ...and no run at all tests nothing.
  RunResults empty;
  CHECK(empty.ExitCode() == 3);
}

TEST_CASE("XML escaping keeps the document well formed") {
  CHECK(XmlEscape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  CHECK(XmlEscape(std::string("nul\0bell\x07", 9)) == "nul\xEF\xBF\xBD" "bell\xEF\xBF\xBD");
  CHECK(XmlEscape("caf\xC3\xA9 \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xF0\x9F\x98\x80");
  CHECK(XmlEscape("bad \xC3 byte \xFF") == "bad \xEF\xBF\xBD byte \xEF\xBF\xBD");
  CHECK(XmlEscape("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  CHECK(XmlEscape("a\nb\tc\r") == "a\nb\tc&#13;");
  CHECK(XmlEscape("a\nb", true) == "a&#10;b");
}

TEST_CASE("JUnit: a testcase per scenario x oracle, failures carry escaped evidence") {
  std::string xml = RenderJUnit(SampleRun());
  CHECK(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"idemproof reference --flaw empty-replay\" "
                  "tests=\"5\" failures=\"1\" errors=\"2\" skipped=\"1\">", 0) == 0);
  CHECK(xml.find("<testsuite name=\"double-submit\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"1.250\"") !=
        std::string::npos);
  CHECK(xml.find("<testcase classname=\"client.double-submit\" name=\"one_record\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"replay answered 200 {&quot;status&quot;:&quot;duplicate&quot;} &lt;&amp;&gt;\" "
                 "type=\"invalid\">") != std::string::npos);
  CHECK(xml.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(xml.find("<script>") == std::string::npos);
  CHECK(xml.find("<error message=\"no duplicate overlapped\" type=\"unknown\">") != std::string::npos);
  CHECK(xml.find("<skipped message=\"target declares no replay marker\"/>") != std::string::npos);
  CHECK(xml.find("<property name=\"fault.proxy-drop\" value=\"2\"/>") != std::string::npos);
  CHECK(xml.find("<testcase classname=\"gateway.unreachable\" name=\"run\">\n      <error message=\"target did not "
                 "become ready within 10s\" type=\"run_error\"/>") != std::string::npos);
}

TEST_CASE("metrics on a literal history") {
  LiteralHistory h;
  // k1: sent twice, second a marked replay, one record. k2: once. k3: a retry
  // 5s after the first answer (outside the 4s window) that executed again.
  // k4: a replay-marked 201 although nothing was created (false dedup).
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{201, R"({"id":1})"})
      .Send("client-0", "create_order", "k1", "b1", 100, 105, Replay())
      .Send("client-0", "create_order", "k2", "b2", 200, 210, Answer{201, R"({"id":2})"})
      .Send("client-0", "create_order", "k3", "b3", 300, 310, Answer{201, R"({"id":3})"})
      .Send("client-0", "create_order", "k3", "b3", 5310, 5320, Answer{201, R"({"id":4})"})
      .Lost("client-0", "create_order", "k4", "b4", 6000, 7000)
      .Send("client-0", "create_order", "k4", "b4", 7000, 7005, Replay(201, R"({"id":5})"))
      .Send("client-0", "create_order", "k4", "b4", 7100, 7105, Answer{201, R"({"id":5})"})
      .Send("client-0", "create_order", "", "b5", 7200, 7205, Answer{400, "{}"})
      .Records("create_order", "b1", 1, 8000)
      .Records("create_order", "b2", 1, 8000)
      .Records("create_order", "b3", 2, 8000)
      .Records("create_order", "b4", 0, 8000);
  Metrics m = ComputeMetrics(ShopTarget(), h.history());
  CHECK(m.keys_sent == 4);
  CHECK(m.keys_sent_more_than_once == 3);
  CHECK(m.duplicate_rate() == Approx(0.75));
  CHECK(m.replay_answers == 2);
  CHECK(m.replay_answers_without_record == 1);
  CHECK(m.false_dedup_rate() == Approx(0.5));
  // Window retries: k1's replay (recognised) and k4's third request (after the
  // first terminal answer at 7005, unmarked: not recognised). k3 is outside.
  CHECK(m.window_retries == 2);
  CHECK(m.window_retries_recognised == 1);
  CHECK(m.window_hit_rate() == Approx(0.5));
  CHECK_FALSE(m.rerun_diff_rows.has_value());

  Metrics none = ComputeMetrics(ShopTarget(), History());
  CHECK_FALSE(none.duplicate_rate().has_value());
  CHECK_FALSE(none.false_dedup_rate().has_value());
  CHECK_FALSE(none.window_hit_rate().has_value());

  // Without a marker, the window counts answers equal to the first; no
  // false-dedup numbers are possible.
  Metrics plain = ComputeMetrics(PlainTarget(), h.history());
  CHECK(plain.replay_answers == 0);
  CHECK(plain.window_retries == 3);  // no declared window: k3's late retry counts too
  CHECK(plain.window_retries_recognised == 2);  // k1 and k4 repeat the first body; k3 does not

  auto back = MetricsFromJson(MetricsToJson(m));
  REQUIRE(back.ok());
  CHECK(MetricsToJson(*back) == MetricsToJson(m));
}

TEST_CASE("severity: a deviation shows everywhere but fails the run only under strict") {
  RunResults r;
  r.run_id = "run";
  r.target_name = "t";
  ScenarioResult s;
  s.name = "duplicate-while-in-progress";
  s.layer = "concurrency";
  s.verdicts.push_back(Verdict::Valid("in_progress", "1 duplicate got 409"));
  s.verdicts.push_back(Verdict::Deviation("retry_after", "request #3 was answered 409 in progress without Retry-After"));
  r.scenarios = {s};
  CHECK(r.ExitCode() == 0);
  CHECK(r.scenarios[0].Outcome() == VerdictStatus::kValid);
  nlohmann::json j = RunResultsToJson(r);
  CHECK(j["scenarios"][0]["verdicts"][1]["severity"] == "deviation");
  CHECK(j["scenarios"][0]["verdicts"][1]["status"] == "invalid");
  CHECK(j["scenarios"][0]["deviations"] == 1);
  CHECK_FALSE(j["scenarios"][0]["verdicts"][0].contains("severity"));  // only findings carry one
  CHECK_FALSE(j.contains("strict"));
  auto back = RunResultsFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->scenarios[0].verdicts[1].is_deviation());
  std::string xml = RenderJUnit(r);
  CHECK(xml.find("failures=\"0\"") != std::string::npos);
  CHECK(xml.find("<property name=\"severity\" value=\"deviation\"/>") != std::string::npos);
  CHECK(xml.find("<system-out>DEVIATION") != std::string::npos);

  r.strict = true;
  CHECK(r.ExitCode() == 1);
  CHECK(r.scenarios[0].Outcome(true) == VerdictStatus::kInvalid);
  CHECK(RunResultsToJson(r)["strict"] == true);
  CHECK(RunResultsFromJson(RunResultsToJson(r))->strict);
  xml = RenderJUnit(r);
  CHECK(xml.find("failures=\"1\"") != std::string::npos);
  CHECK(xml.find("type=\"deviation\"") != std::string::npos);

  // A violation fails the run either way; old results without severity read as violations.
  nlohmann::json old = VerdictToJson(Verdict::Invalid("one_record", "2 records"));
  old.erase("severity");
  CHECK(VerdictFromJson(old)->is_violation());
  old["severity"] = "sometimes";
  CHECK_FALSE(VerdictFromJson(old).ok());

  // The premise count reads back, and an uncounted premise stays uncounted.
  Verdict counted = Verdict::Valid("in_progress", "held").Counted(31);
  counted.premise.what = "overlapping duplicates";
  auto counted_back = VerdictFromJson(VerdictToJson(counted));
  REQUIRE(counted_back.ok());
  CHECK(counted_back->premise.what == "overlapping duplicates");
  CHECK(counted_back->premise.count == std::optional<std::int64_t>(31));
  Verdict uncounted = Verdict::Unknown("in_progress", "crashed");
  uncounted.premise.what = "overlapping duplicates";
  CHECK(VerdictToJson(uncounted)["premise"]["count"].is_null());
  CHECK_FALSE(VerdictFromJson(VerdictToJson(uncounted))->premise.count);
  CHECK_FALSE(VerdictToJson(Verdict::Valid("probe_equal", "equal")).contains("premise"));
}

// Issue 33: the other false duplicate, a new request swallowed as a replay.
TEST_CASE("metrics: the swallowed-new rate counts first requests of a key answered as a replay") {
  LiteralHistory h;
  // k1 executes, k2 (the same body, a new key) is swallowed as k1's replay,
  // k1's retry is a true replay (not counted: not a key's first request), k3's
  // first request got no answer and its retry's replay is not counted either.
  h.Send("client-0", "create_order", "k1", "b1", 0, 10, Answer{201, R"({"id":1})"})
      .Send("client-0", "create_order", "k2", "b1", 20, 30, Replay())
      .Send("client-0", "create_order", "k1", "b1", 40, 50, Replay())
      .Lost("client-0", "create_order", "k3", "b3", 60, 70)
      .Send("client-0", "create_order", "k3", "b3", 80, 90, Replay(201, R"({"id":3})"))
      // k4: a burst; its first invoke lost the race to a copy (a true replay)
      .Send("burst-0", "create_order", "k4", "b4", 100, 130, Replay(201, R"({"id":4})"))
      .Send("burst-1", "create_order", "k4", "b4", 101, 120, Answer{201, R"({"id":4})"})
      .Records("create_order", "b1", 1, 200);
  Metrics m = ComputeMetrics(ShopTarget(), h.history());
  CHECK(m.new_key_answers == 2);
  CHECK(m.new_key_answers_as_replay == 1);
  CHECK(m.swallowed_new_rate() == Approx(0.5));
  auto back = MetricsFromJson(MetricsToJson(m));
  REQUIRE(back.ok());
  CHECK(back->new_key_answers_as_replay == 1);
  CHECK(MetricsToJson(*back)["swallowed_new_rate"].get<double>() == Approx(0.5));
  // Without a marker nothing is counted: a rate over nothing is null.
  CHECK_FALSE(ComputeMetrics(PlainTarget(), h.history()).swallowed_new_rate().has_value());
}

TEST_CASE("the hunt section round-trips typed and its verdict counts in the run's exit code") {
  RunResults r = SampleRun();
  r.scenarios[0].verdicts.erase(r.scenarios[0].verdicts.begin() + 1);
  r.scenarios.pop_back();
  r.scenarios[0].verdicts.erase(r.scenarios[0].verdicts.begin() + 1);
  REQUIRE(r.ExitCode() == 0);  // the suite alone holds
  HuntResults h;
  h.budget = "1m";
  h.oracles = {"one_record", "window"};
  h.exit_code = 1;
  h.outcome = "violation";
  h.seed = 7;
  h.run_namespace = "abc123";
  h.workloads = 40;
  h.operations = 120;
  h.ops_by_kind = {{"send", 80}, {"restart", 40}};
  h.faults_fired = 40;
  h.passed = 30;
  h.excluded = {{"send_caller", "needs two callers declared in the target (callers:)"}};
  HuntFailure f;
  f.first_failure = "send create_order k1/b1; restart; send create_order k1/b1; wait 100ms";
  f.first_failure_ops = 4;
  f.minimal = "send create_order k1/b1; restart; send create_order k1/b1";
  f.minimal_ops = 3;
  f.invalid = {{"one_record", "2 records for create_order biz b1"}};
  f.repro_file = "/runs/x/hunt/y/repro.yaml";
  f.repro_command = "idemproof run /runs/x/hunt/y/repro.yaml --target t.yaml --hunt 0";
  h.failure = f;
  r.hunt = h;
  CHECK(r.SuiteExitCode() == 0);
  CHECK(r.ExitCode() == 1);  // a violation the hunt found fails the run
  nlohmann::json j = RunResultsToJson(r);
  CHECK(j["exit_code"] == 1);
  CHECK(j["hunt"]["outcome"] == "violation");
  CHECK(j["hunt"]["failure"]["minimal_ops"] == 3);
  CHECK(j["hunt"]["excluded"][0]["op"] == "send_caller");
  auto back = RunResultsFromJson(j);
  REQUIRE(back.ok());
  REQUIRE(back->hunt);
  CHECK(back->hunt->failure->repro_command == f.repro_command);
  CHECK(back->hunt->ops_by_kind.at("restart") == 40);
  CHECK(RunResultsToJson(*back) == j);
  CHECK(back->hunt->Line().find("VIOLATION of one_record") != std::string::npos);
  CHECK(back->hunt->Line().find("shrunk from 4 to 3 op(s), replay: " + f.repro_command) != std::string::npos);
  // An undecided hunt makes a clean suite undecided; a clean one leaves it.
  r.hunt->exit_code = 3;
  r.hunt->outcome = "undecided";
  r.hunt->failure.reset();
  CHECK(r.ExitCode() == 3);
  CHECK(r.hunt->Line().find("UNDECIDED: no workload was judged") != std::string::npos);
  r.hunt->exit_code = 0;
  r.hunt->outcome = "clean";
  CHECK(r.ExitCode() == 0);
  CHECK(r.hunt->Line().find("no violation (40 workload(s)") != std::string::npos);
  // Not an object: a clear error, not a silent empty hunt.
  j["hunt"] = "clean";
  CHECK_FALSE(RunResultsFromJson(j).ok());
}
