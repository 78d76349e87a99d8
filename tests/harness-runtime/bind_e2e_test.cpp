// The bind stage end to end (`idemproof run` as a child process) against the
// reference service with three keyed create endpoints
// (scenarios/targets/reference-three-creates.yaml: orders, refunds,
// transfers): every scenario with one create parameter runs once per create
// action, each row named by its binding with its own verdicts; a flaw aimed
// at one route is caught in that route's rows only; a scenario needing a
// role the target lacks is not_applicable with the reason.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <cstdlib>
#include <string>
#include <vector>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "test_support.h"

using namespace idemproof::testing;
using nlohmann::json;

namespace {

const std::vector<std::string> kCreates = {"create_order", "create_refund", "create_transfer"};

std::string ThreeCreates() { return SourceDir() + "/scenarios/targets/reference-three-creates.yaml"; }

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// The rows of results.json, by name.
std::map<std::string, json> RowsOf(const std::string& results_file) {
  const json doc = json::parse(ReadFile(results_file));  // kept alive: the loop reads into it
  std::map<std::string, json> rows;
  for (const auto& s : doc.at("scenarios")) rows[s.at("name")] = s;
  return rows;
}

// The status of `oracle` in `row`; "(absent)" when it has none.
std::string VerdictOf(const json& row, const std::string& oracle) {
  for (const auto& v : row.at("verdicts"))
    if (v.at("oracle") == oracle) return v.at("status");
  return "(absent)";
}

}  // namespace

TEST_CASE("every create-role scenario runs once per create action, each row with its own verdicts",
          "[cli][bind][slow]") {
  const std::string dir = ScratchDir("bind-suite");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios", "--target", ThreeCreates(), "--out", dir + "/runs",
                              "--json", dir + "/results.json", "--junit", dir + "/junit.xml"},
                             dir, std::chrono::seconds(900));
  INFO(Diagnose(r));
  REQUIRE(r.exit_code == 0);
  const std::map<std::string, json> rows = RowsOf(dir + "/results.json");

  // Rows bound to one create parameter, grouped by their scenario.
  std::map<std::string, std::set<std::string>> creates_of;
  for (const auto& [name, row] : rows) {
    if (!row.contains("binding") || row.at("binding").size() != 1 || !row.at("binding").contains("create")) continue;
    // The cluster layer needs two instances: not applicable on this one-instance target.
    if (row.value("layer", "") == "cluster") continue;
    const std::string action = row.at("binding").at("create");
    CHECK(name == row.at("scenario").get<std::string>() + "[" + action + "]");
    creates_of[row.at("scenario")].insert(action);
    INFO(name);
    // Families whose premise this target file lacks on purpose (no variants,
    // no array in the bodies, SQLite behind no TCP hop): not applicable, and
    // for that reason.
    static const std::map<std::string, std::string> kLacks = {
        {"failure-replayed-unchanged", "needs capability final_failure"},
        {"large-answer-replay", "needs a JSON array in the body"},
        {"lease-overrun-live", "needs capability slow_past_lease"},
        {"store-fault-around-write", "needs a tcp egress"},
        {"store-fault-slow-store", "needs a tcp egress"},
        {"store-fault-lease-overrun", "needs a tcp egress"},
        {"store-fault-killed-owner", "needs a tcp egress"},
        {"store-error-on-completion", "needs a tcp egress"},
    };
    if (auto lack = kLacks.find(row.at("scenario")); lack != kLacks.end()) {
      CHECK(row.at("outcome") == "not_applicable");
      for (const auto& v : row.at("verdicts"))
        CHECK(v.at("evidence").get<std::string>().rfind(lack->second, 0) == 0);
      continue;
    }
    CHECK(row.at("outcome") == "valid");
    for (const auto& v : row.at("verdicts")) CHECK(v.at("status") != "invalid");
  }
  CHECK(creates_of.size() >= 15);  // client, gateway, concurrency and lease scenarios
  for (const auto& [scenario, actions] : creates_of) {
    INFO(scenario);
    CHECK(actions == std::set<std::string>(kCreates.begin(), kCreates.end()));
  }
  for (const char* scenario : {"double-submit", "identical-burst", "lost-answer-retry", "crash-mid-request",
                               "key-reuse-other-payload", "retry-inside-window"}) {
    INFO(scenario);
    CHECK(creates_of.count(scenario) == 1);
  }

  // The cluster layer binds too, and says it needs a second instance.
  REQUIRE(rows.count("burst-across-instances[create_refund]") == 1);
  CHECK(rows.at("burst-across-instances[create_refund]").at("outcome") == "not_applicable");

  // Only orders have a delete and a stock counter: one binding.
  REQUIRE(rows.count("delete-releases-once[create_order,cancel_order,stock]") == 1);
  CHECK(VerdictOf(rows.at("delete-releases-once[create_order,cancel_order,stock]"), "probe_equal") == "valid");
  CHECK(rows.count("put-target-state[create_order,set_address,order]") == 1);

  // No action with role pay: not applicable, with the reason, never an error.
  REQUIRE(rows.count("kill-after-charge") == 1);
  const json& pay = rows.at("kill-after-charge");
  CHECK(pay.at("outcome") == "not_applicable");
  REQUIRE_FALSE(pay.at("verdicts").empty());
  for (const auto& v : pay.at("verdicts")) {
    CHECK(v.at("status") == "not_applicable");
    CHECK(v.at("evidence").get<std::string>().rfind("needs an action with role pay, a probe with role ledger", 0) == 0);
  }
  // The console table and JUnit name the bindings too.
  CHECK(r.out.find("double-submit[create_refund]") != std::string::npos);
  const std::string junit = ReadFile(dir + "/junit.xml");
  CHECK(junit.find("name=\"double-submit[create_transfer]\"") != std::string::npos);
  CHECK(junit.find("name=\"binding.create\" value=\"create_transfer\"") != std::string::npos);
}

// A flaw aimed at one route (NAME@ROUTE), the scenario and oracle that
// catch it, and the one binding that must say invalid.
struct Aimed {
  std::string flaw, scenario, oracle, caught;
};
const std::vector<Aimed> kAimed = {
    {"no-fingerprint@/refunds", "key-reuse-other-payload", "mismatch_rejected", "create_refund"},
    {"empty-replay@/transfers", "replay-identity", "identical_replay", "create_transfer"},
};

TEST_CASE("a flaw aimed at one create endpoint is caught in that endpoint's rows only", "[cli][bind][slow]") {
  const Aimed aimed = GENERATE(from_range(kAimed));
  const std::string dir = ScratchDir("bind-flaw");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios", "--target", ThreeCreates(), "--flaw", aimed.flaw,
                              "--filter", aimed.scenario, "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir, std::chrono::seconds(300));
  INFO(aimed.flaw << "\n" << Diagnose(r));
  CHECK(r.exit_code == 1);
  std::map<std::string, json> rows = RowsOf(dir + "/results.json");
  REQUIRE(rows.size() == 3);
  for (const auto& action : kCreates) {
    const std::string name = aimed.scenario + "[" + action + "]";
    INFO(name);
    REQUIRE(rows.count(name) == 1);
    CHECK(VerdictOf(rows.at(name), aimed.oracle) == (action == aimed.caught ? "invalid" : "valid"));
  }

  // `idemproof check` rebuilds each binding from results.json and agrees.
  CliResult c = RunIdemproof({"check", dir + "/runs/latest", "--json", dir + "/again.json"}, dir);
  INFO(Diagnose(c));
  CHECK(c.exit_code == 1);
  rows = RowsOf(dir + "/again.json");
  for (const auto& action : kCreates) {
    const std::string name = aimed.scenario + "[" + action + "]";
    REQUIRE(rows.count(name) == 1);
    CHECK(VerdictOf(rows.at(name), aimed.oracle) == (action == aimed.caught ? "invalid" : "valid"));
  }
}

TEST_CASE("run --action keeps the bindings naming that action, an undeclared one is a usage error", "[cli][bind][slow]") {
  const std::string dir = ScratchDir("bind-action");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/client", "--target", ThreeCreates(), "--action",
                              "create_refund", "--filter", "double-submit", "--out", dir + "/runs", "--json",
                              dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 0);
  const std::map<std::string, json> rows = RowsOf(dir + "/results.json");
  REQUIRE(rows.size() == 1);
  CHECK(rows.begin()->first == "double-submit[create_refund]");
  CHECK(VerdictOf(rows.begin()->second, "one_record") == "valid");

  CliResult bad = RunIdemproof({"run", SourceDir() + "/scenarios/client", "--target", ThreeCreates(), "--action",
                                "create_refnd", "--out", dir + "/runs"},
                               dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("did you mean 'create_refund'?") != std::string::npos);
}

// Issue 31: the reference target with every role: and of: removed bound
// almost nothing and passed (6 valid rows of 82). Each action is now refused
// before any request, located, with the roles it could have.
TEST_CASE("a target whose actions have no role stops lint and run with exit 2, located", "[cli][bind][slow]") {
  const std::string dir = ScratchDir("bind-no-roles");
  std::string text = ReadFile(SourceDir() + "/scenarios/targets/reference.yaml");
  text = std::regex_replace(text, std::regex("\\n *(role|of): [A-Za-z_]+ *(?=\\n)"), "");
  text = std::regex_replace(text, std::regex("(role|of): [A-Za-z_]+, "), "");
  REQUIRE(text.find("role:") == std::string::npos);
  WriteFile(dir + "/reference.yaml", text);
  for (const std::string cmd : {"lint", "run"}) {
    std::vector<std::string> args = {cmd, SourceDir() + "/scenarios/client", "--target", dir + "/reference.yaml"};
    if (cmd == "run") args.insert(args.end(), {"--out", dir + "/runs"});
    CliResult r = RunIdemproof(args, dir);
    INFO(cmd << "\n" << Diagnose(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("reference.yaml:42:3: action 'pay' has no role") != std::string::npos);
    CHECK(r.err.find("give it role: one of create, put, delete, pay, callback") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/runs/latest"));  // nothing ran
}

// Issue 33: another spelling of a keyed route is judged by what the target
// declares it is (idempotency.path_equivalence), on every create. The
// reference's router matches the exact path and reads the query by name.
TEST_CASE("route-spelling judges each spelling as path_equivalence declares it, on every create", "[cli][bind][slow]") {
  const std::string dir = ScratchDir("bind-spelling");
  const std::string original = ReadFile(ThreeCreates());
  const std::string declared =
      "  path_equivalence: {trailing_slash: distinct, case: distinct, query_order: same, query: {channel: web, "
      "locale: en}}\n";
  REQUIRE(original.find(declared) != std::string::npos);
  auto run = [&](const std::string& name, const std::string& path_equivalence, int exit_code) {
    std::string text = original;
    text.replace(text.find(declared), declared.size(), path_equivalence);
    WriteFile(dir + "/" + name + ".yaml", text);
    CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/client", "--target", dir + "/" + name + ".yaml",
                                "--filter", "route-spelling", "--out", dir + "/runs-" + name, "--json",
                                dir + "/" + name + ".json"},
                               dir);
    INFO(name << "\n" << Diagnose(r));
    CHECK(r.exit_code == exit_code);
    return RowsOf(dir + "/" + name + ".json");
  };
  // What the reference does: valid on each create, each spelling judged.
  auto rows = run("declared", declared, 0);
  REQUIRE(rows.size() == kCreates.size());
  for (const auto& action : kCreates) {
    const json& row = rows.at("route-spelling[" + action + "]");
    CHECK(VerdictOf(row, "route_spelling") == "valid");
    CHECK(row.at("verdicts").at(0).at("evidence").get<std::string>().rfind("3 request(s)", 0) == 0);
  }
  // A target declaring none: not applicable, naming the setting, never valid
  // (exit 3: nothing was tested).
  rows = run("undeclared", "", 3);
  REQUIRE(rows.size() == kCreates.size());
  for (const auto& [name, row] : rows) {
    INFO(name);
    CHECK(VerdictOf(row, "route_spelling") == "not_applicable");
    CHECK(row.at("verdicts").at(0).at("evidence").get<std::string>().rfind("needs idempotency.path_equivalence", 0) ==
          0);
  }
  // A contract the reference does not keep (its router answers /refunds/ 404):
  // trailing_slash declared same is a violation naming the spelling; case,
  // undeclared, is not sent.
  rows = run("wrong", "  path_equivalence: {trailing_slash: same}\n", 1);
  for (const auto& action : kCreates) {
    const json& row = rows.at("route-spelling[" + action + "]");
    CHECK(VerdictOf(row, "route_spelling") == "invalid");
    const std::string evidence = row.at("verdicts").at(0).at("evidence");
    CHECK(evidence.find("spelled /api/v3/" + action.substr(7) + "s/ for request") != std::string::npos);
    CHECK(evidence.find("(trailing_slash: same, idempotency.path_equivalence) was answered 404") != std::string::npos);
  }
}

// Issue 34 item 4, names by role: a copy of reference.yaml with EVERY
// action, probe, hook and message under an opaque name (a1, p3, h2, m1),
// roles kept (a renamed hook declares the role its old name spelt): the rows
// that ask for probes, messages, hooks and callbacks get the same verdicts
// (scenario, oracle, status) as through the original. Before hooks had
// roles, a renamed hook provided nothing (or its role: key was an error).
namespace {

// The hook roles the reference's hook names spell by default (capabilities.h).
const std::map<std::string, std::string> kDefaultHookRoles = {
    {"slow_business", "slow_request"},  {"fail_next_retryable", "retryable_failure"}, {"heal", "heal"},
    {"kill_after_charge", "kill_after_charge"}, {"fail_next_final", "final_failure"},
    {"die_before_ack", "die_before_ack"}};

// `yaml` with every name under actions, probes, hooks and messages replaced
// (prefix + its index) and every `of:` following; `renamed` gets old -> new.
std::string RenameEverything(const std::string& yaml, std::map<std::string, std::string>& renamed) {
  YAML::Node root = YAML::Load(yaml);
  for (const auto& [section, prefix] : std::vector<std::pair<std::string, std::string>>{
           {"actions", "a"}, {"probes", "p"}, {"hooks", "h"}, {"messages", "m"}}) {
    if (!root[section]) continue;
    int i = 0;
    for (auto it = root[section].begin(); it != root[section].end(); ++it)
      renamed[it->first.as<std::string>()] = prefix + std::to_string(++i);
  }
  for (const std::string section : {"actions", "probes", "hooks", "messages"}) {
    if (!root[section]) continue;
    YAML::Node out(YAML::NodeType::Map);
    for (auto it = root[section].begin(); it != root[section].end(); ++it) {
      const std::string old = it->first.as<std::string>();
      YAML::Node body = YAML::Clone(it->second);
      if (body["of"]) body["of"] = renamed.at(body["of"].as<std::string>());
      if (section == "hooks" && !body["role"]) body["role"] = kDefaultHookRoles.at(old);
      out[renamed.at(old)] = body;
    }
    root[section] = out;
  }
  YAML::Emitter emitted;
  emitted << root;
  return emitted.c_str();
}

// (scenario, oracle, status) of every verdict of a results file, sorted.
std::multiset<std::string> VerdictTriples(const std::string& results_file) {
  std::multiset<std::string> out;
  const json doc = json::parse(ReadFile(results_file));  // kept alive: the loop reads into it
  for (const auto& s : doc.at("scenarios"))
    for (const auto& v : s.at("verdicts"))
      out.insert(s.value("scenario", s.at("name").get<std::string>()) + " " + v.at("oracle").get<std::string>() +
                 " " + v.at("status").get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("a copy of the reference target with every action, probe, hook and message renamed gets the same verdicts",
          "[cli][bind][roles][slow]") {
  const std::string dir = ScratchDir("renamed-everything");
  const std::string original = SourceDir() + "/scenarios/targets/reference.yaml";
  std::map<std::string, std::string> renamed;
  const std::string copy = dir + "/target.yaml";
  WriteFile(copy, RenameEverything(ReadFile(original), renamed));
  const YAML::Node written = YAML::LoadFile(copy);
  for (const char* old : {"create_order", "pay", "payment_paid", "payment_refunded", "inbox_applied",
                          "callbacks_applied", "ledger", "stock", "credit", "kill_after_charge", "die_before_ack", "heal"}) {
    INFO(old);
    CHECK(renamed.count(old) == 1);
    for (const char* section : {"actions", "probes", "hooks", "messages"}) CHECK_FALSE(written[section][old]);
  }
  // The families that ask for probes, messages, hooks and callback actions.
  const std::vector<std::string> suite = {SourceDir() + "/scenarios/side-effect", SourceDir() + "/scenarios/queue",
                                          SourceDir() + "/scenarios/client/delete-releases-once.yaml",
                                          SourceDir() + "/scenarios/client/put-target-state.yaml"};
  std::multiset<std::string> verdicts[2];
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), suite.begin(), suite.end());
    const std::string out = dir + "/" + std::to_string(i);
    args.insert(args.end(), {"--target", i == 0 ? original : copy, "--seed", "7", "--out", out + "/runs", "--json",
                             out + "/results.json"});
    CliResult r = RunIdemproof(args, dir, std::chrono::seconds(300));
    INFO((i == 0 ? "original" : "renamed copy") << "\n" << Diagnose(r));
    REQUIRE(r.exit_code == 0);
    verdicts[i] = VerdictTriples(out + "/results.json");
  }
  CHECK(verdicts[0].size() >= 30);
  CHECK(verdicts[0].count("kill-after-charge intent_reconciled valid") == 1);  // the hook, by role
  CHECK(verdicts[0].count("stream-kill-before-ack applied_once valid") == 1);  // the hook, by role
  CHECK(verdicts[1] == verdicts[0]);
  // The renamed rows are named by the new names.
  CHECK(ReadFile(dir + "/1/results.json").find("repeated-callback[" + renamed.at("create_order") + "," +
                                               renamed.at("payment_paid")) != std::string::npos);
}

// Issue 34 item 5: one target file (tests/harness-runtime/data/ergonomics/)
// starts the service shipped beside it ({{target_dir}}), takes a caller's
// credential from the environment ({{env.NAME}}), declares one endpoint as
// create and pay at once, reads the charge record from the action's own
// answer (from_answer:), counts the tenant's own listing as that caller
// (caller:), and judges a batch job whose API gives totals and markers, no
// rows (result: {rows, sum}, checksum: same-as-clean). Each of these was a
// load error before.
TEST_CASE("a target file with target_dir, env, several roles, from_answer, a caller probe and a totals batch runs",
          "[cli][bind][roles][slow]") {
  const std::string dir = ScratchDir("ergonomics");
  const std::string data = SourceDir() + "/tests/harness-runtime/data/ergonomics";
  const std::vector<std::string> suite = {data + "/tenant-charge.yaml",
                                          SourceDir() + "/scenarios/client/double-submit.yaml",
                                          SourceDir() + "/scenarios/client/key-reuse-other-payload.yaml",
                                          SourceDir() + "/scenarios/side-effect/kill-after-charge.yaml",
                                          SourceDir() + "/scenarios/batch/rerun-after-partial-failure.yaml"};
  auto run = [&](const std::string& cmd) {
    std::vector<std::string> args = {cmd};
    args.insert(args.end(), suite.begin(), suite.end());
    args.insert(args.end(), {"--target", data + "/target.yaml"});
    if (cmd == "run") args.insert(args.end(), {"--out", dir + "/runs", "--json", dir + "/results.json"});
    return RunIdemproof(args, dir, std::chrono::seconds(120));
  };
  // Unset: a located error, exit 2, before anything starts.
  ::unsetenv("IDEMPROOF_TENANT_TOKEN");
  CliResult unset = run("lint");
  INFO(Diagnose(unset));
  CHECK(unset.exit_code == 2);
  CHECK(unset.err.find("target.yaml:17:37: '{{env.IDEMPROOF_TENANT_TOKEN}}': the environment variable "
                       "IDEMPROOF_TENANT_TOKEN is not set") != std::string::npos);

  ::setenv("IDEMPROOF_TENANT_TOKEN", "tok-34", 1);
  CliResult lint = run("lint");
  INFO(Diagnose(lint));
  CHECK(lint.exit_code == 0);
  // The one action binds as a create and as a pay.
  CHECK(lint.out.find("client/double-submit[charge]  (create=charge)") != std::string::npos);
  CHECK(lint.out.find("side-effect/tenant-charge[charge,provider_charges,charge_txn]  (pay=charge, "
                      "ledger=provider_charges, record=charge_txn)") != std::string::npos);
  // lint --target lists the rows a run would not run, with the reason (issue 34).
  CHECK(lint.out.find("will run 4 row(s):") != std::string::npos);
  CHECK(lint.out.find("not applicable 1 row(s):\n  side-effect/kill-after-charge[charge,provider_charges,charge_txn]: "
                      "needs #1\n") != std::string::npos);
  CHECK(lint.out.find("\n     1  #1   capability kill_after_charge") != std::string::npos);
  CliResult r = run("run");
  ::unsetenv("IDEMPROOF_TENANT_TOKEN");
  INFO(Diagnose(r));
  REQUIRE(r.exit_code == 0);
  const std::map<std::string, json> rows = RowsOf(dir + "/results.json");
  REQUIRE(rows.count("tenant-charge[charge,provider_charges,charge_txn]") == 1);
  const json& charge = rows.at("tenant-charge[charge,provider_charges,charge_txn]");
  CHECK(VerdictOf(charge, "intent_reconciled") == "valid");
  CHECK(VerdictOf(charge, "one_record") == "valid");
  CHECK(VerdictOf(rows.at("double-submit[charge]"), "one_record") == "valid");
  CHECK(VerdictOf(rows.at("key-reuse-other-payload[charge]"), "mismatch_rejected") == "valid");
  // The settlement job, judged by its totals and its own marker digests.
  REQUIRE(rows.count("rerun-after-partial-failure") == 1);
  CHECK(VerdictOf(rows.at("rerun-after-partial-failure"), "range_continuity") == "valid");
  for (const auto& v : rows.at("rerun-after-partial-failure").at("verdicts"))
    if (v.at("oracle") == "range_continuity") {
      CHECK(v.at("evidence").get<std::string>().find("totals equal the clean run's (1000 rows, sum 5008061; no "
                                                     "per-row ids") != std::string::npos);
      CHECK(v.at("details").at("markers").at("checksums_compared") == 100);
    }
  // The probes' values: the record from the answer, the tenant's listing as
  // the tenant (1; with the target's headers alone the service lists 0).
  std::string record, mine;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/runs/latest")) {
    if (entry.path().filename().string().rfind("tenant-charge", 0) != 0) continue;
    std::istringstream lines(ReadFile((entry.path() / "history.jsonl").string()));
    for (std::string line; std::getline(lines, line);) {
      const json e = json::parse(line);
      if (e.at("f") != "probe" || e.at("type") != "ok") continue;
      if (e.at("value").value("probe", "") == "charge_txn") record = e.at("value").at("value").dump();
      if (e.at("value").value("probe", "") == "tenant_charges") mine = e.at("value").at("value").dump();
    }
  }
  CHECK(record == "\"txn-1\"");
  CHECK(mine == "1");
}

// Issue 34 item 5: a service or target that dies before its ready line says
// why in its last output lines, stdout too ("(stderr empty)" hid a cause a
// service printed on stdout); the PostgreSQL helper, run as root under a
// private (0700) folder, names the folder nobody cannot search.
TEST_CASE("a start that dies before its ready line shows its last output lines and the PostgreSQL permission cause",
          "[cli][start]") {
  const std::string dir = ScratchDir("dies-before-ready");
  WriteFile(dir + "/dies.yaml",
            "name: dies\n"
            "base_url: \"http://127.0.0.1:{{port}}\"\n"
            "start:\n"
            "  argv: [sh, -c, \"echo the config file /etc/x.conf is missing; exit 3\"]\n"
            "  port_from_stdout: 'listening on (\\d+)'\n"
            "actions:\n"
            "  go: {role: create, request: {method: POST, path: /a}}\n");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/client/double-submit.yaml", "--target",
                              dir + "/dies.yaml", "--out", dir + "/runs"},
                             dir, std::chrono::seconds(60));
  INFO(Diagnose(r));
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("the target exited (exit 3) before printing a line matching 'listening on (\\d+)'; stdout: the "
                   "config file /etc/x.conf is missing") != std::string::npos);

  if (::geteuid() != 0) return;  // the helper runs PostgreSQL as nobody only as root
  const std::string private_dir = dir + "/private";
  std::filesystem::create_directories(private_dir);
  std::filesystem::permissions(private_dir, std::filesystem::perms::owner_all);
  CliResult pg = RunIdemproof({"run", SourceDir() + "/scenarios/client/double-submit.yaml", "--target",
                               SourceDir() + "/scenarios/targets/reference-postgres.yaml", "--out",
                               private_dir + "/runs"},
                              dir, std::chrono::seconds(60));
  INFO(Diagnose(pg));
  CHECK(pg.exit_code == 3);
  CHECK(pg.err.find("service postgres: exited before printing a line matching") != std::string::npos);
  CHECK(pg.err.find("PostgreSQL runs as nobody (this runs as root), and nobody cannot reach") != std::string::npos);
  CHECK(pg.err.find(private_dir + " is mode 700 owned by root") != std::string::npos);
}

// Issue 49 item 2: a target file written before roles. A copy of
// reference.yaml with every `role:` (and the `of:` that needs one) removed,
// names kept. The loader refuses actions without a role (file:line:column)
// and says what each looks like; followed, those hints load the file, and
// `lint --target` then says, per scenario, which of the file's own probes
// look like the role it wants (the not-applicable summary, which a run
// prints too, carries the same reason). Followed again, the file runs the
// rows the original does.
namespace {

std::string WithoutRoles(const std::string& yaml) {
  YAML::Node root = YAML::Load(yaml);
  for (const std::string section : {"actions", "probes", "hooks", "messages"}) {
    if (!root[section]) continue;
    for (auto it = root[section].begin(); it != root[section].end(); ++it) {
      if (!it->second.IsMap()) continue;
      it->second.remove("role");
      it->second.remove("of");
    }
  }
  YAML::Emitter emitted;
  emitted << root;
  return emitted.c_str();
}

// Applies every "'NAME' looks like role R[ of O]: add `role: R[, of: O]`"
// hint of `text` that names one `of:` to the actions or probes of `yaml`.
std::string FollowHints(const std::string& yaml, const std::string& text, int& followed) {
  YAML::Node root = YAML::Load(yaml);
  // "'NAME' looks like ..." or, for the action the loader's error is at,
  // "action 'NAME' has no role, ... (it looks like ...".
  static const std::regex kHint(
      R"('([A-Za-z0-9_]+)'(?: has no role[^(]*\(it)? looks like role ([a-z]+)[^:]*: add `role: ([a-z]+)(, of: ([A-Za-z0-9_]+))?`)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kHint); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1], role = (*it)[3], of = (*it)[5];
    if (of == "NAME") continue;  // "of one of A, B": which one is the file's to say
    for (const std::string section : {"actions", "probes"}) {
      YAML::Node entry = root[section][name];
      if (!entry || entry["role"]) continue;
      entry["role"] = role;
      if (!of.empty()) entry["of"] = of;
      ++followed;
    }
  }
  YAML::Emitter emitted;
  emitted << root;
  return emitted.c_str();
}

// The causes of lint's not-applicable table ("  rows  #    cause  what to
// add ..."), each whole again: a cause the table wrapped over several lines
// (a line with no number in the # column continues the one above).
std::vector<std::string> TableCauses(const std::string& lint_out) {
  std::vector<std::string> causes;
  std::istringstream in(lint_out);
  std::string line;
  std::size_t cause_at = std::string::npos, add_at = std::string::npos, number_at = 0;
  while (std::getline(in, line)) {
    if (cause_at == std::string::npos) {
      if (line.rfind("  rows  #    cause", 0) == 0) {
        number_at = line.find('#');
        cause_at = line.find("cause");
        add_at = line.find("what to add");
      }
      continue;
    }
    if (line.size() <= cause_at) break;  // past the table
    std::string cause = line.substr(cause_at, add_at == std::string::npos ? std::string::npos : add_at - cause_at);
    while (!cause.empty() && cause.back() == ' ') cause.pop_back();
    if (line[number_at] == '#' || causes.empty()) causes.push_back(cause);
    else causes.back() += " " + cause;
  }
  return causes;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

int WillRun(const std::string& lint_out) {
  static const std::regex kWillRun(R"(will run ([0-9]+) row\(s\))");
  std::smatch m;
  return std::regex_search(lint_out, m, kWillRun) ? std::stoi(m[1]) : -1;
}

}  // namespace

TEST_CASE("lint --target on the reference file with every role removed says which of its own names fit each role",
          "[cli][bind][roles]") {
  const std::string dir = ScratchDir("roles-removed");
  const std::string copy = dir + "/target.yaml";
  std::string text = WithoutRoles(ReadFile(SourceDir() + "/scenarios/targets/reference.yaml"));
  WriteFile(copy, text);
  {
    const YAML::Node written = YAML::LoadFile(copy);
    REQUIRE(written["probes"]["inbox_applied"]);
    REQUIRE_FALSE(written["probes"]["inbox_applied"]["role"]);
    REQUIRE_FALSE(written["actions"]["create_order"]["role"]);
  }
  // 1. Actions without a role: one located error, a guess for each.
  CliResult r = RunIdemproof({"lint", SourceDir() + "/scenarios", "--target", copy}, dir);
  INFO("exit " << r.exit_code << "\n" << r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(copy + ":") != std::string::npos);
  for (const char* hint : {
           "action 'pay' has no role", "(it looks like role pay: add `role: pay`)",
           "'create_order' looks like role create: add `role: create`",
           "'cancel_order' looks like role delete of create_order: add `role: delete, of: create_order`",
           "'set_address' looks like role put of create_order: add `role: put, of: create_order`",
           "'payment_paid' looks like role callback of create_order: add `role: callback, of: create_order`",
       }) {
    INFO(hint);
    CHECK(r.err.find(hint) != std::string::npos);
  }
  // 2. Those followed: the file loads; the probes still have none, and the
  // rows that want one name the file's own probe.
  int followed = 0;
  text = FollowHints(text, r.err, followed);
  CHECK(followed == 6);
  WriteFile(copy, text);
  r = RunIdemproof({"lint", SourceDir() + "/scenarios", "--target", copy}, dir);
  INFO("exit " << r.exit_code << "\n" << r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> causes = TableCauses(r.out);
  const std::string causes_text = Joined(causes);
  for (const char* hint : {
           "probe 'inbox_applied' looks like role applied of credit: add `role: applied, of: credit`",
           "probe 'stock' looks like role counter of create_order: add `role: counter, of: create_order`",
           "probe 'order' looks like role resource of create_order: add `role: resource, of: create_order`",
           "probe 'ledger' looks like role ledger of pay: add `role: ledger, of: pay`",
           "probe 'payment_record' looks like role record of pay: add `role: record, of: pay`",
       }) {
    INFO(hint << "\n---- the table's causes\n" << causes_text);
    CHECK(causes_text.find(hint) != std::string::npos);
  }
  // The row the issue met: http-redelivery, not applicable, now pointing at
  // the file's own probe: each of its causes by number ("needs #3, #7").
  const std::size_t row = r.out.find("  queue/http-redelivery: needs ");
  REQUIRE(row != std::string::npos);
  const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
  std::string row_causes;
  for (std::size_t at = line.find('#'); at != std::string::npos; at = line.find('#', at + 1)) {
    const std::size_t k = std::stoul(line.substr(at + 1));
    REQUIRE(k >= 1);
    REQUIRE(k <= causes.size());
    row_causes += causes[k - 1] + "\n";
  }
  INFO(line << "\n" << row_causes);
  CHECK(row_causes.find("probe 'inbox_applied' looks like role applied of credit") != std::string::npos);
  CHECK(row_causes.find("callbacks_applied") == std::string::npos);  // a callback's counter is not the inbox's
  // The not-applicable summary (a run prints the same table) carries the hint too.
  const std::size_t note = r.out.rfind("row(s) not applicable:");
  REQUIRE(note != std::string::npos);
  // 3. The probe hints followed as well: the rows the original file runs, but
  // those of the two callback counters (which callback each counts the hint
  // cannot tell: "of one of payment_paid, payment_refunded").
  text = FollowHints(text, causes_text, followed);
  WriteFile(copy, text);
  CliResult again = RunIdemproof({"lint", SourceDir() + "/scenarios", "--target", copy}, dir);
  CliResult original =
      RunIdemproof({"lint", SourceDir() + "/scenarios", "--target", SourceDir() + "/scenarios/targets/reference.yaml"}, dir);
  INFO(again.out << "\n---- original\n" << original.out);
  CHECK(again.exit_code == 0);
  CHECK(WillRun(again.out) > WillRun(r.out));
  CHECK(again.out.find("http-redelivery[credit,inbox_applied]") != std::string::npos);
  CHECK(WillRun(again.out) <= WillRun(original.out));
}
