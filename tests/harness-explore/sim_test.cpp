// The deterministic simulation of the reference core (harness/sim/): each
// named flaw of the core's request path is found with a fixed seed and shrunk
// to a short interleaving that breaks the right built-in oracle; the correct
// core passes; hand-written plans show the step points interleave the real
// SQL; the same seed gives the same plans and the same shrunk interleaving;
// a trial's verdicts are the built-in oracles' over the history it records.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "idemproof/ref/flaw.h"
#include "model/history_events.h"
#include "oracles/oracle.h"
#include "sim/simulation.h"

// Not all of idemproof: its scenario Step would clash with the plan helper below.
namespace ref = idemproof::ref;
namespace sim = idemproof::sim;
namespace event_f = idemproof::event_f;
using idemproof::BuiltinOracles;
using idemproof::EventType;
using idemproof::OracleSpec;
using idemproof::Verdict;
using idemproof::VerdictStatus;
using sim::SimOp;
using sim::SimOpKind;
using sim::SimPlan;

namespace {

constexpr std::uint64_t kSeed = 20261129;

// Pool actions (sim_plan.h).
constexpr int kOrder = 0;       // create_order k1 b1
constexpr int kOtherPayload = 1;  // create_order k1 b1 with qty 2
constexpr int kOtherOrder = 2;  // create_order k2 b2
constexpr int kPay = 3;         // pay kp1 pb1

SimOp Send(int action) { return {SimOpKind::send, action, 0}; }
// Advances the nth (0-based) in-flight request of `action`.
SimOp Step(int action, int nth = 0) { return {SimOpKind::step, action, nth}; }
const SimOp kCrash{SimOpKind::crash, 0, 0};
const SimOp kWait{SimOpKind::wait, 0, 0};

sim::SimConfig Config(ref::Flaw flaw) {
  sim::SimConfig c;
  c.flaw = flaw;
  return c;
}

bool Breaks(const sim::TrialOutcome& run, const std::string& invariant) {
  return std::any_of(run.violations.begin(), run.violations.end(),
                     [&](const sim::Violation& v) { return v.invariant == invariant; });
}

std::string Describe(const sim::TrialOutcome& run) {
  std::string out = sim::FormatTrace(run.trace);
  for (const auto& v : run.violations) out += v.invariant + ": " + v.evidence + "\n";
  if (!run.error.empty()) out += "error: " + run.error + "\n";
  return out;
}

// Runs `plan` on `config` (a flawed core) and on the correct core: the flaw
// breaks `invariant`, the correct core breaks nothing. Returns the correct run.
sim::TrialOutcome BreaksOnlyWithFlaw(const SimPlan& plan, const sim::SimConfig& config, const std::string& invariant) {
  const auto flawed = sim::RunPlan(plan, config);
  INFO(Describe(flawed));
  REQUIRE(flawed.error.empty());
  CHECK(Breaks(flawed, invariant));
  sim::SimConfig correct_config = config;
  correct_config.flaw = ref::Flaw::none;
  auto correct = sim::RunPlan(plan, correct_config);
  INFO(Describe(correct));
  REQUIRE(correct.error.empty());
  CHECK(correct.violations.empty());
  return correct;
}

}  // namespace

TEST_CASE("check-then-insert: two claims checked before either inserts both execute", "[sim]") {
  // r1 and r2 (same key) both pass the check, then both insert.
  const SimPlan plan{{Send(kOrder), Send(kOrder), Step(kOrder, 0), Step(kOrder, 1)}};
  // The same interleaving on the correct core: one claim wins, the other gets 409.
  BreaksOnlyWithFlaw(plan, Config(ref::Flaw::check_then_insert), "one_record");
  // The same over a store file (WAL), as the server runs.
  auto on_file = Config(ref::Flaw::check_then_insert);
  on_file.medium = sim::SimConfig::Medium::file;
  BreaksOnlyWithFlaw(plan, on_file, "one_record");
}

TEST_CASE("unfenced-takeover: the expired owner still completes after a takeover", "[sim]") {
  // r1 claims, its lease expires, r2 takes over; both reach their transaction.
  const SimPlan plan{{Send(kOrder), Step(kOrder), kWait, Send(kOrder), Step(kOrder, 1)}};
  const auto correct = BreaksOnlyWithFlaw(plan, Config(ref::Flaw::unfenced_takeover), "one_record");
  // The fenced core rolls the stale owner back: some answer says lease-lost.
  bool lease_lost = false;
  for (const auto& line : correct.trace) lease_lost |= line.text.find("lease-lost") != std::string::npos;
  CHECK(lease_lost);
}

TEST_CASE("a trial's violations are the built-in oracles' verdicts over the history it recorded", "[sim]") {
  // r1 completes, then its retry: empty-replay answers 200 {"status":"duplicate"}.
  const SimPlan plan{{Send(kOrder), Step(kOrder), Step(kOrder), Send(kOrder)}};
  const auto run = sim::RunPlan(plan, Config(ref::Flaw::empty_replay));
  INFO(Describe(run));
  REQUIRE(run.error.empty());
  REQUIRE(run.violations.size() == 1);
  // The history as the runtime records a run: two sends, their answers, the probes.
  std::size_t sends = 0, answers = 0, probes = 0;
  for (const auto& e : run.history.events()) {
    sends += e.f == event_f::kSend && e.type == EventType::kInvoke ? 1 : 0;
    answers += e.f == event_f::kSend && e.type == EventType::kOk ? 1 : 0;
    probes += e.f == event_f::kProbe && e.type == EventType::kOk ? 1 : 0;
  }
  CHECK(sends == 2);
  CHECK(answers == 2);
  CHECK(probes == 3);  // records of b1 and b2, the ledger of pb1
  // The same oracle over the same history says the same thing.
  OracleSpec spec;
  spec.name = "identical_replay";
  const Verdict v = BuiltinOracles().Check(spec, sim::SimScenario(), sim::SimTarget(std::chrono::seconds(30),
                                                                                      std::chrono::hours(24)),
                                           run.history);
  CHECK(v.status == VerdictStatus::kInvalid);
  CHECK(run.violations.front().invariant == "identical_replay");
  CHECK(run.violations.front().evidence == v.evidence);
  // The correct core's history is judged valid, not merely "not invalid".
  const auto correct = sim::RunPlan(plan, Config(ref::Flaw::none));
  INFO(Describe(correct));
  REQUIRE(correct.error.empty());
  CHECK(correct.violations.empty());
  for (const auto& expectation : sim::SimScenario().expect) {
    if (expectation.name == "intent_reconciled" || expectation.name == "lease_recovery") continue;  // no pay, no crash
    const Verdict cv = BuiltinOracles().Check(expectation, sim::SimScenario(),
                                              sim::SimTarget(std::chrono::seconds(30), std::chrono::hours(24)),
                                              correct.history);
    INFO(expectation.name << ": " << cv.evidence);
    CHECK(cv.status == VerdictStatus::kValid);
  }
}

TEST_CASE("lease_recovery judges a retry with every request of the key in view", "[sim]") {
  // r1 dies before its claim; after the lease r2 (its retry) and r3 (the
  // other payload) race: r3 claims first, r2 is rightly refused as a
  // mismatch. The correct core breaks nothing.
  const SimPlan plan{{Send(kOrder), kCrash, kWait, Send(kOrder), Send(kOtherPayload), Step(kOtherPayload)}};
  const auto run = sim::RunPlan(plan, Config(ref::Flaw::none));
  INFO(Describe(run));
  REQUIRE(run.error.empty());
  CHECK(run.violations.empty());
  OracleSpec spec;
  spec.name = "lease_recovery";
  const Verdict v = BuiltinOracles().Check(spec, sim::SimScenario(),
                                           sim::SimTarget(std::chrono::seconds(30), std::chrono::hours(24)), run.history);
  INFO(v.evidence);
  CHECK(v.status != VerdictStatus::kInvalid);
  // Alone, the same refusal stays a violation: no-lease-expiry's blocked key.
  const auto blocked =
      sim::RunPlan({{Send(kOrder), Step(kOrder), kCrash, kWait, Send(kOrder)}}, Config(ref::Flaw::no_lease_expiry));
  INFO(Describe(blocked));
  CHECK(Breaks(blocked, "lease_recovery"));
}

TEST_CASE("no-lease-expiry: a crashed request's lease blocks its key forever", "[sim]") {
  const SimPlan plan{{Send(kOrder), Step(kOrder), kCrash, kWait, Send(kOrder)}};
  BreaksOnlyWithFlaw(plan, Config(ref::Flaw::no_lease_expiry), "lease_recovery");
  // Before the lease has passed, the retry's 409 is the right answer.
  const auto early = sim::RunPlan({{Send(kOrder), Step(kOrder), kCrash, Send(kOrder)}}, Config(ref::Flaw::none));
  INFO(Describe(early));
  CHECK(early.violations.empty());
  CHECK(early.trace.back().text.find("409 request-in-progress") != std::string::npos);
}

TEST_CASE("no-intent: a crash between the charge and its record charges twice", "[sim]") {
  // r1: claim, provider charge, then the crash before the charge is recorded.
  const SimPlan plan{{Send(kPay), Step(kPay), Step(kPay), kCrash, kWait, Send(kPay)}};
  // The correct core wrote its intent first: the restart reconciles it.
  const auto correct = BreaksOnlyWithFlaw(plan, Config(ref::Flaw::no_intent), "intent_reconciled");
  bool reconciled = false, charged_again = false;
  for (const auto& line : correct.trace) {
    reconciled |= line.text.find("provider lookup -> found tx_1; reconciled 1") != std::string::npos;
    charged_again |= line.text.find("tx_2") != std::string::npos;
  }
  CHECK(reconciled);
  CHECK_FALSE(charged_again);
  CHECK(correct.trace.back().text.find("=> 201") != std::string::npos);
}

TEST_CASE("a crash abandons every request in flight and keeps what committed", "[sim]") {
  // r1 completes; r2 (other key) is abandoned mid-way; a retry of r1 replays.
  const SimPlan plan{{Send(kOrder), Step(kOrder), Step(kOrder), Send(kOtherOrder), Step(kOtherOrder), kCrash,
                      Send(kOrder)}};
  const auto run = sim::RunPlan(plan, Config(ref::Flaw::none));
  INFO(Describe(run));
  REQUIRE(run.error.empty());
  CHECK(run.violations.empty());
  bool abandoned = false;
  for (const auto& line : run.trace) abandoned |= line.text.find("r2 abandoned") != std::string::npos;
  CHECK(abandoned);
  CHECK(run.trace.back().text.find("(replay)") != std::string::npos);
}

TEST_CASE("the simulation finds each flaw and shrinks it to a short interleaving", "[sim][slow]") {
  struct Case {
    ref::Flaw flaw;
    std::string invariant;
    std::size_t max_ops;    // measured with kSeed: ops of the shrunk plan
    std::size_t max_lines;  // measured with kSeed: the shrunk trace, drained steps included
  };
  const Case c = GENERATE(Case{ref::Flaw::check_then_insert, "one_record", 3, 8},
                          Case{ref::Flaw::unfenced_takeover, "one_record", 5, 7},
                          Case{ref::Flaw::no_lease_expiry, "lease_recovery", 5, 6},
                          Case{ref::Flaw::no_intent, "intent_reconciled", 6, 10});
  sim::SimulateOptions options;
  options.config.flaw = c.flaw;
  options.seed = kSeed;
  options.trials = 2000;
  const sim::SimulateReport report = sim::Simulate(options);
  INFO("flaw " << ref::flaw_name(c.flaw) << ", plan " << report.minimal.ToString() << "\n"
               << Describe(report.minimal_run));
  REQUIRE(report.error.empty());
  REQUIRE(report.violation);
  CHECK(Breaks(report.minimal_run, c.invariant));
  CHECK(report.minimal.ops.size() <= c.max_ops);
  CHECK(report.minimal_run.trace.size() <= c.max_lines);
  CHECK(report.minimal.ops.size() <= report.first_failure.ops.size());
}

TEST_CASE("the correct core passes 2000 interleavings", "[sim][slow]") {
  sim::SimulateOptions options;
  options.seed = kSeed;
  options.trials = 2000;
  const sim::SimulateReport report = sim::Simulate(options);
  INFO(report.minimal.ToString() << "\n" << Describe(report.minimal_run) << report.error);
  REQUIRE(report.error.empty());
  CHECK_FALSE(report.violation);
  CHECK(report.interleavings == 2000);
}

TEST_CASE("the same seed gives the same plans and the same shrunk interleaving", "[sim][slow]") {
  const auto a = sim::SampleSimPlans(kSeed, 50, 30);
  const auto b = sim::SampleSimPlans(kSeed, 50, 30);
  const auto other = sim::SampleSimPlans(kSeed + 1, 50, 30);
  CHECK(a == b);
  CHECK(a != other);
  std::size_t ops = 0;
  for (const auto& p : a) ops += p.ops.size();
  CHECK(ops > 0);

  sim::SimulateOptions options;
  options.config.flaw = ref::Flaw::check_then_insert;
  options.seed = kSeed;
  const auto first = sim::Simulate(options);
  const auto second = sim::Simulate(options);
  REQUIRE(first.violation);
  CHECK(first.first_failure == second.first_failure);
  CHECK(first.minimal == second.minimal);
  CHECK(sim::FormatTrace(first.minimal_run.trace) == sim::FormatTrace(second.minimal_run.trace));
  CHECK(first.interleavings == second.interleavings);
}
