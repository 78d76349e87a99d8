// Capability steps end to end (`idemproof run` as a child process) against
// the reference service: scenarios/targets/reference.yaml provides
// slow_request by the request variant `slow` (?slow_ms=1500, honoured by
// the reference per request), reference-renamed.yaml by the hook
// slow_business; a target providing it neither way gets not_applicable with
// the reason; a command hook's exit status and stdout are in the history,
// and a failing one stops its scenario (exit 3) instead of being judged.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

using namespace idemproof::testing;
using nlohmann::json;

namespace {

const std::string kScenario = "/scenarios/concurrency/duplicate-while-in-progress.yaml";

std::vector<json> HistoryOf(const std::string& file) {
  std::vector<json> out;
  std::string text = ReadFile(file);
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) out.push_back(json::parse(line));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string History(const std::string& dir) {
  return dir + "/runs/latest/duplicate-while-in-progress.create_order/history.jsonl";
}

// The reference with one keyed create and `hooks` (YAML lines, may be "").
std::string MinimalTarget(const std::string& dir, const std::string& hooks) {
  const std::string file = dir + "/target.yaml";
  WriteFile(file, R"(name: ref-minimal
base_url: "http://127.0.0.1:{{port}}"
start:
  argv: ["{{build_dir}}/reference-impl/idemproof-ref", "--port", "0", "--db", "{{run_dir}}/ref.db"]
  port_from_stdout: 'listening on 127\.0\.0\.1:(\d+)'
  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", sku: "sku-{{run}}", qty: 1, amount: 100}}
    records: {request: {method: GET, path: "/orders?biz_no={{biz}}"}, count: "$.count"}
)" + hooks);
  return file;
}

std::string Output(const CliResult& r) { return "exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err; }

}  // namespace

// A real client's duplicate repeats its request byte for byte: the
// variant belongs to the attempt, so the duplicate of the slow request is
// slow too (issue 33, class 9: on a service whose key includes the query,
// a duplicate without it would be another key).
TEST_CASE("a request variant provides slow_request and the duplicate of its key repeats it",
          "[cli][variants][slow]") {
  const std::string dir = ScratchDir("variant-slow");
  CliResult r = RunIdemproof({"run", SourceDir() + kScenario, "--target", SourceDir() + "/scenarios/targets/reference.yaml",
                              "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Output(r));
  REQUIRE(r.exit_code == 0);
  int slow = 0, plain = 0, repeated = 0, in_progress = 0, notes = 0;
  for (const json& e : HistoryOf(History(dir))) {
    if (e.at("f") == "note" && e.at("value").value("variant", "") == "slow") {
      CHECK(e.at("value").value("scope", "") == "attempt");
      ++notes;
    }
    if (e.at("f") != "send") continue;
    const json& v = e.at("value");
    if (e.at("type") == "invoke") {
      const bool varied = v.value("variant", "") == "slow";
      const std::string url = v.at("request").at("url");
      CHECK(varied == (url.find("slow_ms=1500") != std::string::npos));
      (varied ? slow : plain) += 1;
      if (v.value("variant_repeated", false)) ++repeated;
    } else if (e.at("type") == "ok" && v.at("response").at("status") == 409) {
      CHECK(v.value("variant", "") == "slow");  // the duplicate was the same request
      ++in_progress;
    }
  }
  CHECK(notes == 1);
  CHECK(slow == 2);  // the request and its duplicate
  CHECK(plain == 0);
  CHECK(repeated == 1);
  CHECK(in_progress == 1);  // and it was slow enough for the duplicate to see it running
  // Alike requests: no verdict says they differ.
  CHECK(ReadFile(dir + "/results.json").find("request_differences") == std::string::npos);
}

// `variant: first_only` says on purpose that the later requests differ:
// the duplicate goes without the variant, and every verdict says how the
// requests of the key differed.
TEST_CASE("a cause with variant first_only changes one request and the verdicts name the difference",
          "[cli][variants][slow]") {
  const std::string dir = ScratchDir("variant-first-only");
  const std::string scenario = dir + "/first-only.yaml";
  WriteFile(scenario, R"(name: first-only
layer: concurrency
hunts: a duplicate of a slow request, sent without the variant on purpose
for_each:
  create: {role: create}
steps:
  - cause: slow_request
    variant: first_only
  - send: $create
    background: true
  - send: $create
    after: 300ms
  - join
expect: [in_progress, one_record]
)");
  const std::string target = dir + "/target.yaml";
  WriteFile(target, R"(name: ref-minimal
base_url: "http://127.0.0.1:{{port}}"
start:
  argv: ["{{build_dir}}/reference-impl/idemproof-ref", "--port", "0", "--db", "{{run_dir}}/ref.db"]
  port_from_stdout: 'listening on 127\.0\.0\.1:(\d+)'
  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", sku: "sku-{{run}}", qty: 1, amount: 100}}
    records: {request: {method: GET, path: "/orders?biz_no={{biz}}"}, count: "$.count"}
    variants:
      slow: {query: {slow_ms: "1500"}}
)");
  CliResult r = RunIdemproof({"run", scenario, "--target", target, "--out", dir + "/runs", "--json",
                              dir + "/results.json"},
                             dir);
  INFO(Output(r));
  REQUIRE(r.exit_code == 0);
  int slow = 0, plain = 0;
  for (const json& e : HistoryOf(dir + "/runs/latest/first-only.create_order/history.jsonl")) {
    if (e.at("f") != "send" || e.at("type") != "invoke") continue;
    (e.at("value").value("variant", "") == "slow" ? slow : plain) += 1;
  }
  CHECK(slow == 1);
  CHECK(plain == 1);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  int named = 0;
  for (const json& s : results.at("scenarios")) {
    for (const json& v : s.at("verdicts")) {
      INFO(v.dump());
      const std::string evidence = v.at("evidence");
      CHECK(evidence.find("requests of key ") != std::string::npos);
      CHECK(evidence.find("(create_order) differ: #") != std::string::npos);
      CHECK(evidence.find("has query slow_ms=1500") != std::string::npos);
      CHECK(evidence.find(" has none") != std::string::npos);
      CHECK(v.at("details").at("request_differences").size() == 1);
      ++named;
    }
  }
  CHECK(named == 2);
}

TEST_CASE("a hook provides slow_request where the target declares no variant", "[cli][variants][slow]") {
  const std::string dir = ScratchDir("variant-hook");
  CliResult r = RunIdemproof({"run", SourceDir() + kScenario, "--target",
                              SourceDir() + "/scenarios/targets/reference-renamed.yaml", "--out", dir + "/runs"},
                             dir);
  INFO(Output(r));
  REQUIRE(r.exit_code == 0);
  int hooks = 0, varied = 0;
  for (const json& e : HistoryOf(History(dir))) {
    if (e.at("f") == "hook" && e.at("type") == "ok" && e.at("value").value("cause", "") == "slow_request") {
      CHECK(e.at("value").at("hook") == "go_slow");  // the hook with role slow_request
      ++hooks;
    }
    if (e.at("f") == "send" && e.at("value").contains("variant")) ++varied;
  }
  CHECK(hooks == 1);
  CHECK(varied == 0);
}

TEST_CASE("a target providing a capability neither way leaves the scenario not_applicable with the reason",
          "[cli][variants][slow]") {
  const std::string dir = ScratchDir("variant-none");
  CliResult r = RunIdemproof({"run", SourceDir() + kScenario, "--target", MinimalTarget(dir, ""), "--out",
                              dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Output(r));
  // Its only row is not applicable: nothing was tested, exit 3, never a pass.
  REQUIRE(r.exit_code == 3);
  CHECK(r.out.find("1 of 1 row(s) not applicable") != std::string::npos);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  REQUIRE(results.at("scenarios").size() == 1);
  for (const auto& v : results.at("scenarios")[0].at("verdicts")) {
    CHECK(v.at("status") == "not_applicable");
    CHECK(std::string(v.at("evidence")).find("capability slow_request") != std::string::npos);
    CHECK(std::string(v.at("evidence")).find("a variant 'slow' of action 'create_order' or a hook 'slow_business'") !=
          std::string::npos);
  }
}

TEST_CASE("a command hook's exit status and stdout are recorded and a failing one stops its scenario",
          "[cli][variants][slow]") {
  const std::string dir = ScratchDir("variant-command-hook");
  const std::string target = MinimalTarget(
      dir, "hooks:\n  slow_business: {command: [sh, -c, \"echo armed-but-failing; exit 3\"]}\n");
  CliResult r = RunIdemproof({"run", SourceDir() + kScenario, "--target", target, "--out", dir + "/runs", "--json",
                              dir + "/results.json"},
                             dir);
  INFO(Output(r));
  CHECK(r.exit_code == 3);  // could not decide: the premise may not have happened
  CHECK(r.out.find("hook slow_business failed") != std::string::npos);
  int failed = 0;
  for (const json& e : HistoryOf(History(dir))) {
    if (e.at("f") != "hook" || e.at("type") == "invoke") continue;
    const json& v = e.at("value");
    CHECK(v.at("command").at("exit") == 3);
    CHECK(v.at("command").at("stdout") == "armed-but-failing\n");
    CHECK(v.at("command").at("stdout_truncated") == false);
    CHECK(v.at("failed") == true);
    CHECK(v.at("cause") == "slow_request");
    ++failed;
  }
  CHECK(failed == 1);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  CHECK(results.at("scenarios")[0].at("verdicts").empty());
}

// Issue 31: a patch path through a scalar passed lint, then the run aborted
// on an uncaught nlohmann::json::out_of_range (exit 134, results.json not
// finished). Both now stop with exit 2 at the path, before any request.
TEST_CASE("a variant patch through a scalar stops lint and run with exit 2, located", "[cli][variants][slow]") {
  const std::string dir = ScratchDir("variant-through-scalar");
  std::string text = ReadFile(SourceDir() + "/scenarios/targets/reference.yaml");
  const std::string variant = "fails_retryably: {query: {fail_status: \"503\"}}";
  REQUIRE(text.find(variant) != std::string::npos);
  // Its line, counted: the reference target file grows above it.
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(text.find(variant)), '\n');
  text.replace(text.find(variant), variant.size(), "fails_retryably: {patch: {\"$.qty.deeper\": 5}}");
  WriteFile(dir + "/target.yaml", text);
  for (const std::string cmd : {"lint", "run"}) {
    std::vector<std::string> args = {cmd, SourceDir() + "/scenarios/gateway/retryable-failure-retry.yaml",
                                     "--target", dir + "/target.yaml"};
    if (cmd == "run") args.insert(args.end(), {"--out", dir + "/runs"});
    CliResult r = RunIdemproof(args, dir);
    INFO(cmd << "\n" << Output(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("target.yaml:" + std::to_string(line) +
                     ":33: action 'create_order' variant 'fails_retryably'.patch: '$.qty.deeper' "
                     "cannot apply to the action's json body: $.qty is a number, not an object") != std::string::npos);
  }
}
