// The cluster layer end to end (real processes): scenarios/cluster against
// the reference on three instances (scenarios/targets/reference-cluster.yaml,
// one SQLite file shared by three processes, the harness their balancer):
// the correct service passes and every request names its instance; the
// flaw instance-local-claims is caught; on the one-instance reference.yaml
// the layer is not applicable, with the reason. And the whole suite on three
// instances over one PostgreSQL store. A non-main instance that dies on its
// own mid-scenario is a target_exited event and exit 3, and a cluster given
// as the URLs of two services already running runs the cluster layer.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace idemproof::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string TargetFile(const std::string& name) { return SourceDir() + "/scenarios/targets/" + name; }
std::string ClusterLayer() { return SourceDir() + "/scenarios/cluster"; }

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// scenario folder -> the instances its send/burst invokes went to ("" = a
// request without value.instance).
std::map<std::string, std::multiset<std::string>> InstancesByScenario(const fs::path& run) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const auto& entry : fs::recursive_directory_iterator(run)) {
    if (entry.path().filename() != "history.jsonl") continue;
    std::istringstream lines(ReadFile(entry.path().string()));
    std::string line;
    while (std::getline(lines, line)) {
      const json e = json::parse(line);
      if (e.value("type", "") != "invoke") continue;
      const std::string f = e.value("f", "");
      if (f != "send" && f != "burst") continue;
      const json& v = e["value"];
      out[entry.path().parent_path().filename().string()].insert(
          v.contains("instance") && v["instance"].is_string() ? v["instance"].get<std::string>() : "");
    }
  }
  return out;
}

std::set<std::string> InvalidOracles(const json& results, const std::string& scenario) {
  std::set<std::string> out;
  for (const auto& s : results.at("scenarios")) {
    if (s.value("scenario", s.value("name", "")) != scenario) continue;
    for (const auto& v : s.at("verdicts"))
      if (v.at("status") == "invalid") out.insert(v.at("oracle").get<std::string>());
  }
  return out;
}

// `idemproof run PATH --target TARGET` into dir, which must hold: exit 0
// and no verdict but valid and not_applicable.
VerdictTally RunHolding(const std::string& dir, const std::string& path, const std::string& target) {
  CliResult r = RunIdemproof(
      {"run", path, "--target", TargetFile(target), "--out", dir + "/runs", "--json", dir + "/results.json"}, dir);
  INFO(Diagnose(r));
  REQUIRE(r.exit_code == 0);
  const VerdictTally tally = TallyVerdicts(ReadFile(dir + "/results.json"));
  INFO(tally.ProblemText());
  CHECK(tally.problems.empty());
  return tally;
}

}  // namespace

TEST_CASE("the cluster layer passes the correct reference on three instances, every request naming its instance",
          "[cli][cluster][slow]") {
  const std::string dir = ScratchDir("cluster-correct");
  const VerdictTally tally = RunHolding(dir, ClusterLayer(), "reference-cluster.yaml");
  CHECK(tally.not_applicable == 0);  // every cluster scenario ran: three instances are enough
  CHECK(tally.valid >= 10);

  const auto instances = InstancesByScenario(fs::canonical(dir + "/runs/latest"));
  REQUIRE(instances.size() >= 3);
  const std::set<std::string> known = {"main", "instance-2", "instance-3"};
  for (const auto& [scenario, names] : instances) {
    INFO(scenario);
    for (const auto& name : names) CHECK(known.count(name) == 1);  // never a request without its instance
  }
  // The burst of 6 went 2 to each of the three; the retry went to another instance than the first.
  const auto& burst = instances.at("burst-across-instances.create_order");
  CHECK(burst.count("main") >= 2);
  CHECK(burst.count("instance-2") >= 2);
  CHECK(burst.count("instance-3") >= 2);
  const auto& lost = instances.at("lost-answer-other-instance.create_order");
  CHECK(lost.count("main") >= 1);
  CHECK(lost.size() > lost.count("main"));
}

TEST_CASE("the whole suite passes the reference on PostgreSQL with three instances", "[cli][cluster][postgres][slow]") {
  // reference-postgres-cluster.yaml: three processes on one PostgreSQL store
  // the run starts itself (scripts/postgres-service.sh), the harness their balancer.
  const std::string dir = ScratchDir("cluster-postgres-suite");
  const VerdictTally tally = RunHolding(dir, SourceDir() + "/scenarios", "reference-postgres-cluster.yaml");
  CHECK(tally.valid >= 60);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  for (const auto& s : results.at("scenarios")) {
    if (s.value("scenario", s.value("name", "")) != "stream-kill-before-ack") continue;
    // Its premise needs one consumer: said, not judged.
    CHECK(s.at("verdicts").at(0).at("status") == "not_applicable");
    CHECK(s.at("verdicts").at(0).at("evidence").get<std::string>().find("at most 1 instance") != std::string::npos);
  }
  // Single-instance scenarios too went through the balancer to every instance.
  std::multiset<std::string> all;
  for (const auto& [scenario, names] : InstancesByScenario(fs::canonical(dir + "/runs/latest"))) all.insert(names.begin(), names.end());
  CHECK(all.count("instance-2") > 0);
  CHECK(all.count("instance-3") > 0);
}

TEST_CASE("the flaw instance-local-claims is caught by the cluster layer", "[cli][cluster][flaws][slow]") {
  const std::string dir = ScratchDir("cluster-flaw");
  CliResult r = RunIdemproof({"run", ClusterLayer(), "--target", TargetFile("reference-cluster.yaml"), "--flaw",
                              "instance-local-claims", "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 1);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  CHECK(InvalidOracles(results, "burst-across-instances").count("one_record") == 1);
  CHECK(InvalidOracles(results, "lost-answer-other-instance").count("one_record") == 1);
  CHECK(InvalidOracles(results, "kill-instance-takeover").count("lease_recovery") == 1);
  // The evidence names the instance of each request.
  CHECK(ReadFile(dir + "/runs/latest/report.md").find(", instance-") != std::string::npos);
}

TEST_CASE("kill-instance-takeover runs on a cluster of exactly two instances, its retries on the one left",
          "[cli][cluster][slow]") {
  // With two instances the second retry looked for an instance besides the
  // first retry's (instance-2) while main, the owner, was dead: "instance:
  // other: no target instance up besides ..." and no verdict at all.
  const std::string dir = ScratchDir("cluster-two");
  std::string target = ReadFile(TargetFile("reference-cluster.yaml"));
  const std::regex three("\ninstances: 3[^\n]*\n");
  REQUIRE(std::regex_search(target, three));
  target = std::regex_replace(target, three, "\ninstances: 2\n");
  WriteFile(dir + "/two.yaml", target);
  CliResult r = RunIdemproof({"run", ClusterLayer() + "/kill-instance-takeover.yaml", "--target", dir + "/two.yaml",
                              "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 0);
  const VerdictTally tally = TallyVerdicts(ReadFile(dir + "/results.json"));
  INFO(tally.ProblemText());
  CHECK(tally.problems.empty());
  CHECK(tally.valid >= 2);
  const auto instances = InstancesByScenario(fs::canonical(dir + "/runs/latest"));
  const auto& sent = instances.at("kill-instance-takeover.create_order");
  CHECK(sent.count("main") == 2);            // the owner and its duplicate
  CHECK(sent.count("instance-2") >= 2);      // every retry on the instance left up
}

TEST_CASE("a target whose instances share no store: paused-owner-takeover and the cluster layer are not applicable",
          "[cli][cluster]") {
  // paused-owner-takeover spawns a second process and takes the key over
  // there: on a target whose instances keep their own state that violation
  // is unearned. Said, not judged; nothing is started.
  const std::string dir = ScratchDir("shared-nothing");
  WriteFile(dir + "/alone.yaml", ReadFile(TargetFile("reference.yaml")) + "\nshared_store: false\n");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/side-effect/paused-owner-takeover.yaml",
                              SourceDir() + "/scenarios/cluster/kill-instance-takeover.yaml", "--target",
                              dir + "/alone.yaml", "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 3);  // nothing was tested: never a green run, never a violation
  const json results = json::parse(ReadFile(dir + "/results.json"));
  int verdicts = 0;
  for (const auto& s : results.at("scenarios")) {
    for (const auto& v : s.at("verdicts")) {
      ++verdicts;
      CHECK(v.at("status") == "not_applicable");
      CHECK(v.at("evidence").get<std::string>().find("instances that share one store") != std::string::npos);
    }
  }
  CHECK(verdicts == 4);
}

TEST_CASE("on a one-instance target the cluster layer is not applicable, saying it needs two instances",
          "[cli][cluster][slow]") {
  const std::string dir = ScratchDir("cluster-one");
  CliResult r = RunIdemproof({"run", ClusterLayer(), "--target", TargetFile("reference.yaml"), "--out",
                              dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  // One row per scenario file of the layer (a single-action target).
  int files = 0;
  for (const auto& entry : fs::directory_iterator(ClusterLayer())) files += entry.path().extension() == ".yaml";
  REQUIRE(files >= 4);
  const std::string n = std::to_string(files);
  // Every row not applicable: nothing was tested, exit 3 (never a green run).
  CHECK(r.exit_code == 3);
  // The cause as a table row (cli/summary_table.h): rows, cause, what to add.
  CHECK(r.out.find(n + " of " + n + " row(s) not applicable:\n") != std::string::npos);
  CHECK(r.out.find("\n     " + n + "  #1   a target with at least 2 instances  target 'instances'") !=
        std::string::npos);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  int rows = 0;
  for (const auto& s : results.at("scenarios")) {
    ++rows;
    for (const auto& v : s.at("verdicts")) {
      CHECK(v.at("status") == "not_applicable");
      CHECK(v.dump().find("needs a target with at least 2 instances") != std::string::npos);
    }
  }
  CHECK(rows == files);
}

TEST_CASE("instance-local-claims passes every single-instance scenario, only scenarios with two processes catch it",
          "[cli][cluster][flaws][slow]") {
  // The whole suite on the one-instance reference.yaml: the cluster layer
  // is not applicable there, and of the rest only paused-owner-takeover —
  // which spawns a second instance on the same store — sees the flaw.
  const std::string dir = ScratchDir("cluster-flaw-single");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios", "--target", TargetFile("reference.yaml"), "--flaw",
                              "instance-local-claims", "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 1);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  std::set<std::string> catching;
  for (const auto& s : results.at("scenarios")) {
    for (const auto& v : s.at("verdicts")) {
      CHECK(v.at("status") != "unknown");
      if (v.at("status") == "invalid") catching.insert(s.value("scenario", s.value("name", "")));
    }
  }
  CHECK(catching == std::set<std::string>{"paused-owner-takeover"});
}

namespace {

// The reference's create_order as in reference-cluster.yaml (its slow and
// retryable variants, its contract), without the services: for a cluster
// the test starts itself or one the harness starts without a stub.
const std::string kCreateOrderContract = R"(idempotency:
  key_header: Idempotency-Key
  replay: {header: Idempotent-Replayed, value: "true"}
  in_progress: 409
  mismatch: 422
  missing_key: 400
  window: 4s
  lease: 2s
  retry_after: required
request_timeout: 10s
compare_headers: [Content-Type, Location]
actions:
  create_order:
    role: create
    request:
      method: POST
      path: /orders
      json: {biz_no: "{{biz}}", sku: "sku-{{run}}", qty: 1, amount: 100}
    other_payload: {json: {biz_no: "{{biz}}", sku: "sku-{{run}}", qty: 2, amount: 200}}
    records: {request: {method: GET, path: "/orders?biz_no={{biz}}"}, count: "$.count"}
    variants:
      slow: {query: {slow_ms: "1500"}}
      fails_retryably: {query: {fail_status: "503"}}
)";

const std::vector<std::string> kReferenceStoreArgs = {"--dedup-ttl", "4s", "--lease", "2s"};

// The pid of the child of `parent` whose stdout is the file `log` (the
// harness sends each instance's stdout to its own log file).
pid_t ChildLoggingTo(pid_t parent, const std::string& log) {
  for (pid_t pid : ChildrenOf(parent)) {
    std::error_code ec;
    const fs::path out = fs::read_symlink("/proc/" + std::to_string(pid) + "/fd/1", ec);
    if (!ec && out == fs::path(log)) return pid;
  }
  return 0;
}

// Waits (at most `limit`) for a non-empty `text` in the file.
bool WaitForText(const std::string& path, const std::string& text, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("a non-main instance that segfaults mid-scenario is a target_exited event naming it and exit 3",
          "[cli][cluster][slow]") {
  // Three instances on one store; the test sends SIGSEGV to instance-2
  // during the wait, which no step could have caused.
  const std::string dir = ScratchDir("cluster-segv");
  WriteFile(dir + "/target.yaml",
            "name: three-references\ninstances: 3\nbase_url: \"http://127.0.0.1:{{port}}\"\nstart:\n"
            "  argv: [\"{{build_dir}}/reference-impl/idemproof-ref\", \"--port\", \"0\", \"--db\", "
            "\"{{run_dir}}/ref.db\", \"--dedup-ttl\", \"4s\", \"--lease\", \"2s\"]\n"
            "  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'\n"
            "  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}\n"
            "  start_timeout: 10s\n" +
                kCreateOrderContract);
  WriteFile(dir + "/scenarios/crash.yaml",
            "# Hunts nothing: a process-control fixture (an instance crashes during the wait).\n"
            "name: crash\nlayer: cluster\nhunts: nothing, a fixture\nmin_instances: 3\n"
            "steps:\n  - send: create_order\n    key: k1\n    instance: main\n  - wait: 3s\n"
            "  - send: create_order\n    key: k1\n    instance: main\nexpect: [one_record, identical_replay]\n");
  auto cli = idemproof::runtime::ChildProcess::Spawn(IdemproofRunSpec(dir));
  REQUIRE(cli.ok());
  // Found once it runs and its first request was answered (bounded: 20 s).
  const std::string log = dir + "/runs/latest/crash/target-instance-2.stdout";
  pid_t victim = 0;
  for (int i = 0; i < 1000 && victim == 0; ++i) {
    if (ReadFile(dir + "/runs/latest/crash/target.stdout").find("listening") != std::string::npos &&
        ReadFile(log).find("listening") != std::string::npos)
      victim = ChildLoggingTo(cli->pid(), fs::weakly_canonical(log).string());
    if (victim == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(ReadFile(dir + "/cli.out") << ReadFile(dir + "/cli.err"));
  REQUIRE(victim > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the wait
  REQUIRE(::kill(victim, SIGSEGV) == 0);
  auto exit = cli->WaitFor(std::chrono::seconds(60));
  if (!exit) exit = cli->Kill();
  INFO(ReadFile(dir + "/cli.out") << ReadFile(dir + "/cli.err"));
  CHECK(exit->code == 3);
  CHECK_FALSE(exit->signalled);

  std::optional<json> exited;
  std::istringstream lines(ReadFile(dir + "/runs/latest/crash/history.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line);
    if (e.value("f", "") == "target_exited") exited = e;
  }
  REQUIRE(exited.has_value());
  CHECK(exited->at("value").at("instance") == "instance-2");
  CHECK(exited->at("value").at("pid") == victim);
  CHECK(exited->at("value").at("why").get<std::string>().find("signal 11") != std::string::npos);
  const json results = json::parse(ReadFile(dir + "/runs/latest/results.json"));
  int unknown = 0;
  for (const auto& v : results.at("scenarios").at(0).at("verdicts")) {
    CHECK(v.at("status") == "unknown");
    if (v.at("evidence").get<std::string>().find("instance-2") != std::string::npos) ++unknown;
  }
  CHECK(unknown == 2);
}

TEST_CASE("a cluster given as the URLs of two running references runs the cluster layer with process control not "
          "applicable",
          "[cli][cluster][slow]") {
  // Two references the test starts on one SQLite file (the shared store, as
  // reference-cluster.yaml's instances share --db), listed by URL: nothing is
  // started by the harness, the harness is their balancer.
  const std::string dir = ScratchDir("cluster-urls");
  std::vector<idemproof::runtime::ChildProcess> services;
  std::vector<std::string> urls;
  for (int i = 1; i <= 2; ++i) {
    idemproof::runtime::ProcessSpec spec;
    spec.argv = {ReferenceExe(), "--port", "0", "--db", dir + "/shared.db"};
    spec.argv.insert(spec.argv.end(), kReferenceStoreArgs.begin(), kReferenceStoreArgs.end());
    spec.stdout_path = dir + "/ref-" + std::to_string(i) + ".out";
    spec.stderr_path = dir + "/ref-" + std::to_string(i) + ".err";
    auto child = idemproof::runtime::ChildProcess::Spawn(spec);
    REQUIRE(child.ok());
    services.push_back(std::move(child).value());
    REQUIRE(WaitForText(spec.stdout_path, "listening", std::chrono::seconds(10)));
    std::smatch m;
    const std::string out = ReadFile(spec.stdout_path);
    REQUIRE(std::regex_search(out, m, std::regex(R"(listening on 127\.0\.0\.1:(\d+))")));
    urls.push_back("http://127.0.0.1:" + m[1].str());
  }
  WriteFile(dir + "/target.yaml", "name: two-references\ninstances: [" + urls[0] + ", " + urls[1] + "]\n" +
                                      kCreateOrderContract);
  CliResult r = RunIdemproof({"run", ClusterLayer(), "--target", dir + "/target.yaml", "--out", dir + "/runs",
                              "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  REQUIRE(r.exit_code == 0);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  std::map<std::string, std::set<std::string>> statuses;  // scenario -> its verdicts' statuses
  for (const auto& s : results.at("scenarios")) {
    const std::string name = s.value("scenario", s.value("name", ""));
    for (const auto& v : s.at("verdicts")) {
      statuses[name].insert(v.at("status").get<std::string>());
      if (name.rfind("kill-instance-takeover", 0) == 0) {
        // Its kill needs a process the harness started.
        CHECK(v.at("status") == "not_applicable");
        CHECK(v.at("evidence").get<std::string>().find("the harness did not start") != std::string::npos);
      }
    }
  }
  INFO(results.dump(1));
  CHECK(statuses["burst-across-instances"] == std::set<std::string>{"valid"});
  CHECK(statuses["lost-answer-other-instance"] == std::set<std::string>{"valid"});
  // Both services took requests: the balancer placed them over the two URLs.
  std::multiset<std::string> all;
  for (const auto& [scenario, names] : InstancesByScenario(fs::canonical(dir + "/runs/latest")))
    all.insert(names.begin(), names.end());
  CHECK(all.count("main") > 0);
  CHECK(all.count("instance-2") > 0);
  for (auto& service : services) CHECK(service.Running());  // not the harness's to stop
}
