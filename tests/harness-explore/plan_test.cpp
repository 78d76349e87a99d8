// Plan generation and the repro format, without a target process: the
// alphabet built from the reference target and the explore files in
// explore/, RapidCheck plans per seed, preconditions along every plan, and
// generated plans written as YAML and read back by the scenario loader.
#include <catch2/catch.hpp>

#include <string>

#include "explore/alphabet.h"
#include "explore/explore_spec.h"
#include "explore/plan.h"
#include "explore/scenario_writer.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/interpreter.h"

using namespace idemproof;
using namespace idemproof::explore;

namespace {

const std::string kSource = IDEMPROOF_SOURCE_DIR;

TargetDescription ReferenceTarget() {
  auto t = LoadTargetFile(kSource + "/scenarios/targets/reference.yaml");
  REQUIRE(t.ok());
  return std::move(t).value();
}

ExploreSpec Spec(const std::string& name) {
  auto s = LoadExploreSpec(kSource + "/scenarios/explore/" + name + ".yaml", BuiltinOracles().Vocabulary());
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(s).value();
}

bool HasKind(const Alphabet& a, OpKind kind) {
  for (const auto& [w, ops] : a.groups()) {
    if (ops.front().kind == kind) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("the alphabet comes from the target and the explore block, and says what it leaves out", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  const ExploreSpec spec = Spec("create-order");
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  for (OpKind k : {OpKind::kSend, OpKind::kSendOther, OpKind::kBurst, OpKind::kWait, OpKind::kWaitPastLease,
                   OpKind::kKill, OpKind::kRestart, OpKind::kHook}) {
    INFO(OpKindName(k));
    CHECK(HasKind(*a, k));
  }
  // No fault listed, and steps the generator does not produce: reported.
  std::vector<std::string> excluded;
  for (const auto& e : a->excluded()) excluded.push_back(e.op);
  CHECK(std::find(excluded.begin(), excluded.end(), "fault") != excluded.end());
  CHECK(std::find(excluded.begin(), excluded.end(), "pause/resume") != excluded.end());
  CHECK(std::find(excluded.begin(), excluded.end(), "run_batch/rerun") != excluded.end());

  // A last-byte burst without a sender is excluded by the interpreter's NeedsOf, not faked.
  ExploreSpec last_byte = spec;
  last_byte.explore.burst_mode = BurstMode::kLastByte;
  auto b = Alphabet::Build(last_byte, target, interpreter);
  REQUIRE(b.ok());
  CHECK_FALSE(HasKind(*b, OpKind::kBurst));
}

TEST_CASE("the same seed gives the same plans, another seed other plans", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  const ExploreSpec spec = Spec("create-order");
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  const auto p1 = SamplePlans(*a, 42, 60, 8);
  const auto p2 = SamplePlans(*a, 42, 60, 8);
  const auto p3 = SamplePlans(*a, 43, 60, 8);
  REQUIRE(p1.size() == 60);
  CHECK(p1 == p2);
  CHECK(p1 != p3);
  // Every op kind of the alphabet shows up somewhere in 60 plans.
  std::set<OpKind> seen;
  for (const auto& p : p1) {
    for (const auto& op : p.ops) seen.insert(op.kind);
  }
  CHECK(seen.size() == a->groups().size());
}

TEST_CASE("generated plans respect the preconditions and the length cap", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  for (const std::string name : {"create-order", "cancel-order", "set-address"}) {
    const ExploreSpec spec = Spec(name);
    auto a = Alphabet::Build(spec, target, interpreter);
    REQUIRE(a.ok());
    for (const auto& plan : SamplePlans(*a, 7, 200, 6)) {
      INFO(name << ": " << plan.ToString());
      REQUIRE(plan.ops.size() <= 6);
      PlanModel m = a->initial();
      for (const auto& op : plan.ops) {
        REQUIRE(a->Allowed(op, m));
        a->Apply(op, m);
        // e.g. no restart without a start command, no send while killed
        if (op.kind == OpKind::kKill) CHECK_FALSE(m.up);
      }
    }
  }
}

TEST_CASE("a generated plan written as YAML reads back as the same scenario", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  for (const std::string name : {"create-order", "cancel-order", "set-address"}) {
    const ExploreSpec spec = Spec(name);
    auto a = Alphabet::Build(spec, target, interpreter);
    REQUIRE(a.ok());
    for (const auto& plan : SamplePlans(*a, 11, 40, 8)) {
      const Scenario s = ToScenario(spec, plan, name + "-repro");
      auto yaml = WriteScenarioYaml(s, "seed 11\nplan: " + plan.ToString());
      REQUIRE(yaml.ok());
      auto back = ParseScenario(*yaml, "repro.yaml", BuiltinOracles().Vocabulary());
      INFO(*yaml);
      REQUIRE(back.ok());
      CHECK(CheckScenarioAgainstTarget(*back, target).runnable());
      CHECK(back->name == s.name);
      CHECK(back->layer == s.layer);
      CHECK(back->hunts == s.hunts);
      REQUIRE(back->expect.size() == s.expect.size());
      for (std::size_t i = 0; i < s.expect.size(); ++i) {
        CHECK(back->expect[i].name == s.expect[i].name);
        CHECK(back->expect[i].params == s.expect[i].params);
      }
      REQUIRE(back->steps.size() == s.steps.size());
      for (std::size_t i = 0; i < s.steps.size(); ++i) {
        const Step& x = s.steps[i];
        const Step& y = back->steps[i];
        INFO("step " << i);
        CHECK(y.kind == x.kind);
        CHECK(y.action == x.action);
        CHECK(y.key == x.key);
        CHECK(y.biz == x.biz);
        CHECK(y.payload == x.payload);
        CHECK(y.name == x.name);
        CHECK(y.label == x.label);
        CHECK(y.duration == x.duration);
        if (x.kind == StepKind::kBurst) {
          CHECK(y.n == x.n);
          CHECK(y.mode == x.mode);
        }
      }
    }
  }
}

TEST_CASE("explore files are validated strictly, with the file's own line numbers", "[explore]") {
  const auto vocab = BuiltinOracles().Vocabulary();
  const std::string head =
      "name: x\nlayer: client\nhunts: y\nexpect: [one_record]\n";
  auto typo = ParseExploreSpec(head + "explore:\n  keys: [k1]\n  biz: [b1]\n  trails: 5\n", "x.yaml", vocab);
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().ToString().find("x.yaml:8:3") != std::string::npos);
  CHECK(typo.status().ToString().find("trials") != std::string::npos);  // did you mean

  auto scenario_error = ParseExploreSpec(
      "name: x\nlayer: client\nhunts: y\nexplore:\n  max_ops: 3\nsteps:\n  - send: a\n    kye: k1\nexpect: [one_record]\n",
      "x.yaml", vocab);
  REQUIRE_FALSE(scenario_error.ok());
  INFO(scenario_error.status().ToString());
  CHECK(scenario_error.status().ToString().find("x.yaml:8:5") != std::string::npos);

  auto bound = ParseExploreSpec(head + "explore:\n  keys: [k1, k2]\n  biz: [b1]\n", "x.yaml", vocab);
  REQUIRE_FALSE(bound.ok());

  auto ok = ParseExploreSpec(head + "explore:\n  max_ops: 3\n  ops: {kill: 0}\n", "x.yaml", vocab);
  REQUIRE(ok.ok());
  CHECK(ok->scenario.steps.empty());
  CHECK(ok->explore.max_ops == 3);
  CHECK(ok->explore.weights.at("kill") == 0);
}

TEST_CASE("preconditions: no restart without a start command, no reuse of a key a hook may have released", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  const ExploreSpec spec = Spec("create-order");
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  Op send{OpKind::kSend, "create_order", "k1", "b1", "", Duration{0}, 0, BurstMode::kThreads};
  Op other = send;
  other.kind = OpKind::kSendOther;
  Op hook;
  hook.kind = OpKind::kHook;
  hook.name = "fail_next_retryable";
  Op kill;
  kill.kind = OpKind::kKill;

  PlanModel m = a->initial();
  CHECK_FALSE(a->Allowed(other, m));  // nothing to reuse yet
  a->Apply(send, m);
  CHECK(a->Allowed(other, m));

  PlanModel h = a->initial();
  a->Apply(hook, h);
  a->Apply(send, h);  // may have failed with 503: the key is released
  CHECK_FALSE(a->Allowed(other, h));

  PlanModel k = a->initial();
  a->Apply(kill, k);
  CHECK_FALSE(a->Allowed(send, k));
  CHECK_FALSE(a->Allowed(kill, k));

  TargetDescription unmanaged = target;
  unmanaged.start.reset();
  auto u = Alphabet::Build(spec, unmanaged, interpreter);
  REQUIRE(u.ok());
  CHECK_FALSE(HasKind(*u, OpKind::kKill));
  CHECK_FALSE(HasKind(*u, OpKind::kRestart));
}
