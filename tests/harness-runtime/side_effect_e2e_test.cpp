// The side-effect and queue layers end to end: `idemproof run` against the
// reference service with the services its target file declares (the payment
// provider stub, a Redis server of its own): each side-effect / queue flaw is
// caught by the scenario aimed at it, with both target files; a target
// lacking a kill command, a ledger probe or a broker gets not_applicable; no
// service or target process outlives a run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

using namespace idemproof::testing;
using nlohmann::json;

namespace {

std::string Target(const std::string& name) { return SourceDir() + "/scenarios/targets/" + name; }

// A bound row ("kill-after-charge[pay,ledger,payment_record]") answers for its scenario's name.
std::string Verdict(const json& results, const std::string& scenario, const std::string& oracle) {
  for (const auto& s : results.at("scenarios")) {
    if (s.at("name") != scenario && s.value("scenario", "") != scenario) continue;
    for (const auto& v : s.at("verdicts"))
      if (v.at("oracle") == oracle) return v.at("status");
  }
  return "(absent)";
}

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// Every pid a run's histories name: services (services.NAME.pid), target
// starts, restarts and spawned instances.
std::vector<pid_t> PidsInHistories(const std::string& run_dir) {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(run_dir)) {
    if (entry.path().filename() != "history.jsonl") continue;
    std::istringstream lines(ReadFile(entry.path().string()));
    for (std::string line; std::getline(lines, line);) {
      const json e = json::parse(line);
      const json& v = e.at("value");
      if (e.at("type") != "ok") continue;
      if (e.at("f") == "services") {
        for (const auto& [name, value] : v.at("services").items())
          if (name.size() > 4 && name.substr(name.size() - 4) == ".pid") pids.push_back(std::stoi(value.get<std::string>()));
      } else if ((e.at("f") == "start" || e.at("f") == "restart" || e.at("f") == "spawn") && v.contains("pid")) {
        pids.push_back(v.at("pid").get<pid_t>());
      }
    }
  }
  return pids;
}

struct SideEffectFlaw {
  std::string flaw, scenario, oracle;
};

const std::vector<SideEffectFlaw> kSideEffectMatrix = {
    {"no-intent", "kill-after-charge", "intent_reconciled"},
    {"callback-no-dedup", "repeated-callback", "applied_once"},
    {"callback-no-dedup", "repeated-follow-up-callback", "applied_once"},
    {"no-lease-expiry", "crash-mid-request", "lease_recovery"},
    {"unfenced-takeover", "paused-owner-takeover", "lease_recovery"},
    {"inbox-no-dedup", "http-redelivery", "applied_once"},
    {"inbox-no-dedup", "stream-redelivery", "applied_once"},
    {"inbox-no-dedup", "stream-kill-before-ack", "applied_once"},
};

}  // namespace

TEST_CASE("side effects and queues: the correct service passes, and leaves no process behind", "[cli][side-effect][slow]") {
  const std::string target = GENERATE(as<std::string>{}, "reference.yaml", "reference-renamed.yaml");
  const std::string dir = ScratchDir("side-effect-correct");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/side-effect", SourceDir() + "/scenarios/queue",
                              "--target", Target(target), "--out", dir + "/runs", "--json", dir + "/r.json"},
                             dir);
  INFO(target << "\n" << Diagnose(r));
  CHECK(r.exit_code == 0);
  const VerdictTally tally = TallyVerdicts(ReadFile(dir + "/r.json"));
  INFO(tally.ProblemText());
  CHECK(tally.problems.empty());
  // one verdict per oracle of the 18 scenarios, and problem_details where a
  // scenario got a 4xx (the reference declares errors: problem+json);
  // store-error-on-completion's three are not applicable (no tcp egress)
  CHECK(tally.valid + tally.not_applicable == 42);
  const std::vector<pid_t> pids = PidsInHistories(dir + "/runs");
  // 18 scenarios (8 before the families of issue 33): the payment provider and a Redis server each, the target, its restarts and a spawned instance.
  CHECK(pids.size() >= 8 * 3);
  for (pid_t pid : pids) CHECK_FALSE(ProcessExists(pid));
}

// Runs the scenario aimed at `fc.flaw` against `target` with the flaw: its
// oracle says invalid, and no process of the run outlives it.
static void CheckSideEffectFlawCaught(const std::string& target, const SideEffectFlaw& fc) {
  const std::string dir = ScratchDir("side-flaw-" + fc.flaw);
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios", "--target", Target(target), "--flaw", fc.flaw,
                              "--filter", fc.scenario, "--out", dir + "/runs", "--json", dir + "/r.json"},
                             dir);
  INFO(target << " --flaw " << fc.flaw << "\n" << Diagnose(r));
  CHECK(r.exit_code == 1);
  CHECK(Verdict(json::parse(ReadFile(dir + "/r.json")), fc.scenario, fc.oracle) == "invalid");
  for (pid_t pid : PidsInHistories(dir + "/runs")) CHECK_FALSE(ProcessExists(pid));
}

TEST_CASE("the side-effect flaw matrix: each flaw is caught by the scenario aimed at it", "[cli][flaws][side-effect][slow]") {
  const std::string target = GENERATE(as<std::string>{}, "reference.yaml", "reference-renamed.yaml");
  CheckSideEffectFlawCaught(target, GENERATE(from_range(kSideEffectMatrix)));
}

// The same with the reference on PostgreSQL (reference-postgres.yaml): the
// lease and the fenced takeover are the PostgreSQL store's own statements.
// A refund callback releases the stock through the PostgreSQL store there.
TEST_CASE("the side-effect flaw matrix on PostgreSQL: each flaw is caught by the scenario aimed at it",
          "[cli][flaws][side-effect][postgres][slow]") {
  CheckSideEffectFlawCaught("reference-postgres.yaml", GENERATE_COPY(from_range(kSideEffectMatrix)));
}

TEST_CASE("a target without a kill command, a ledger probe or a broker: not applicable, with what it needs", "[cli][side-effect][slow]") {
  const std::string dir = ScratchDir("side-effect-bare");
  // The reference, started by the harness, but declaring none of the
  // side-effect hooks, probes, services, messages or broker.
  WriteFile(dir + "/target.yaml",
            "name: bare\n"
            "base_url: \"http://127.0.0.1:{{port}}\"\n"
            "start:\n"
            "  argv: [\"{{build_dir}}/reference-impl/idemproof-ref\", \"--port\", \"0\", \"--db\", \"{{run_dir}}/ref.db\", \"--lease\", \"2s\"]\n"
            "  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'\n"
            "idempotency: {lease: 2s, replay: {header: Idempotent-Replayed}}\n"
            "actions:\n"
            "  create_order: {role: create, request: {method: POST, path: /orders, json: {biz_no: \"{{biz}}\", sku: s, qty: 1, amount: 1}}}\n"
            "hooks:\n"
            "  slow_business: {request: {method: POST, path: /_chaos, json: {delay_ms: 1500}}}\n");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/side-effect", SourceDir() + "/scenarios/queue",
                              "--target", dir + "/target.yaml", "--out", dir + "/runs", "--json", dir + "/r.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 0);
  const json results = json::parse(ReadFile(dir + "/r.json"));
  CHECK(Verdict(results, "kill-after-charge", "intent_reconciled") == "not_applicable");
  CHECK(Verdict(results, "repeated-callback", "applied_once") == "not_applicable");
  CHECK(Verdict(results, "stream-redelivery", "applied_once") == "not_applicable");
  CHECK(Verdict(results, "http-redelivery", "applied_once") == "not_applicable");
  CHECK(Verdict(results, "kill-after-downstream", "downstream_once") == "not_applicable");
  for (const auto& s : results.at("scenarios")) {
    if (s.at("name") == "kill-after-downstream") {  // no egress: no downstream to kill after
      const std::string why = s.at("verdicts")[0].at("evidence");
      CHECK(why.find("an action with a role that calls an http egress downstream") != std::string::npos);
    }
    if (s.at("name") == "kill-after-charge") {
      const std::string why = s.at("verdicts")[0].at("evidence");
      CHECK(why.find("a hook 'kill_after_charge'") != std::string::npos);
      CHECK(why.find("an action with role pay") != std::string::npos);  // no action has role pay here
      CHECK(why.find("a probe with role ledger") != std::string::npos);
    }
    if (s.at("name") == "stream-redelivery") {
      const std::string why = s.at("verdicts")[0].at("evidence");
      CHECK(why.find("a broker") != std::string::npos);
    }
  }
  // The crash scenario needs only what this target has (start, a lease, the
  // slow_business hook): it runs.
  CHECK(Verdict(results, "crash-mid-request", "lease_recovery") == "valid");
}

// Issue 46, effects not calls: a service that reconciles after a crash the way
// payment providers recommend — it re-sends the charge under the SAME
// provider idempotency key, and the provider (payment-stub/) answers the
// first charge again — is correct. The egress ledger then lists one
// transaction id twice: one effect, two calls. The no-intent flaw (a new
// provider key per execution) is still two effects.
TEST_CASE("a reference reconciling by re-sending the charge under the same provider key passes, and no-intent is caught",
          "[cli][side-effect][slow]") {
  const std::string dir = ScratchDir("side-effect-resend");
  std::string target = ReadFile(Target("reference-egress.yaml"));
  const std::string at = "\"--provider-timeout\", \"2s\"";
  REQUIRE(target.find(at) != std::string::npos);
  target.replace(target.find(at), at.size(), at + ", \"--reconcile\", \"resend\"");
  WriteFile(dir + "/reference-egress-resend.yaml", target);
  const auto evidence = [](const json& results, const std::string& scenario, const std::string& oracle) {
    for (const auto& s : results.at("scenarios")) {
      if (s.at("name") != scenario && s.value("scenario", "") != scenario) continue;
      for (const auto& v : s.at("verdicts"))
        if (v.at("oracle") == oracle) return v.value("evidence", std::string());
    }
    return std::string("(absent)");
  };
  for (const bool flawed : {false, true}) {
    std::vector<std::string> args = {"run", SourceDir() + "/scenarios/side-effect", "--target",
                                     dir + "/reference-egress-resend.yaml", "--filter", "kill-after-*",
                                     "--out", dir + "/runs", "--json", dir + "/r.json"};
    if (flawed) args.insert(args.end(), {"--flaw", "no-intent"});
    CliResult r = RunIdemproof(args, dir);
    INFO((flawed ? "--flaw no-intent\n" : "correct, --reconcile resend\n") << Diagnose(r));
    const json results = json::parse(ReadFile(dir + "/r.json"));
    const std::string intent = evidence(results, "kill-after-charge", "intent_reconciled");
    const std::string once = evidence(results, "kill-after-downstream", "downstream_once");
    INFO(intent << "\n" << once);
    if (!flawed) {
      CHECK(r.exit_code == 0);
      CHECK(Verdict(results, "kill-after-charge", "intent_reconciled") == "valid");
      CHECK(Verdict(results, "kill-after-downstream", "downstream_once") == "valid");
      // The resend really happened: the ledger lists the one charge twice.
      CHECK(intent.find("the ledger lists it ") != std::string::npos);
      CHECK(once.find("reconciled, not repeated") != std::string::npos);
    } else {
      CHECK(r.exit_code == 1);
      CHECK(Verdict(results, "kill-after-charge", "intent_reconciled") == "invalid");
      CHECK(Verdict(results, "kill-after-downstream", "downstream_once") == "invalid");
      CHECK(intent.find("2 external effects") != std::string::npos);
    }
    for (pid_t pid : PidsInHistories(dir + "/runs")) CHECK_FALSE(ProcessExists(pid));
  }
}

// Issue 46, a store error on completion: the store answers one write of each
// create with its own error (store-error: an ErrorResponse 40001 from the
// PostgreSQL server itself, the connection kept), sweeping the first six
// writes. The correct reference completes the key in the work's transaction:
// the error rolls both back, 500, and the retry after the lease executes
// once. swallow-store-error stores the answer in a write of its own and
// ignores its error: 201, the key left in progress, a second order on retry.
TEST_CASE("a store error on a create's write: the correct reference on PostgreSQL passes and swallow-store-error is caught",
          "[cli][side-effect][postgres][slow]") {
  const std::string flaw = GENERATE(as<std::string>{}, "none", "swallow-store-error");
  const std::string dir = ScratchDir("store-error-" + flaw);
  std::vector<std::string> args = {"run", SourceDir() + "/scenarios/side-effect", "--target",
                                   Target("reference-postgres-store-faults.yaml"), "--filter",
                                   "store-error-on-completion", "--out", dir + "/runs", "--json", dir + "/r.json"};
  if (flaw != "none") args.insert(args.end(), {"--flaw", flaw});
  CliResult r = RunIdemproof(args, dir);
  INFO(flaw << "\n" << Diagnose(r));
  const json results = json::parse(ReadFile(dir + "/r.json"));
  const std::string scenario = "store-error-on-completion";
  // Every position fired, in both: the premise was reached.
  CHECK(Verdict(results, scenario, "faults_fired") == "valid");
  if (flaw == "none") {
    CHECK(r.exit_code == 0);
    CHECK(Verdict(results, scenario, "one_record") == "valid");
    CHECK(Verdict(results, scenario, "identical_replay") == "valid");
    CHECK(Verdict(results, scenario, "key_released") == "valid");
  } else {
    CHECK(r.exit_code == 1);
    CHECK(Verdict(results, scenario, "one_record") == "invalid");
  }
  // The store's error reached the service as an error, not as a lost
  // connection: the proxy's event names the ErrorResponse.
  int answered = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir + "/runs")) {
    if (entry.path().filename() != "history.jsonl") continue;
    std::istringstream lines(ReadFile(entry.path().string()));
    for (std::string line; std::getline(lines, line);)
      if (line.find("with ErrorResponse 40001") != std::string::npos) ++answered;
  }
  CHECK(answered == 6);
  for (pid_t pid : PidsInHistories(dir + "/runs")) CHECK_FALSE(ProcessExists(pid));
}
