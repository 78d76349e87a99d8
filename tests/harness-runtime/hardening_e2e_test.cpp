// The harness against hostile or surprising services (issue 16): a server
// started through a shell wrapper leaves nothing behind, a stale process on
// the target's port is refused, a service that executes nothing is never
// judged valid, and endless bodies are capped.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "platform/child_process.h"
#include "test_support.h"

using namespace idemproof::testing;
using nlohmann::json;

namespace {

std::string WrappedServer() { return SourceDir() + "/tests/harness-runtime/wrapped_server.py"; }

// Running or stopped, not a zombie nor gone: a zombie no longer listens, and
// orphans of a SIGKILLed harness are reaped by whoever adopts them.
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (text.empty() || close == std::string::npos || close + 2 >= text.size()) return false;
  return text[close + 2] != 'Z' && text[close + 2] != 'X';
}

// Polls (bounded) until `pid` is no longer alive.
bool GoneWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (Alive(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A target file starting wrapped_server.py through `sh -c` (no exec), so the
// harness's direct child is the shell, not the server.
// The `actions:` block of a target file for the reference's create_order.
const std::string kReferenceCreateOrder =
    "actions:\n"
    "  create_order:\n"
    "    role: create\n"
    "    request: {method: POST, path: /orders, json: {biz_no: \"{{biz}}\", sku: \"sku-{{run}}\", qty: 1, amount: 100}}\n"
    "    records: {request: {method: GET, path: \"/orders?biz_no={{biz}}\"}, count: \"$.count\"}\n";

std::string WrappedTarget(const std::string& dir, const std::string& extra_args = "") {
  return "name: wrapped\n"
         "base_url: \"http://127.0.0.1:{{port}}\"\n"
         "start:\n"
         "  argv: [sh, -c, \"python3 " + WrappedServer() + " --pid-file " + dir + "/server.pid" +
         extra_args + "\"]\n"
         "  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'\n"
         "  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}\n"
         "  start_timeout: 10s\n"
         "  stop_timeout: 3s\n"
         "request_timeout: 5s\n"
         "actions:\n"
         "  create_order:\n"
         "    role: create\n"
         "    request: {method: POST, path: /orders, json: {biz_no: \"{{biz}}\"}}\n"
         "    records: {request: {method: GET, path: \"/orders?biz_no={{biz}}\"}, count: \"$.count\"}\n";
}

void WriteScenario(const std::string& dir, const std::string& wait) {
  WriteFile(dir + "/scenarios/once.yaml",
            "# Hunts nothing: one keyless request (the fixture server keeps no keys; a\n"
            "# keyless request's record count is one_record's premise), then a wait\n"
            "# (long enough to be interrupted).\n"
            "name: once\nlayer: client\nhunts: nothing, it is a process-control fixture\n"
            "steps:\n  - send: create_order\n    key: none\n  - wait: " + wait + "\n"
            "expect: [one_record]\n");
}

// Starts `idemproof run` on dir/scenarios and dir/target.yaml, waits until the
// wrapped server wrote its pid; returns the harness and that pid.
std::pair<idemproof::runtime::ChildProcess, pid_t> StartRun(const std::string& dir) {
  auto cli = idemproof::runtime::ChildProcess::Spawn(IdemproofRunSpec(dir));
  REQUIRE(cli.ok());
  pid_t server = 0;
  for (int i = 0; i < 2000 && server == 0; ++i) {
    std::string text = ReadFile(dir + "/server.pid");
    if (!text.empty()) server = std::stoi(text);
    if (server == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  INFO(ReadFile(dir + "/cli.out") << ReadFile(dir + "/cli.err"));
  REQUIRE(server > 0);
  // Until the server listens, it may still be the shell's child being born.
  for (int i = 0; i < 1000 && ReadFile(dir + "/runs/latest/once/target.stdout").find("listening") ==
                                  std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {std::move(cli).value(), server};
}

}  // namespace

TEST_CASE("a server started through a shell wrapper is gone after a normal run", "[hardening][process][slow]") {
  const std::string dir = ScratchDir("wrapped-normal");
  WriteFile(dir + "/target.yaml", WrappedTarget(dir));
  WriteScenario(dir, "10ms");
  auto [cli, server] = StartRun(dir);
  auto exit = cli.WaitFor(std::chrono::seconds(60));
  REQUIRE(exit.has_value());
  INFO(ReadFile(dir + "/cli.out") << ReadFile(dir + "/cli.err"));
  CHECK(exit->code == 0);
  CHECK(GoneWithin(server, std::chrono::seconds(5)));
}

TEST_CASE("a server started through a shell wrapper is gone after Ctrl-C of the harness", "[hardening][process][interrupt][slow]") {
  const std::string dir = ScratchDir("wrapped-sigint");
  WriteFile(dir + "/target.yaml", WrappedTarget(dir));
  WriteScenario(dir, "60s");
  auto [cli, server] = StartRun(dir);
  REQUIRE(Alive(server));
  REQUIRE(cli.Signal(SIGINT));
  auto exit = cli.WaitFor(std::chrono::seconds(30));
  REQUIRE(exit.has_value());
  CHECK(exit->code == 130);
  CHECK(GoneWithin(server, std::chrono::seconds(5)));
}

TEST_CASE("a server started through a shell wrapper is gone after SIGKILL of the harness", "[hardening][process][slow]") {
  const std::string dir = ScratchDir("wrapped-sigkill");
  WriteFile(dir + "/target.yaml", WrappedTarget(dir));
  WriteScenario(dir, "60s");
  auto [cli, server] = StartRun(dir);
  REQUIRE(Alive(server));
  auto exit = cli.Kill();
  CHECK(exit.signalled);
  CHECK(GoneWithin(server, std::chrono::seconds(5)));
}

namespace {

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Peak resident memory of a running process (VmHWM, kB); 0 once it is gone.
long PeakRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

struct WatchedRun {
  int exit_code = -1;
  long peak_rss_kb = 0;
  std::chrono::milliseconds elapsed{0};
  std::string out;
};

// `idemproof run` as a child, its VmHWM sampled until it exits (bounded).
WatchedRun RunWatched(const std::string& dir, std::vector<std::string> extra = {}) {
  idemproof::runtime::ProcessSpec spec = IdemproofRunSpec(dir);
  spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
  const auto started = std::chrono::steady_clock::now();
  auto cli = idemproof::runtime::ChildProcess::Spawn(spec);
  REQUIRE(cli.ok());
  WatchedRun r;
  std::optional<idemproof::runtime::ExitInfo> exit;
  for (int i = 0; i < 6000 && !exit; ++i) {  // at most ~120 s
    r.peak_rss_kb = std::max(r.peak_rss_kb, PeakRssKb(cli->pid()));
    exit = cli->WaitFor(std::chrono::milliseconds(20));
  }
  if (!exit) exit = cli->Kill();
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  r.exit_code = exit->signalled ? -1 : exit->code;
  r.out = ReadFile(dir + "/cli.out") + ReadFile(dir + "/cli.err");
  return r;
}

void CopyScenario(const std::string& dir, const std::string& rel) {
  WriteFile(dir + "/scenarios/" + rel.substr(rel.find('/') + 1), ReadFile(SourceDir() + "/scenarios/" + rel));
}

}  // namespace

TEST_CASE("a stale correct reference holding the fixed port fails the run and is named, --flaw memory-store", "[hardening][cli][slow]") {
  const std::string dir = ScratchDir("stale-port");
  const int port = FreePort();
  idemproof::runtime::ProcessSpec stale_spec;
  stale_spec.argv = {ReferenceExe(), "--port", std::to_string(port), "--db", dir + "/stale.db"};
  stale_spec.stdout_path = dir + "/stale.out";
  stale_spec.stderr_path = dir + "/stale.err";
  auto stale = idemproof::runtime::ChildProcess::Spawn(stale_spec);
  REQUIRE(stale.ok());
  for (int i = 0; i < 1000 && ReadFile(dir + "/stale.out").find("listening") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(ReadFile(dir + "/stale.out").find("listening") != std::string::npos);
  WriteFile(dir + "/target.yaml",
            "name: fixed-port-reference\n"
            "base_url: \"http://127.0.0.1:" + std::to_string(port) + "\"\n"
            "start:\n"
            "  argv: [\"{{build_dir}}/reference-impl/idemproof-ref\", \"--port\", \"" + std::to_string(port) +
            "\", \"--db\", \"{{run_dir}}/ref.db\"]\n"
            "  flaw_args: [\"--flaw\", \"{{flaw}}\"]\n"
            "  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 5s}\n" +
                kReferenceCreateOrder);
  CopyScenario(dir, "gateway/resubmit-after-restart.yaml");
  WatchedRun r = RunWatched(dir, {"--flaw", "memory-store"});
  INFO(r.out);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != -1);
  const std::string said = r.out + ReadFile(dir + "/runs/latest/results.json");
  CHECK(said.find("already held by pid " + std::to_string(stale->pid())) != std::string::npos);
  CHECK(stale->Running());  // not the harness's to stop
}

TEST_CASE("a target that dies on its own mid-scenario is an event and makes the oracles unknown", "[hardening][cli][slow]") {
  // The reference under `timeout -s KILL 2`: it dies 2 s after its start,
  // during the scenario's wait, by no step of the scenario.
  const std::string dir = ScratchDir("died-mid-scenario");
  WriteFile(dir + "/target.yaml",
            "name: dying-reference\n"
            "base_url: \"http://127.0.0.1:{{port}}\"\n"
            "start:\n"
            "  argv: [timeout, -s, KILL, \"2\", \"{{build_dir}}/reference-impl/idemproof-ref\", \"--port\", \"0\",\n"
            "         \"--db\", \"{{run_dir}}/ref.db\"]\n"
            "  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'\n"
            "  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 5s}\n" +
                kReferenceCreateOrder);
  WriteScenario(dir, "3s");
  WatchedRun r = RunWatched(dir);
  INFO(r.out);
  CHECK(r.exit_code == 3);
  const json results = json::parse(ReadFile(dir + "/runs/latest/results.json"));
  const auto& v = results.at("scenarios").at(0).at("verdicts").at(0);
  CHECK(v.at("status") == "unknown");
  CHECK(v.at("evidence").get<std::string>().find("during the scenario, not by a step") != std::string::npos);
  CHECK(ReadFile(dir + "/runs/latest/once/history.jsonl").find("\"target_exited\"") != std::string::npos);
}

TEST_CASE("a service answering every request 401 does not pass identical-burst nor synchronized-burst", "[hardening][cli][slow]") {
  const std::string dir = ScratchDir("all-401");
  WriteFile(dir + "/target.yaml", WrappedTarget(dir, " --status 401"));
  CopyScenario(dir, "concurrency/identical-burst.yaml");
  CopyScenario(dir, "concurrency/synchronized-burst.yaml");
  WatchedRun r = RunWatched(dir);
  INFO(r.out);
  CHECK(r.exit_code == 3);
  json results = json::parse(ReadFile(dir + "/runs/latest/results.json"));
  int judged = 0;
  for (const auto& s : results.at("scenarios")) {
    for (const auto& v : s.at("verdicts")) {
      CHECK(v.at("status") != "valid");
      if (v.at("oracle") == "one_record" || v.at("oracle") == "in_progress") {
        ++judged;
        CHECK(v.at("status") == "unknown");
      }
      // A 32-request burst into a small server may leave some unanswered;
      // in_progress names the cause whatever one_record could read.
      if (v.at("oracle") == "in_progress")
        CHECK(v.at("evidence").get<std::string>().find("nothing executed") != std::string::npos);
    }
  }
  CHECK(judged == 4);
}

// Issue 31: mismatch_rejected once said valid "2 reuse(s) ... got 422" here.
TEST_CASE("a service answering every request 401: changed-request-rejected's mismatch_rejected is not valid and quotes the 401s", "[hardening][cli][slow]") {
  const std::string dir = ScratchDir("all-401-changed");
  WriteFile(dir + "/target.yaml", WrappedTarget(dir, " --status 401"));
  CopyScenario(dir, "client/changed-request-rejected.yaml");
  WatchedRun r = RunWatched(dir);
  INFO(r.out);
  CHECK(r.exit_code == 3);
  json results = json::parse(ReadFile(dir + "/runs/latest/results.json"));
  int seen = 0;
  for (const auto& s : results.at("scenarios")) {
    for (const auto& v : s.at("verdicts")) {
      if (v.at("oracle") != "mismatch_rejected") continue;
      ++seen;
      const std::string evidence = v.at("evidence");
      INFO(evidence);
      CHECK(v.at("status") == "unknown");
      CHECK(evidence.find("401 x2") != std::string::npos);
      CHECK(evidence.find("422") == std::string::npos);
    }
  }
  CHECK(seen == 1);
}

// The 2 GiB case once measured 1.5 GB: Boost 1.74's eager parser lost its
// body_limit error when header and body came in one read (base/beast_capped_read.h).
TEST_CASE("an endless and a 2 GiB answer body are cut at max_body: the harness stays small and finishes",
          "[hardening][cli][slow]") {
  for (const std::string path : {"/endless", "/big?mb=2048"}) {
    const std::string dir = ScratchDir("huge-body");
    std::string target = WrappedTarget(dir);
    target = std::regex_replace(target, std::regex(R"(request: \{method: POST, path: /orders, json: \{biz_no: "\{\{biz\}\}"\}\})"),
                                "request: {method: GET, path: \"" + path + "\"}");
    target += "max_body: 1MiB\n";
    WriteFile(dir + "/target.yaml", target);
    WriteFile(dir + "/scenarios/huge.yaml",
              "# Hunts: an answer body with no end exhausting the harness's memory.\n"
              "name: huge\nlayer: client\nhunts: a body that never ends\n"
              "steps:\n  - send: create_order\n  - send: create_order\n"
              "  - burst: create_order\n    n: 4\n    mode: last_byte\n"
              "  - burst: create_order\n    n: 4\n    mode: threads\n"
              "expect: [identical_replay]\n");
    WatchedRun r = RunWatched(dir);
    INFO(path << "\n" << r.out);
    CHECK(r.exit_code == 3);
    CHECK(r.peak_rss_kb > 0);
#if defined(__SANITIZE_ADDRESS__)
    // Under ASan (scripts/sanitize.sh) freed memory waits in a 256 MB
    // quarantine and shadow memory adds more: the bound measures ASan, not
    // the harness. It is checked in the normal build.
    WARN("ASan build: peak RSS " << r.peak_rss_kb << " kB, not bounded");
#else
    CHECK(r.peak_rss_kb < 200 * 1024);
#endif
    CHECK(r.elapsed < std::chrono::seconds(60));
    json results = json::parse(ReadFile(dir + "/runs/latest/results.json"));
    const auto& v = results.at("scenarios").at(0).at("verdicts").at(0);
    CHECK(v.at("status") == "unknown");
    CHECK(v.at("evidence").get<std::string>().find("truncated") != std::string::npos);
    const std::string history = ReadFile(dir + "/runs/latest/huge/history.jsonl");
    CHECK(history.find("\"truncated\"") != std::string::npos);
    CHECK(history.size() < 40u * 1024 * 1024);
    std::fprintf(stderr, "huge body %s: peak RSS %ld kB, %lld ms\n", path.c_str(), r.peak_rss_kb,
                 static_cast<long long>(r.elapsed.count()));
  }
}

// 24 endless burst answers once kept 4 MiB each: 1.47 GB peak RSS, and
// results.json and junit.xml 201 MB each (every verdict quoted whole bodies).
// The run's max_kept (default 64 MiB) bounds what all answers keep beyond
// their first 4 KiB, and evidence quotes a body's head only. The history then
// still wrote every cut body as read, 67 MB (issue 43): a cut body is now
// recorded once, as its first 4 KiB, with the length of the answer it was cut from.
TEST_CASE("endless bodies to a burst of 24 keep no more than the run's max_kept and write a few MB",
          "[hardening][cli][slow]") {
  const std::string dir = ScratchDir("endless-burst");
  std::string target = WrappedTarget(dir);
  target = std::regex_replace(target, std::regex(R"(request: \{method: POST, path: /orders, json: \{biz_no: "\{\{biz\}\}"\}\})"),
                              "request: {method: GET, path: /endless}");
  WriteFile(dir + "/target.yaml", target);  // max_body and max_kept: the defaults, 4 MiB and 64 MiB
  WriteFile(dir + "/scenarios/endless.yaml",
            "# Hunts: endless answer bodies in a burst filling the harness's memory and disk.\n"
            "name: endless\nlayer: concurrency\nhunts: endless bodies in a burst\n"
            "steps:\n  - send: create_order\n"
            "  - burst: create_order\n    n: 24\n    mode: last_byte\n"
            "  - send: create_order\n"
            "expect: [identical_replay, one_record]\n");
  WatchedRun r = RunWatched(dir);
  INFO(r.out);
  // The fixture counts no record for GET /endless: one_record is invalid,
  // and its evidence lists every request with its answer.
  CHECK(r.exit_code == 1);
  const std::uint64_t kMiB = 1 << 20;
  const std::uint64_t budget = 64 * kMiB;
  const std::string history = ReadFile(dir + "/runs/latest/endless/history.jsonl");
  std::uint64_t read = 0;
  int answers = 0;
  std::string last_cut;
  std::uint64_t last_size = 0;
  for (std::size_t at = 0; at < history.size();) {
    std::size_t end = history.find('\n', at);
    if (end == std::string::npos) end = history.size();
    json e = json::parse(history.substr(at, end - at));
    at = end + 1;
    if (!e.contains("value") || !e["value"].is_object() || !e["value"].contains("response")) continue;
    const json& response = e["value"]["response"];
    if (!response.contains("body") || !response.contains("truncated")) continue;
    // Recorded once: the head, and how long the answer was.
    const std::uint64_t body = response["body"].get<std::string>().size();
    const std::uint64_t size = response["truncated"]["size"];
    CHECK(body == 4096);
    CHECK(response["truncated"]["kept"] == body);
    CHECK(response["truncated"]["exact"] == false);  // endless: what arrived before the cut
    CHECK(size > body);
    read += size > 4096 ? size - 4096 : 0;
    ++answers;
    last_cut = response["truncated"].dump();
    last_size = size;
  }
  // The first send, the 24 answers of the burst and the last send; every
  // answer read its first 4 KiB, the rest came out of the budget (each read
  // stops within one network read, at most 64 KiB, past its cap).
  CHECK(answers == 26);
  CHECK(read <= budget + 26 * 64 * 1024);
  CHECK(read > budget / 2);  // the budget was used, not everything cut at 4 KiB
  // The budget is spent: the last send reads its head and what the burst's
  // answers gave back (each stopped a little short of its share), cut by
  // max_kept far below max_body.
  CHECK(last_cut.find("\"by\":\"max_kept\"") != std::string::npos);
  CHECK(last_size >= 4096);
  CHECK(last_size < kMiB);
  // Written evidence: 26 heads of 4 KiB plus a few KiB of event per request
  // (67 MB before issue 43); the verdicts quote heads only.
  CHECK(history.size() < 4 * kMiB);
  const std::uint64_t results = ReadFile(dir + "/runs/latest/results.json").size();
  const std::uint64_t junit = ReadFile(dir + "/runs/latest/junit.xml").size();
  CHECK(results < 2 * kMiB);
  CHECK(junit < 2 * kMiB);
  json doc = json::parse(ReadFile(dir + "/runs/latest/results.json"));
  for (const auto& v : doc.at("scenarios").at(0).at("verdicts")) {
    if (v.at("oracle") != "identical_replay") continue;
    CHECK(v.at("status") == "unknown");  // a cut body is never compared
    CHECK(v.at("evidence").get<std::string>().find("truncated") != std::string::npos);
  }
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(r.peak_rss_kb < 400 * 1024);
#endif
  std::fprintf(stderr, "endless burst of 24: peak RSS %ld kB, history %zu, results.json %llu, junit.xml %llu bytes\n",
               r.peak_rss_kb, history.size(), static_cast<unsigned long long>(results),
               static_cast<unsigned long long>(junit));
}
