// Plan generation and the repro format, without a target process: the
// alphabet built from the reference target and the explore files in
// explore/, RapidCheck plans per seed, preconditions along every plan, and
// generated plans written as YAML and read back by the scenario loader.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <map>
#include <set>
#include <string>

#include "explore/alphabet.h"
#include "explore/explore_spec.h"
#include "explore/ops/builtin_ops.h"
#include "explore/plan.h"
#include "model/shard.h"
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

// An explore file bound to the reference target (its one binding).
ExploreSpec Spec(const std::string& name) {
  auto s = LoadExploreSpec(kSource + "/scenarios/explore/" + name + ".yaml", BuiltinOracles().Vocabulary());
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  std::vector<ExploreSpec> bound = BindExploreSpec(*s, ReferenceTarget());
  REQUIRE(bound.size() == 1);
  REQUIRE(bound.front().scenario.unmet.empty());
  return bound.front();
}

bool HasKind(const Alphabet& a, const OpSpec* kind) {
  for (const auto& [w, ops] : a.groups()) {
    if (ops.front().kind == kind) return true;
  }
  return false;
}

Op SendOp() {
  Op send;
  send.kind = OpNamed("send");
  send.action = "create_order";
  send.key = "k1";
  send.biz = "b1";
  return send;
}

}  // namespace

TEST_CASE("the alphabet comes from the target and the explore block, and says what it leaves out", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  const ExploreSpec spec = Spec("create-order");
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  for (const OpSpec* k : {OpNamed("send"), OpNamed("send_other"), OpNamed("burst"), OpNamed("wait"), OpNamed("wait_past_lease"),
                   OpNamed("kill"), OpNamed("restart"), OpNamed("cause")}) {
    INFO(k->name());
    CHECK(HasKind(*a, k));
  }
  CHECK(HasKind(*a, OpNamed("pause")));
  CHECK(HasKind(*a, OpNamed("resume")));
  // No fault, message or batch job listed in the explore block: reported, with why.
  std::map<std::string, std::string> excluded;
  for (const auto& e : a->excluded()) excluded[e.op] = e.reason;
  CHECK(excluded.count("fault") == 1);
  CHECK(excluded["deliver"].find("explore.messages") != std::string::npos);
  CHECK(excluded["redeliver"].find("explore.messages") != std::string::npos);
  CHECK(excluded["run_batch"].find("explore.batch.jobs") != std::string::npos);
  CHECK(excluded["rerun"].find("explore.batch.jobs") != std::string::npos);
  CHECK(excluded.count("pause") == 0);

  // The queue and batch files generate their ops; a target without a batch
  // section or without the message leaves them out or refuses the file.
  auto inbox = Alphabet::Build(Spec("inbox"), target, interpreter);
  REQUIRE(inbox.ok());
  CHECK(HasKind(*inbox, OpNamed("deliver")));
  CHECK(HasKind(*inbox, OpNamed("redeliver")));
  CHECK_FALSE(HasKind(*inbox, OpNamed("send")));
  auto batch = Alphabet::Build(Spec("batch"), target, interpreter);
  REQUIRE(batch.ok());
  CHECK(HasKind(*batch, OpNamed("run_batch")));
  CHECK(HasKind(*batch, OpNamed("rerun")));
  TargetDescription no_batch = target;
  no_batch.batch.reset();
  auto nb = Alphabet::Build(Spec("batch"), no_batch, interpreter);
  REQUIRE_FALSE(nb.ok());  // nothing left that reaches the target
  CHECK(nb.status().message().find("no batch section") != std::string::npos);
  TargetDescription no_messages = target;
  no_messages.messages.clear();
  CHECK_FALSE(Alphabet::Build(Spec("inbox"), no_messages, interpreter).ok());

  // A last-byte burst without a sender is excluded by the interpreter's NeedsOf, not faked.
  ExploreSpec last_byte = spec;
  last_byte.explore.burst_mode = BurstMode::kLastByte;
  auto b = Alphabet::Build(last_byte, target, interpreter);
  REQUIRE(b.ok());
  CHECK_FALSE(HasKind(*b, OpNamed("burst")));
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
  std::set<const OpSpec*> seen;
  for (const auto& p : p1) {
    for (const auto& op : p.ops) seen.insert(op.kind);
  }
  CHECK(seen.size() == a->groups().size());
}

TEST_CASE("trial i's plan depends on the seed and i alone, so a shard draws the unsharded run's plans", "[explore][shard]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  auto a = Alphabet::Build(Spec("create-order"), target, interpreter);
  REQUIRE(a.ok());
  const auto whole = SamplePlans(*a, 42, 12, 8);
  const Shard shard{2, 4};
  for (int trial = 0; trial < 12; ++trial) {
    if (!shard.Holds(static_cast<std::size_t>(trial))) continue;
    // Drawn alone, with no trial before it, and whatever the budget.
    CHECK(TrialPlanGen(*a, 8, 42, trial)(rc::Random(), 0).value() == whole[static_cast<std::size_t>(trial)]);
    CHECK(SamplePlans(*a, 42, trial + 1, 8).back() == whole[static_cast<std::size_t>(trial)]);
  }
  CHECK(TrialPlanGen(*a, 8, 43, 5)(rc::Random(), 0).value() != whole[5]);
}

TEST_CASE("generated plans respect the preconditions and the length cap", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  for (const std::string name : {"create-order", "cancel-order", "set-address", "inbox", "batch", "payment"}) {
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
        if (op.kind == OpNamed("kill")) CHECK_FALSE(m.up);
      }
      // The scenario never ends with the target paused, and every job run
      // has its clean run.
      const Scenario s = ToScenario(spec, plan, "p");
      bool paused = false;
      std::set<std::string> run, cleaned;
      for (const auto& step : s.steps) {
        if (step.KindName() == "pause") paused = true;
        if (step.KindName() == "resume" || step.KindName() == "kill") paused = false;
        if (step.KindName() == "run_batch") run.insert(step.Options<BatchOptions>().job);
        if (step.KindName() == "clean_run") cleaned.insert(step.Options<BatchOptions>().of);
      }
      CHECK_FALSE(paused);
      CHECK(run == cleaned);
    }
  }
}

TEST_CASE("a generated plan written as YAML reads back as the same scenario", "[explore][slow]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  std::set<std::string> written;
  int sends_to_second = 0, sends_as_second = 0;
  for (const std::string name : {"create-order", "cancel-order", "set-address", "inbox", "batch", "payment",
                                 "callback", "in-flight", "takeover", "after-answer", "after-window", "callers",
                                 "between-the-cases"}) {
    const ExploreSpec spec = Spec(name);
    auto a = Alphabet::Build(spec, target, interpreter);
    REQUIRE(a.ok());
    for (const auto& plan : SamplePlans(*a, 11, 40, 8)) {
      const Scenario s = ToScenario(spec, plan, name + "-repro");
      if (s.steps.empty()) {
        // Only causes no request could feel: all dropped, nothing to write.
        CHECK(std::all_of(plan.ops.begin(), plan.ops.end(), [](const Op& op) { return op.kind == OpNamed("cause"); }));
        continue;
      }
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
        CHECK(y.KindName() == x.KindName());
        CHECK(y.label == x.label);
        REQUIRE(y.options.index() == x.options.index());
        if (const auto* xs = x.Find<SendOptions>()) {
          const SendOptions& ys = y.Options<SendOptions>();
          CHECK(ys.action == xs->action);
          CHECK(ys.key == xs->key);
          CHECK(ys.biz == xs->biz);
          CHECK(ys.payload == xs->payload);
          CHECK(ys.instance == xs->instance);
          CHECK(ys.caller == xs->caller);
          CHECK(ys.background == xs->background);
          sends_as_second += x.KindName() == "send" && xs->caller == "second";
          sends_to_second += x.KindName() == "send" && xs->instance == "second";
          if (x.KindName() == "burst") {
            CHECK(ys.n == xs->n);
            CHECK(ys.mode == xs->mode);
          }
        }
        if (const auto* xq = x.Find<QueueOptions>()) {
          const QueueOptions& yq = y.Options<QueueOptions>();
          CHECK(yq.name == xq->name);
          CHECK(yq.variant == xq->variant);
          CHECK(yq.background == xq->background);
          CHECK(yq.max_attempts == xq->max_attempts);
          CHECK(yq.message_id == xq->message_id);
          CHECK(yq.copies == xq->copies);
          CHECK(yq.lose_ack == xq->lose_ack);
          CHECK(yq.consumers == xq->consumers);
        }
        if (const auto* xb = x.Find<BatchOptions>()) {
          const BatchOptions& yb = y.Options<BatchOptions>();
          CHECK(yb.job == xb->job);
          CHECK(yb.from == xb->from);
          CHECK(yb.to == xb->to);
          CHECK(yb.fail_after == xb->fail_after);
          CHECK(yb.of == xb->of);
          CHECK(yb.variant == xb->variant);
          CHECK(yb.background == xb->background);
        }
        if (const auto* xc = x.Find<CauseOptions>()) {
          const CauseOptions& yc = y.Options<CauseOptions>();
          CHECK(yc.capability == xc->capability);
          CHECK(yc.action == xc->action);
          CHECK(yc.first_only == xc->first_only);
        }
        if (const auto* xw = x.Find<WaitOptions>()) CHECK(y.Options<WaitOptions>().duration == xw->duration);
        if (const auto* xi = x.Find<InstanceOptions>()) CHECK(y.Options<InstanceOptions>().instance == xi->instance);
        if (const auto* xh = x.Find<HookOptions>()) CHECK(y.Options<HookOptions>().name == xh->name);
        if (const auto* xf = x.Find<FaultOptions>()) CHECK(y.Options<FaultOptions>().name == xf->name);
        if (const auto* xp = x.Find<SpawnOptions>()) CHECK(y.Options<SpawnOptions>().name == xp->name);
        if (const auto* xp = x.Find<ProbeOptions>()) CHECK(y.Options<ProbeOptions>().name == xp->name);
        written.insert(x.KindName());
      }
    }
  }
  // The new step kinds were among those written and read back.
  for (const std::string k : {"pause", "resume", "deliver", "run_batch", "rerun", "clean_run", "spawn", "join", "cause"}) {
    INFO(k);
    CHECK(written.count(k) == 1);
  }
  // takeover.yaml's fixed steps spawn "second": generated sends go there too.
  CHECK(sends_to_second > 0);
  // callers.yaml sends as either caller.
  CHECK(sends_as_second > 0);
}

TEST_CASE("explore.callers: sends go as either declared caller, and a caller the target lacks is a config error",
          "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  auto a = Alphabet::Build(Spec("callers"), target, interpreter);
  REQUIRE(a.ok());
  std::set<std::string> callers;
  for (const auto& [w, ops] : a->groups()) {
    for (const auto& op : ops) {
      if (op.kind == OpNamed("send") || op.kind == OpNamed("send_other")) callers.insert(op.caller);
      if (op.kind == OpNamed("wait")) CHECK(op.caller.empty());
    }
  }
  CHECK(callers == std::set<std::string>{"first", "second"});
  Op as_second = SendOp();
  as_second.caller = "second";
  CHECK(as_second.ToString() == "send create_order k1/b1 as second");
  CHECK(as_second != SendOp());
  CHECK(as_second.Steps().front().Options<SendOptions>().caller == "second");
  CHECK(SendOp().Steps().front().Options<SendOptions>().caller.empty());

  const auto vocab = BuiltinOracles().Vocabulary();
  const std::string head = "name: x\nlayer: client\nhunts: y\nexpect: [caller_scope]\n";
  auto typo = ParseExploreSpec(head + "explore:\n  keys: [k1]\n  biz: [b1]\n  callers: [first, scond]\n", "x.yaml",
                               vocab);
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().ToString().rfind("x.yaml:8:20: explore.callers: 'scond' must be first or second", 0) == 0);
  auto spec = ParseExploreSpec(head + "explore:\n  keys: [k1]\n  biz: [b1]\n  callers: [first, second]\n",
                               "x.yaml", vocab);
  REQUIRE(spec.ok());
  TargetDescription one_caller = target;
  one_caller.callers.resize(1);
  auto lacking = Alphabet::Build(*spec, one_caller, interpreter);
  REQUIRE_FALSE(lacking.ok());
  CHECK(lacking.status().ToString() ==
        "x.yaml:8:12: explore: explore.callers names 'second', but the target declares 1 caller(s) (target "
        "'callers')");
}

TEST_CASE("a send to an instance the fixed steps spawned is allowed while main is paused or killed", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  auto a = Alphabet::Build(Spec("takeover"), target, interpreter);
  REQUIRE(a.ok());
  Op pause, kill, to_main = SendOp(), to_second = SendOp();
  pause.kind = OpNamed("pause");
  kill.kind = OpNamed("kill");
  to_second.instance = "second";
  CHECK(to_second.ToString() == "send create_order k1/b1 @second");
  CHECK(to_second != to_main);
  CHECK(to_second.Steps().front().Options<SendOptions>().instance == "second");
  PlanModel m = a->initial();
  a->Apply(pause, m);
  CHECK_FALSE(a->Allowed(to_main, m));  // main is frozen: it would hang
  CHECK(a->Allowed(to_second, m));      // the takeover
  PlanModel killed = a->initial();
  a->Apply(kill, killed);
  CHECK_FALSE(a->Allowed(to_main, killed));
  CHECK(a->Allowed(to_second, killed));
  // Files that spawn nothing generate sends to main only.
  auto plain = Alphabet::Build(Spec("create-order"), target, interpreter);
  REQUIRE(plain.ok());
  for (const auto& [w, ops] : plain->groups()) {
    for (const auto& op : ops) CHECK(op.instance == "main");
  }
}

TEST_CASE("send_background: opt-in, a send nobody waits for, at most two per plan", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  ExploreSpec spec = Spec("create-order");
  auto by_default = Alphabet::Build(spec, target, interpreter);
  REQUIRE(by_default.ok());
  CHECK_FALSE(HasKind(*by_default, OpNamed("send_background")));
  std::map<std::string, std::string> excluded;
  for (const auto& e : by_default->excluded()) excluded[e.op] = e.reason;
  CHECK(excluded["send_background"] == "weight 0 in explore.ops");

  spec.explore.weights["send_background"] = 3;
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  REQUIRE(HasKind(*a, OpNamed("send_background")));
  Op bg = SendOp();
  bg.kind = OpNamed("send_background");
  CHECK(bg.ToString() == "send_background create_order k1/b1");
  REQUIRE(bg.Steps().size() == 1);
  CHECK(bg.Steps().front().KindName() == "send");
  CHECK(bg.Steps().front().Options<SendOptions>().background);
  CHECK_FALSE(SendOp().Steps().front().Options<SendOptions>().background);
  PlanModel m = a->initial();
  CHECK(a->Allowed(bg, m));
  a->Apply(bg, m);
  CHECK(m.used_keys.count({"k1", "b1"}) == 1);  // a retry of its key may follow at once
  a->Apply(bg, m);
  CHECK_FALSE(a->Allowed(bg, m));
  Op pause;
  pause.kind = OpNamed("pause");
  PlanModel paused = a->initial();
  a->Apply(pause, paused);
  CHECK_FALSE(a->Allowed(bg, paused));
  // Generated plans carry background sends, and no plan more than two.
  int plans_with = 0;
  for (const auto& plan : SamplePlans(*a, 5, 60, 8)) {
    int n = 0;
    for (const auto& op : plan.ops) n += op.kind == OpNamed("send_background");
    CHECK(n <= 2);
    plans_with += n > 0;
  }
  CHECK(plans_with > 0);
}

TEST_CASE("an explore file is read as YAML: quoted keys and a flow document load as plain ones do", "[explore]") {
  // The scenario part used to be cut out of the text line by line, so only
  // an unquoted `explore:` at column 0 was recognised as the block.
  const auto vocab = BuiltinOracles().Vocabulary();
  const std::string head = "name: x\nlayer: client\nhunts: y\nexpect: [one_record]\n";
  auto quoted = ParseExploreSpec(head + "\"explore\": {max_ops: 3}\n", "x.yaml", vocab);
  INFO((quoted.ok() ? std::string() : quoted.status().ToString()));
  REQUIRE(quoted.ok());
  CHECK(quoted->explore.max_ops == 3);
  CHECK(quoted->scenario.steps.empty());

  auto steps = ParseExploreSpec(head + "explore: {max_ops: 3}\n'steps': [{send: a}]\n", "x.yaml", vocab);
  INFO((steps.ok() ? std::string() : steps.status().ToString()));
  REQUIRE(steps.ok());
  CHECK(steps->scenario.steps.size() == 1);

  auto flow = ParseExploreSpec(
      "{name: x, layer: client, hunts: y, expect: [one_record], explore: {max_ops: 4}, steps: [{send: a}]}\n", "x.yaml",
      vocab);
  INFO((flow.ok() ? std::string() : flow.status().ToString()));
  REQUIRE(flow.ok());
  CHECK(flow->explore.max_ops == 4);
  CHECK(flow->scenario.steps.size() == 1);

  // Errors in the scenario part after the block keep the file's positions.
  auto late = ParseExploreSpec(head + "\"explore\":\n  max_ops: 3\nsteps:\n  - send: a\n    kye: k1\n", "x.yaml", vocab);
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().ToString().rfind("x.yaml:9:5: ", 0) == 0);
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
  const Op send = SendOp();
  Op other = send;
  other.kind = OpNamed("send_other");
  Op hook;
  hook.kind = OpNamed("hook");
  hook.name = "fail_next_retryable";
  Op kill;
  kill.kind = OpNamed("kill");

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
  CHECK_FALSE(HasKind(*u, OpNamed("kill")));
  CHECK_FALSE(HasKind(*u, OpNamed("restart")));
}

TEST_CASE("the cause op provides a capability by the action's variant or the target's hook", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  const ExploreSpec spec = Spec("create-order");
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  std::vector<Op> causes;
  for (const auto& [w, ops] : a->groups())
    if (ops.front().kind == OpNamed("cause")) causes = ops;
  REQUIRE(causes.size() == 1);  // reference.yaml: create_order's variant fails_retryably
  const Op cause = causes.front();
  CHECK(cause.name == "retryable_failure");
  CHECK(cause.variant == "fails_retryably");
  CHECK(cause.hook.empty());
  const std::vector<Step> steps = cause.Steps();
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].KindName() == "cause");
  CHECK(steps[0].Options<CauseOptions>().action == "create_order");
  CHECK(steps[0].Options<CauseOptions>().variant == "fails_retryably");

  // A pending variant: no second one for the action; the request it changed may have released its key.
  const Op send = SendOp();
  Op other = send;
  other.kind = OpNamed("send_other");
  PlanModel m = a->initial();
  CHECK(a->Allowed(cause, m));
  a->Apply(cause, m);
  CHECK_FALSE(a->Allowed(cause, m));
  a->Apply(send, m);
  CHECK(a->Allowed(cause, m));
  CHECK_FALSE(a->Allowed(other, m));
  // A replay uses the variant up without executing: that key stays reusable.
  PlanModel r = a->initial();
  a->Apply(send, r);
  a->Apply(cause, r);
  a->Apply(send, r);
  CHECK(a->Allowed(other, r));
  CHECK(r.variant_pending.empty());

  // Without the variant the hook provides it; with neither a listed cause is refused.
  TargetDescription hooked = target;
  hooked.actions.at("create_order").variants.clear();
  hooked.hooks["fail_next_retryable"] = target.hooks.at("heal");
  hooked.hooks["fail_next_retryable"].name = "fail_next_retryable";
  hooked.hooks["fail_next_retryable"].role = "retryable_failure";  // as the loader gives a hook of that name
  auto h = Alphabet::Build(spec, hooked, interpreter);
  REQUIRE(h.ok());
  bool by_hook = false;
  for (const auto& [w, ops] : h->groups())
    if (ops.front().kind == OpNamed("cause")) by_hook = ops.front().hook == "fail_next_retryable";
  CHECK(by_hook);
  TargetDescription neither = hooked;
  neither.hooks.erase("fail_next_retryable");
  auto n = Alphabet::Build(spec, neither, interpreter);
  REQUIRE_FALSE(n.ok());
  INFO(n.status().ToString());
  CHECK(n.status().ToString().find("create-order.yaml:18:") != std::string::npos);  // the causes: item
  CHECK(n.status().message().find("a variant 'fails_retryably' of action 'create_order' or a hook") !=
        std::string::npos);
}

TEST_CASE("explore config errors found against the target carry file:line:column", "[explore]") {
  const auto vocab = BuiltinOracles().Vocabulary();
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  const std::string head = "name: x\nlayer: client\nhunts: y\nexpect: [one_record]\n";
  auto spec = ParseExploreSpec(head + "explore:\n  actions: [create_ordre]\n  keys: [k1]\n  biz: [b1]\n", "x.yaml", vocab);
  REQUIRE(spec.ok());
  auto a = Alphabet::Build(*spec, target, interpreter);
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().ToString() == "x.yaml:6:13: explore: the target declares no action 'create_ordre'");
  auto hooks = ParseExploreSpec(head + "explore:\n  hooks: [nope]\n  keys: [k1]\n  biz: [b1]\n", "x.yaml", vocab);
  REQUIRE(hooks.ok());
  CHECK(Alphabet::Build(*hooks, target, interpreter).status().ToString() ==
        "x.yaml:6:11: explore: the target declares no hook 'nope'");
  auto causes = ParseExploreSpec(head + "explore:\n  causes: [slow_reqest]\n", "x.yaml", vocab);
  REQUIRE_FALSE(causes.ok());
  CHECK(causes.status().ToString().rfind("x.yaml:6:12: explore.causes: 'slow_reqest' is not a capability", 0) == 0);
  auto missing = ParseExploreSpec(head, "x.yaml", vocab);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().ToString() == "x.yaml:1:1: an explore file needs an 'explore:' block");
}

TEST_CASE("preconditions of pause/resume, deliver/redeliver and run_batch/rerun", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  Op pause, resume, wait, kill, send;
  pause.kind = OpNamed("pause");
  resume.kind = OpNamed("resume");
  wait.kind = OpNamed("wait");
  wait.duration = std::chrono::milliseconds(100);
  kill.kind = OpNamed("kill");
  send = SendOp();

  auto a = Alphabet::Build(Spec("create-order"), target, interpreter);
  REQUIRE(a.ok());
  PlanModel m = a->initial();
  CHECK_FALSE(a->Allowed(resume, m));  // resume only after a pause
  CHECK(a->Allowed(pause, m));
  a->Apply(pause, m);
  CHECK(m.paused);
  CHECK_FALSE(a->Allowed(pause, m));
  CHECK_FALSE(a->Allowed(send, m));    // it would hang until its timeout
  CHECK(a->Allowed(wait, m));
  CHECK(a->Allowed(kill, m));
  CHECK(a->Allowed(resume, m));
  a->Apply(resume, m);
  CHECK(a->Allowed(send, m));
  PlanModel killed = a->initial();
  a->Apply(kill, killed);
  CHECK_FALSE(a->Allowed(pause, killed));  // nothing running to pause

  // No pause without a resume to follow it.
  ExploreSpec no_resume = Spec("create-order");
  no_resume.explore.weights["resume"] = 0;
  auto nr = Alphabet::Build(no_resume, target, interpreter);
  REQUIRE(nr.ok());
  CHECK_FALSE(HasKind(*nr, OpNamed("pause")));

  // A plan that ends paused is resumed before the fixed steps after it.
  const ExploreSpec inbox = Spec("inbox");
  Plan paused_plan;
  paused_plan.ops = {pause};
  const Scenario s = ToScenario(inbox, paused_plan, "p");
  REQUIRE(s.steps.size() == 4);
  CHECK(s.steps[1].KindName() == "pause");
  CHECK(s.steps[2].KindName() == "resume");
  CHECK(s.steps[3].KindName() == "probe");

  auto q = Alphabet::Build(inbox, target, interpreter);
  REQUIRE(q.ok());
  Op deliver, redeliver;
  for (const auto& [w, ops] : q->groups()) {
    for (const auto& op : ops) {
      if (op.kind == OpNamed("deliver") && op.key == "m1") deliver = op;
      if (op.kind == OpNamed("redeliver") && op.key == "m1") redeliver = op;
    }
  }
  REQUIRE(deliver.kind == OpNamed("deliver"));
  REQUIRE(redeliver.kind == OpNamed("redeliver"));
  CHECK(redeliver.copies == 2);
  PlanModel d = q->initial();
  CHECK(q->Allowed(deliver, d));
  CHECK_FALSE(q->Allowed(redeliver, d));  // nothing delivered yet
  q->Apply(deliver, d);
  CHECK(q->Allowed(redeliver, d));
  q->Apply(pause, d);
  CHECK_FALSE(q->Allowed(deliver, d));
  CHECK_FALSE(q->Allowed(redeliver, d));

  auto b = Alphabet::Build(Spec("batch"), target, interpreter);
  REQUIRE(b.ok());
  Op run, failing, rerun;
  for (const auto& [w, ops] : b->groups()) {
    for (const auto& op : ops) {
      if (op.kind == OpNamed("run_batch") && !op.fail_after) run = op;
      if (op.kind == OpNamed("run_batch") && op.fail_after) failing = op;
      if (op.kind == OpNamed("rerun")) rerun = op;
    }
  }
  REQUIRE(run.kind == OpNamed("run_batch"));
  REQUIRE(failing.fail_after == 60);
  REQUIRE(rerun.kind == OpNamed("rerun"));
  PlanModel j = b->initial();
  CHECK_FALSE(b->Allowed(rerun, j));  // no rerun of a job never run
  CHECK(b->Allowed(failing, j));
  b->Apply(failing, j);
  CHECK_FALSE(b->Allowed(run, j));    // a job runs once; then it is rerun
  CHECK(b->Allowed(rerun, j));
  Plan batch_plan;
  batch_plan.ops = {failing, rerun};
  const Scenario bs = ToScenario(Spec("batch"), batch_plan, "p");
  REQUIRE(bs.steps.size() == 3);
  CHECK(bs.steps[2].KindName() == "clean_run");
  const BatchOptions& clean = bs.steps[2].Options<BatchOptions>();
  CHECK(clean.of == "j1");
  CHECK(clean.job != "j1");
  CHECK(clean.from == 0);
  CHECK(clean.to == 100);
  // A plan that ends with the target killed restarts it before the clean
  // run (2000 clean trials of batch.yaml: 31 undecided, "no clean run").
  Op kill_op;
  kill_op.kind = OpNamed("kill");
  batch_plan.ops = {failing, rerun, kill_op};
  const Scenario killed_bs = ToScenario(Spec("batch"), batch_plan, "p");
  REQUIRE(killed_bs.steps.size() == 5);
  CHECK(killed_bs.steps[2].KindName() == "kill");
  CHECK(killed_bs.steps[3].KindName() == "restart");
  CHECK(killed_bs.steps[4].KindName() == "clean_run");

  // explore.batch and explore.messages are checked like the rest of the block.
  const auto vocab = BuiltinOracles().Vocabulary();
  const std::string head = "name: x\nlayer: batch\nhunts: y\nexpect: [range_continuity]\n";
  auto bad_range = ParseExploreSpec(head + "explore:\n  batch: {jobs: [j1], from: 50, to: 10}\n", "x.yaml", vocab);
  CHECK_FALSE(bad_range.ok());
  auto no_jobs = ParseExploreSpec(head + "explore:\n  batch: {from: 0, to: 10}\n", "x.yaml", vocab);
  CHECK_FALSE(no_jobs.ok());
  auto unknown_message = ParseExploreSpec(head + "explore:\n  messages: [debit]\n  ops: {send: 0}\n", "x.yaml", vocab);
  REQUIRE(unknown_message.ok());
  auto um = Alphabet::Build(*unknown_message, target, interpreter);
  REQUIRE_FALSE(um.ok());
  CHECK(um.status().message().find("no message 'debit'") != std::string::npos);
}

TEST_CASE("wait_past_window: leaves the window once per plan, after a send, and the budget counts again", "[explore]") {
  const TargetDescription target = ReferenceTarget();  // window 4s
  runtime::Interpreter interpreter(target, {});
  auto a = Alphabet::Build(Spec("create-order"), target, interpreter);
  REQUIRE(a.ok());
  REQUIRE(HasKind(*a, OpNamed("wait_past_window")));
  Op past;
  for (const auto& [w, ops] : a->groups())
    if (ops.front().kind == OpNamed("wait_past_window")) past = ops.front();
  CHECK(past.duration == std::chrono::milliseconds(4400));  // the window plus a tenth, as `wait: past_window`
  CHECK(past.ToString() == "wait_past_window 4400ms");
  REQUIRE(past.Steps().size() == 1);
  CHECK(past.Steps().front().Options<WaitOptions>().past_window);

  PlanModel m = a->initial();
  CHECK_FALSE(a->Allowed(past, m));  // nothing sent yet: no window to leave
  a->Apply(SendOp(), m);
  m.elapsed_ms = m.budget_ms;  // the window's budget spent...
  CHECK(a->Allowed(past, m));  // ...leaving it is still allowed
  a->Apply(past, m);
  CHECK(m.elapsed_ms == 0);
  CHECK_FALSE(a->Allowed(past, m));  // once per plan

  // A target without a window leaves it out, and says why.
  TargetDescription no_window = target;
  no_window.idempotency.window.reset();
  auto b = Alphabet::Build(Spec("create-order"), no_window, interpreter);
  REQUIRE(b.ok());
  CHECK_FALSE(HasKind(*b, OpNamed("wait_past_window")));
  std::map<std::string, std::string> excluded;
  for (const auto& e : b->excluded()) excluded[e.op] = e.reason;
  CHECK(excluded["wait_past_window"].find("no idempotency.window") != std::string::npos);

  // A declared window too long to wait out (24 h) is named as such, never
  // as "no window" (issue 34).
  TargetDescription day = target;
  day.idempotency.window = std::chrono::hours(24);
  auto d = Alphabet::Build(Spec("create-order"), day, interpreter);
  REQUIRE(d.ok());
  CHECK_FALSE(HasKind(*d, OpNamed("wait_past_window")));
  std::map<std::string, std::string> day_excluded;
  for (const auto& e : d->excluded()) day_excluded[e.op] = e.reason;
  CHECK(day_excluded["wait_past_window"] ==
        "the declared idempotency.window (24h) is longer than the longest wait explore makes past it (10m): no plan "
        "waits it out");
}

namespace {

TargetDescription RubyTarget() {
  auto t = LoadTargetFile(kSource + "/scenarios/targets/foreign-ruby.yaml");
  REQUIRE(t.ok());
  return std::move(t).value();
}

std::vector<Op> OpsOf(const Alphabet& a, const OpSpec* kind) {
  for (const auto& [w, ops] : a.groups()) {
    if (ops.front().kind == kind) return ops;
  }
  return {};
}

}  // namespace

TEST_CASE("kill_mid_work cuts the work of every role the target makes slow, send_past_lease outlives the lease",
          "[explore]") {
  // Opt-in: the files written before them draw the plans they drew.
  {
    const TargetDescription target = ReferenceTarget();
    runtime::Interpreter interpreter(target, {});
    auto a = Alphabet::Build(Spec("create-order"), target, interpreter);
    REQUIRE(a.ok());
    CHECK_FALSE(HasKind(*a, OpNamed("kill_mid_work")));
    CHECK_FALSE(HasKind(*a, OpNamed("send_past_lease")));
  }
  // between-the-cases.yaml on the box office: its create, its put and delete
  // (of: it), its pushed message, bound from the target file alone.
  const TargetDescription target = RubyTarget();
  runtime::Interpreter interpreter(target, {});
  auto loaded = LoadExploreSpec(kSource + "/scenarios/explore/between-the-cases.yaml", BuiltinOracles().Vocabulary());
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  std::vector<ExploreSpec> bound = BindExploreSpec(*loaded, target);
  REQUIRE(bound.size() == 1);
  REQUIRE(bound.front().scenario.unmet.empty());
  ExploreSpec spec = bound.front();
  CHECK(spec.explore.messages == std::vector<std::string>{"payment_settled"});  // $message bound
  spec.explore.jobs = {"j1"};  // and a batch job, to cut every role
  auto a = Alphabet::Build(spec, target, interpreter);
  INFO(a.status().ToString());
  REQUIRE(a.ok());

  std::map<std::string, Op> cut;  // by work
  std::set<std::string> cut_actions;
  for (const auto& op : OpsOf(*a, OpNamed("kill_mid_work"))) {
    cut.emplace(op.work, op);  // the first of each work
    if (op.work == "send") cut_actions.insert(op.action);
  }
  REQUIRE(cut.size() == 3);
  // Only the create declares a slow variant; put and delete do not.
  CHECK(cut_actions == std::set<std::string>{"book_seats"});

  // An action: its slow variant for the attempt, sent in the background, a
  // moment, then SIGKILL and a start.
  const Op& send_cut = cut["send"];
  CHECK(send_cut.ToString() == "kill_mid_work send book_seats k1/b1 (variant slow)");
  std::vector<Step> steps = send_cut.Steps();
  REQUIRE(steps.size() == 5);
  CHECK(steps[0].KindName() == "cause");
  CHECK(steps[0].Options<CauseOptions>().capability == "slow_request");
  CHECK(steps[0].Options<CauseOptions>().variant == "slow");
  CHECK_FALSE(steps[0].Options<CauseOptions>().first_only);  // the retries repeat the slow request byte for byte
  CHECK(steps[1].KindName() == "send");
  CHECK(steps[1].Options<SendOptions>().background);
  CHECK(steps[2].KindName() == "wait");
  CHECK(steps[2].Options<WaitOptions>().duration > Duration::zero());
  CHECK(steps[3].KindName() == "kill");
  CHECK(steps[4].KindName() == "restart");
  // A message: its push in the slow variant, pushed once.
  steps = cut["deliver"].Steps();
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].KindName() == "deliver");
  CHECK(steps[0].Options<QueueOptions>().variant == "slow");
  CHECK(steps[0].Options<QueueOptions>().background);
  CHECK(steps[0].Options<QueueOptions>().max_attempts == 1);
  CHECK(steps[2].KindName() == "kill");
  // A batch run: in its slow variant.
  steps = cut["run_batch"].Steps();
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].KindName() == "run_batch");
  CHECK(steps[0].Options<BatchOptions>().variant == "slow");
  CHECK(steps[0].Options<BatchOptions>().background);

  // Preconditions: the target up and started by idemproof; up again after.
  PlanModel m = a->initial();
  CHECK(a->Allowed(send_cut, m));
  a->Apply(send_cut, m);
  CHECK(m.up);
  CHECK(m.used_keys.count({"k1", "b1"}) == 1);
  // The killed request never answered: nothing captured, so no put of its
  // resource may follow (it would have no id to name).
  Op put;
  put.kind = OpNamed("send");
  put.action = "change_seats";
  put.key = "k1";
  put.biz = "b1";
  CHECK_FALSE(a->Allowed(put, m));
  Op create = put;
  create.action = "book_seats";
  a->Apply(create, m);
  CHECK(a->Allowed(put, m));
  Op kill;
  kill.kind = OpNamed("kill");
  PlanModel down = a->initial();
  a->Apply(kill, down);
  CHECK_FALSE(a->Allowed(cut["deliver"], down));
  // A job cut mid-run is rerun only after its run's lease lapsed.
  Op restart, rerun, past_lease;
  restart.kind = OpNamed("restart");
  rerun = cut["run_batch"];
  rerun.kind = OpNamed("rerun");
  rerun.work.clear();
  rerun.variant.clear();
  past_lease.kind = OpNamed("wait_past_lease");
  past_lease.duration = std::chrono::milliseconds(2200);
  PlanModel j = a->initial();
  a->Apply(cut["run_batch"], j);
  CHECK(j.jobs_run.count("j1") == 1);
  CHECK_FALSE(a->Allowed(rerun, j));
  a->Apply(past_lease, j);
  CHECK(a->Allowed(rerun, j));
  // The plan's clean run and restart come with it.
  Plan plan;
  plan.ops = {cut["run_batch"]};
  const Scenario s = ToScenario(spec, plan, "cut");
  bool clean = false;
  for (const auto& st : s.steps) clean |= st.KindName() == "clean_run" && st.Options<BatchOptions>().of == "j1";
  CHECK(clean);

  // send_past_lease: the slow_past_lease variant ({{slow_ms}}) in the background.
  const std::vector<Op> overruns = OpsOf(*a, OpNamed("send_past_lease"));
  REQUIRE_FALSE(overruns.empty());
  const Op& over = overruns.front();
  CHECK(over.ToString() == "send_past_lease book_seats k1/b1 (variant slow_past_lease), wait 2200ms");
  steps = over.Steps();
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].KindName() == "cause");
  CHECK(steps[0].Options<CauseOptions>().variant == "slow_past_lease");
  CHECK(steps[1].Options<SendOptions>().background);
  CHECK(steps[2].KindName() == "wait");
  CHECK(steps[2].Options<WaitOptions>().duration == std::chrono::milliseconds(2200));  // the declared lease (2 s) and 200 ms
  PlanModel o = a->initial();
  o.budget_ms = -1;  // two overruns do not fit the box office's window budget
  a->Apply(over, o);
  CHECK(o.used_keys.count({"k1", "b1"}) == 1);
  CHECK(o.up);
  CHECK(o.captured.empty());  // it answers at the end only
  CHECK(a->Allowed(over, o));
  a->Apply(over, o);
  CHECK_FALSE(a->Allowed(over, o));  // at most two requests in flight per plan
  CHECK_FALSE(a->Allowed(send_cut, o));
  PlanModel windowed = a->initial();
  a->Apply(over, windowed);
  CHECK_FALSE(a->Allowed(over, windowed));  // 2 x 2.2 s would leave the 4 s window
}

// A repro of a hunt that reset the target's own store wrote its fault with
// no `on:`: it loaded as the client hop's `reset`, which has no `window`,
// and `idemproof run repro.yaml` refused the file. Where a fault acts is
// written and read back.
TEST_CASE("a fault on the target's store is written with where it acts, and reads back", "[explore]") {
  Scenario s;
  s.name = "hunt-repro";
  s.hunts = "x";
  FaultDeclaration reset;
  reset.name = "store-reset";
  reset.kind = "reset";
  reset.on = "egress.store";
  reset.params = nlohmann::json{{"window", "600ms"}};
  s.faults[reset.name] = reset;
  auto parsed = ParseScenario("layer: client\nhunts: x\nsteps:\n  - wait: 10ms\nexpect: [one_record]\n", "s.yaml",
                              BuiltinOracles().Vocabulary());
  REQUIRE(parsed.ok());
  s.steps = parsed->steps;
  OracleSpec one_record;
  one_record.name = "one_record";
  s.expect = {one_record};
  auto yaml = WriteScenarioYaml(s, "");
  REQUIRE(yaml.ok());
  INFO(*yaml);
  CHECK(yaml->find("    on: egress.store\n") != std::string::npos);
  auto back = ParseScenario(*yaml, "repro.yaml", BuiltinOracles().Vocabulary());
  REQUIRE(back.ok());
  REQUIRE(back->faults.count("store-reset") == 1);
  CHECK(back->faults.at("store-reset").on == "egress.store");
  CHECK(back->faults.at("store-reset").params == reset.params);
}

// Each op's steps come from their kinds (StepKindSpec::FromOp): which kinds
// in what order from Op::Steps, each step's options from its kind's file.
// Written as the repro files write them, every op kind reads as before the
// builders moved out of alphabet.cpp.
TEST_CASE("every op kind's steps, filled by their step kinds, write as the repro files did", "[explore][ops]") {
  auto yaml_of = [](const Op& op) {
    Scenario s;
    s.name = "ops";
    s.steps = op.Steps();
    auto text = WriteScenarioYaml(s, "");
    REQUIRE(text.ok());
    const std::size_t at = text->find("steps:");
    REQUIRE(at != std::string::npos);
    std::size_t end = at;  // up to the next top-level key, if any
    while ((end = text->find('\n', end + 1)) != std::string::npos && end + 1 < text->size() &&
           ((*text)[end + 1] == ' ' || (*text)[end + 1] == '-')) {
    }
    return text->substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
  };
  Op op = SendOp();
  CHECK(yaml_of(op) == "steps:\n  - send: create_order\n    key: k1\n    biz: b1\n");  // main: balanced, unwritten
  op.kind = OpNamed("send_other");
  op.instance = "second";
  op.caller = "first";
  CHECK(yaml_of(op) == "steps:\n  - send: create_order\n    key: k1\n    biz: b1\n    payload: other\n"
                       "    instance: second\n    caller: first\n");
  op = SendOp();
  op.kind = OpNamed("send_then_kill");
  CHECK(yaml_of(op) == "steps:\n  - send: create_order\n    key: k1\n    biz: b1\n    then: kill\n");
  op.kind = OpNamed("burst");
  op.n = 5;
  op.mode = BurstMode::kLastByte;
  CHECK(yaml_of(op) == "steps:\n  - burst: create_order\n    key: k1\n    biz: b1\n    n: 5\n    mode: last_byte\n");
  op = SendOp();
  op.kind = OpNamed("fault");
  op.name = "drop";
  CHECK(yaml_of(op) == "steps:\n  - fault: drop\n  - send: create_order\n    key: k1\n    biz: b1\n  - heal: drop\n");
  Op wait;
  wait.kind = OpNamed("wait");
  wait.duration = std::chrono::milliseconds(250);
  CHECK(yaml_of(wait) == "steps:\n  - wait: 250ms\n");
  wait.kind = OpNamed("wait_past_window");
  CHECK(yaml_of(wait) == "steps:\n  - wait: past_window\n");
  Op deliver;
  deliver.kind = OpNamed("redeliver");
  deliver.action = "credit";
  deliver.key = "m1";
  deliver.biz = "b1";
  deliver.copies = 2;
  CHECK(yaml_of(deliver) == "steps:\n  - deliver: credit\n    message: m1\n    biz: b1\n    copies: 2\n");
  Op batch;
  batch.kind = OpNamed("run_batch");
  batch.name = "j1";
  batch.from = 0;
  batch.to = 100;
  batch.fail_after = 60;
  CHECK(yaml_of(batch) == "steps:\n  - run_batch: j1\n    from: 0\n    to: 100\n    fail_after: 60\n");

  // kill_mid_work on a send: the slow variant for the whole attempt, the send
  // in the background, 400 ms into it the kill, then the restart.
  Op mid = SendOp();
  mid.kind = OpNamed("kill_mid_work");
  mid.work = "send";
  mid.variant = "slow";
  const std::vector<Step> steps = mid.Steps();
  REQUIRE(steps.size() == 5);
  const CauseOptions& cause = steps[0].Options<CauseOptions>();
  CHECK(cause.capability == kSlowCapability);
  CHECK(cause.resolved);
  CHECK(cause.variant == "slow");
  CHECK_FALSE(cause.first_only);
  CHECK(yaml_of(mid) == "steps:\n  - cause: slow_request\n    action: create_order\n  - send: create_order\n"
                        "    key: k1\n    biz: b1\n    background: true\n  - wait: 400ms\n"
                        "  - kill\n  - restart\n");
  mid.work = "deliver";
  mid.action = "credit";
  CHECK(yaml_of(mid) == "steps:\n  - deliver: credit\n    message: k1\n    biz: b1\n    max_attempts: 1\n"
                        "    variant: slow\n    background: true\n  - wait: 400ms\n  - kill\n  - restart\n");
  // send_past_lease: the past-lease variant, the send, the wait past the lease.
  Op past = SendOp();
  past.kind = OpNamed("send_past_lease");
  past.hook = "slow_business";
  past.duration = std::chrono::milliseconds(1500);
  const std::vector<Step> past_steps = past.Steps();
  REQUIRE(past_steps.size() == 3);
  CHECK(past_steps[0].Options<CauseOptions>().capability == kPastLeaseCapability);
  CHECK(past_steps[0].Options<CauseOptions>().hook == "slow_business");
  CHECK(yaml_of(past) == "steps:\n  - cause: slow_past_lease\n    action: create_order\n  - send: create_order\n"
                         "    key: k1\n    biz: b1\n    background: true\n  - wait: 1500ms\n");
  // A cause op: its variant on the next request only.
  Op c = SendOp();
  c.kind = OpNamed("cause");
  c.name = "slow_request";
  c.variant = "slow";
  CHECK(c.Steps().front().Options<CauseOptions>().first_only);
  Op hook;
  hook.kind = OpNamed("hook");
  hook.name = "blue";
  CHECK(yaml_of(hook) == "steps:\n  - hook: blue\n");
}

namespace {

// Every op of an alphabet, its excluded kinds, and `count` plans of seed
// `seed`, one per line: what a fixed seed draws from a file.
std::string DrawnFrom(const std::string& label, const ExploreSpec& spec, const TargetDescription& target,
                      std::uint64_t seed, int count) {
  runtime::Interpreter interpreter(target, {});
  auto a = Alphabet::Build(spec, target, interpreter);
  INFO(label << ": " << a.status().ToString());
  REQUIRE(a.ok());
  std::string out = "== " + label + "\n";
  for (const auto& [w, ops] : a->groups()) {
    out += "group weight " + std::to_string(w) + ":";
    for (const auto& op : ops) out += " [" + op.ToString() + "]";
    out += "\n";
  }
  for (const auto& e : a->excluded()) out += "excluded " + e.op + ": " + e.reason + "\n";
  for (const auto& plan : SamplePlans(*a, seed, count, 8)) out += "plan " + plan.ToString() + "\n";
  return out;
}

}  // namespace

// The plans a fixed seed draws are pinned (golden/plans-seed-42.txt, written
// by the code before the op kinds became a registry): the draw order is the
// registration order, and each kind's candidates keep their order. Every op
// kind is drawn: the opt-in ones are weighted in for the box office file.
// IDEMPROOF_WRITE_GOLDEN=1 rewrites the file instead (then review its diff).
TEST_CASE("a fixed seed draws the pinned plans from every op kind", "[explore][golden]") {
  std::string drawn;
  const TargetDescription reference = ReferenceTarget();
  for (const char* name : {"create-order", "inbox", "batch", "callers", "takeover", "after-window", "in-flight",
                           "retries-only"}) {
    drawn += DrawnFrom(name, Spec(name), reference, 42, 40);
  }
  const TargetDescription ruby = RubyTarget();
  auto loaded = LoadExploreSpec(kSource + "/scenarios/explore/between-the-cases.yaml", BuiltinOracles().Vocabulary());
  REQUIRE(loaded.ok());
  std::vector<ExploreSpec> bound = BindExploreSpec(*loaded, ruby);
  REQUIRE(bound.size() == 1);
  ExploreSpec every = bound.front();
  every.explore.jobs = {"j1"};
  for (const char* opt_in : {"kill_mid_work", "send_past_lease", "send_background", "wait_past_window"})
    every.explore.weights[opt_in] = 2;
  drawn += DrawnFrom("between-the-cases, every kind", every, ruby, 42, 60);

  const std::string path = kSource + "/tests/harness-explore/golden/plans-seed-42.txt";
  if (std::getenv("IDEMPROOF_WRITE_GOLDEN") != nullptr) {
    std::ofstream(path) << drawn;
    WARN("wrote " << path);
    return;
  }
  std::ifstream in(path);
  REQUIRE(in);
  const std::string pinned((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The first line that differs, for the message.
  std::istringstream a(pinned), b(drawn);
  std::string la, lb;
  int line = 0;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    ++line;
    if (!more_a && !more_b) break;
    if (!more_a || !more_b || la != lb) {
      INFO("line " << line << "\npinned: " << (more_a ? la : "(end)") << "\ndrawn:  " << (more_b ? lb : "(end)"));
      CHECK(pinned == drawn);
      break;
    }
  }
  CHECK(pinned.size() == drawn.size());
}

// The op kinds are one registry (explore/op_spec.h): one name table, the
// names explore.ops accepts, each kind registered once.
TEST_CASE("the op kinds are registered once each, and explore.ops accepts exactly their names", "[explore][ops]") {
  const std::vector<std::string> names = Ops().Names();
  CHECK(names == std::vector<std::string>{"send", "send_other", "send_equivalent", "send_changed", "send_then_kill",
                                          "send_background", "burst", "fault", "wait", "wait_past_lease",
                                          "wait_past_window", "kill", "restart", "hook", "cause", "kill_mid_work",
                                          "send_past_lease", "pause", "resume", "deliver", "redeliver", "run_batch",
                                          "rerun", "send_abort", "send_caller"});
  CHECK(OpKindNames() == names);
  for (const auto& name : names) CHECK(OpNamed(name)->name() == name);
  CHECK(Ops().Find("teleport") == nullptr);
  // A second kind of a taken name is refused.
  OpRegistry local;
  RegisterBuiltinOps(local);
  const Status again = local.Register(MakeSendOp());
  CHECK(again.code() == StatusCode::kInvalidArgument);
  CHECK(local.Names() == names);
}

// Issue 46: the client ops the hunt draws, each only where the target
// declares what it needs, and said why where not.
TEST_CASE("send_abort and send_caller come where the target allows them and say what they need", "[explore]") {
  const TargetDescription target = ReferenceTarget();
  runtime::Interpreter interpreter(target, {});
  ExploreSpec spec = Spec("create-order");
  spec.explore.weights["send_abort"] = 2;
  spec.explore.weights["send_caller"] = 1;
  auto a = Alphabet::Build(spec, target, interpreter);
  REQUIRE(a.ok());
  CHECK(HasKind(*a, OpNamed("send_abort")));
  CHECK(HasKind(*a, OpNamed("send_caller")));
  for (const auto& [w, ops] : a->groups()) {
    const Op& op = ops.front();
    if (op.kind == OpNamed("send_abort")) {
      // The slow variant on the request, then a send that gives up long before it answers.
      const std::vector<Step> steps = op.Steps();
      REQUIRE(steps.size() == 2);
      CHECK(steps[0].kind->name() == std::string("cause"));
      const SendOptions& send = steps[1].Options<SendOptions>();
      REQUIRE(send.timeout);
      CHECK(*send.timeout == std::chrono::milliseconds(300));
      CHECK(op.ToString().rfind("send_abort create_order ", 0) == 0);
    }
    if (op.kind == OpNamed("send_caller")) {
      // As the second caller, with a business id of its own.
      const std::vector<Step> steps = op.Steps();
      REQUIRE(steps.size() == 1);
      const SendOptions& send = steps[0].Options<SendOptions>();
      CHECK(send.caller == "second");
      CHECK(send.biz == op.biz + "-second");
      // Only once the key was used.
      PlanModel fresh;
      fresh.managed = true;
      CHECK_FALSE(a->Allowed(op, fresh));
      fresh.used_keys.insert({op.key, op.biz});
      CHECK(a->Allowed(op, fresh));
    }
  }
  // A target with no slow request and one caller: neither, each with its need.
  TargetDescription plain = target;
  plain.callers.resize(1);
  for (auto& [name, action] : plain.actions) action.variants.erase("slow");
  plain.hooks.clear();
  auto b = Alphabet::Build(spec, plain, interpreter);
  REQUIRE(b.ok());
  CHECK_FALSE(HasKind(*b, OpNamed("send_abort")));
  CHECK_FALSE(HasKind(*b, OpNamed("send_caller")));
  std::map<std::string, std::string> excluded;
  for (const auto& e : b->excluded()) excluded[e.op] = e.reason;
  CHECK(excluded["send_abort"].rfind("needs an explore action the target makes slow (slow_request)", 0) == 0);
  CHECK(excluded["send_caller"] == "needs two callers declared in the target (callers:)");
}
