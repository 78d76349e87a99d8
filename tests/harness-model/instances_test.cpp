// Several instances of a target (`instances:`, `balance:`) and the
// scenario side of them (`instance: other`, "instance-N", `min_instances:`,
// the cluster layer): loading, validation with file:line:col, and the bind
// check that makes a scenario needing two instances not applicable on one.
#include <catch2/catch.hpp>

#include "literal_history.h"
#include "model/history_events.h"
#include "load_helpers.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

const std::string kStart =
    "start: {argv: [ref, --port, '0'], port_from_stdout: 'listening on (\\d+)'}\n";
const std::string kAction = "actions:\n  a: {role: create, request: {method: POST, path: /a}}\n";

ScenarioVocabulary Vocab() { return BuiltinOracles().Vocabulary(); }

TargetDescription Target(int instances) {
  std::string text = "name: t\nbase_url: http://127.0.0.1:{{port}}\n" + kStart + kAction;
  if (instances > 1) text += "instances: " + std::to_string(instances) + "\n";
  auto r = ParseTarget(text, "t.yaml");
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("a target file declares its instances: a count, or the URLs of a running one") {
  auto started = ParseTarget("name: t\nbase_url: http://127.0.0.1:{{port}}\n" + kStart + kAction +
                                 "instances: 3\nbalance: by_key\n",
                             "t.yaml");
  REQUIRE(started.ok());
  CHECK(started->instance_count == 3);
  CHECK(started->instance_urls.empty());
  CHECK(started->balance == BalancePolicy::kByKey);

  auto listed = ParseTarget("name: t\ninstances: [http://127.0.0.1:8001/, http://127.0.0.1:8002]\n"
                            "balance: random\n" + kAction,
                            "t.yaml");
  REQUIRE(listed.ok());
  CHECK(listed->instance_count == 2);
  CHECK(listed->base_url == "http://127.0.0.1:8001");  // the first is the main instance's
  CHECK(listed->instance_urls.at(1) == "http://127.0.0.1:8002");
  CHECK(listed->balance == BalancePolicy::kRandom);

  // The default: one instance, round robin (a single-instance target as before).
  TargetDescription one = Target(1);
  CHECK(one.instance_count == 1);
  CHECK(one.balance == BalancePolicy::kRoundRobin);
}

TEST_CASE("instance names: main, then instance-2, instance-3, ...") {
  CHECK(TargetInstanceName(0) == "main");
  CHECK(TargetInstanceName(2) == "instance-3");
  CHECK(TargetInstanceIndex("main") == 0);
  CHECK(TargetInstanceIndex("instance-2") == 1);
  CHECK_FALSE(TargetInstanceIndex("instance-1"));  // that is main
  CHECK_FALSE(TargetInstanceIndex("instance-02"));
  CHECK_FALSE(TargetInstanceIndex("instance-"));
  CHECK_FALSE(TargetInstanceIndex("second"));
  CHECK_FALSE(TargetInstanceIndex("other"));
}

TEST_CASE("a bad instances or balance is an error at its line and column") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:{{port}}\n";
  CHECK(TargetError(head + kStart + kAction + "instances: 0\n") ==
        "t.yaml:6:12: instances must be between 1 and 16, found 0");
  CHECK(TargetError(head + kAction + "instances: 2\n").find(
            "t.yaml:5:12: instances: 2 starts 2 processes and needs 'start'") != std::string::npos);
  CHECK(TargetError(head + kStart + kAction + "instances: many\n").find("t.yaml:6:12:") != std::string::npos);
  CHECK(TargetError(head + kStart + kAction + "balance: round-robin\n") ==
        "t.yaml:6:10: balance must be round_robin, by_key or random, found 'round-robin' "
        "(did you mean 'round_robin'?)");
  // A list of URLs is a running target: no start, no second base_url, no duplicates.
  CHECK(TargetError("name: t\n" + kStart + "instances: [http://127.0.0.1:1]\n" + kAction)
            .find("t.yaml:3:12: instances: a list of URLs describes a target already running") != std::string::npos);
  CHECK(TargetError(head + "instances: [http://127.0.0.1:1]\n" + kAction)
            .find("t.yaml:2:11: base_url: give base_url or a list of instance URLs") != std::string::npos);
  CHECK(TargetError("name: t\ninstances: [http://127.0.0.1:1, 'http://127.0.0.1:1/']\n" + kAction)
            .find("t.yaml:2:33: instances: 'http://127.0.0.1:1' is listed twice") != std::string::npos);
  CHECK(TargetError("name: t\ninstances: [127.0.0.1:1]\n" + kAction)
            .find("t.yaml:2:13: instances: '127.0.0.1:1' must start with http:// or https://") != std::string::npos);
  CHECK(TargetError("name: t\ninstances: []\n" + kAction).find("t.yaml:2:12: instances: list at least one") !=
        std::string::npos);
  // Without instances a base_url is still required.
  CHECK(TargetError("name: t\n" + kAction).find("base_url") != std::string::npos);
}

TEST_CASE("steps name instances: the balancer by default, other, the target's own, spawned ones") {
  auto r = ParseScenario(R"(layer: cluster
hunts: a duplicate on another instance executes again
min_instances: 2
steps:
  - send: a
  - send: a
    instance: other
  - burst: a
    n: 4
  - burst: a
    instance: instance-3
  - kill
  - restart:
    instance: instance-2
  - pause:
    instance: main
expect: [one_record]
)",
                         "s.yaml", Vocab());
  REQUIRE(r.ok());
  CHECK(r->layer == Layer::kCluster);
  CHECK(std::string(LayerName(r->layer)) == "cluster");
  CHECK(r->min_instances == 2);
  CHECK(r->steps[0].Options<SendOptions>().instance == kBalancedInstance);
  CHECK(r->steps[1].Options<SendOptions>().instance == "other");
  CHECK(r->steps[2].NamedInstance() == kBalancedInstance);
  CHECK(r->steps[3].NamedInstance() == "instance-3");
  CHECK(r->steps[4].Options<InstanceOptions>().ControlledInstance() == "main");
  CHECK(r->steps[5].Options<InstanceOptions>().instance == "instance-2");
  CHECK(r->steps[6].Options<InstanceOptions>().ControlledInstance() == "main");
  CHECK(r->InstancesNeeded() == 3);
}

TEST_CASE("a bad instance in a scenario is an error at its line and column") {
  const std::string head = "layer: cluster\nhunts: x\n";
  CHECK(ScenarioError(head + "steps:\n  - kill:\n    instance: other\nexpect: [one_record]\n") ==
        "s.yaml:5:15: step 'kill'.instance: 'other' places a request (send, burst); name the instance");
  CHECK(ScenarioError(head + "steps:\n  - send: a\n    instance: secnd\nexpect: [one_record]\n")
            .find("s.yaml:5:15: step 'send': instance 'secnd' is not started by an earlier 'spawn' step") !=
        std::string::npos);
  CHECK(ScenarioError(head + "steps:\n  - spawn: instance-2\nexpect: [one_record]\n")
            .find("s.yaml:4:12: step 'spawn': 'instance-2' names the target's own instances") != std::string::npos);
  CHECK(ScenarioError(head + "min_instances: 0\nsteps:\n  - send: a\nexpect: [one_record]\n") ==
        "s.yaml:3:16: min_instances must be between 1 and 16, found 0");
  CHECK(ScenarioError("layer: clutser\nhunts: x\nsteps:\n  - send: a\nexpect: [one_record]\n")
            .find("(did you mean 'cluster'?)") != std::string::npos);
}

TEST_CASE("a scenario needing more instances than the target has is not applicable, saying why") {
  auto other = ParseScenario("layer: cluster\nhunts: x\nsteps:\n  - send: a\n  - send: a\n    instance: other\n"
                             "expect: [one_record]\n",
                             "s.yaml", Vocab());
  REQUIRE(other.ok());
  ScenarioFit one = CheckScenarioAgainstTarget(*other, Target(1));
  REQUIRE(one.errors.empty());
  REQUIRE(one.needs.size() == 1);
  CHECK(one.needs[0] == "a target with at least 2 instances (target 'instances'; 't' has 1)");
  CHECK(CheckScenarioAgainstTarget(*other, Target(2)).runnable());

  auto burst = ParseScenario("layer: cluster\nhunts: x\nmin_instances: 3\nsteps:\n  - burst: a\nexpect: [one_record]\n",
                             "s.yaml", Vocab());
  REQUIRE(burst.ok());
  CHECK_FALSE(CheckScenarioAgainstTarget(*burst, Target(2)).runnable());
  CHECK(CheckScenarioAgainstTarget(*burst, Target(3)).runnable());

  // A single-instance scenario binds to a cluster target as to one instance.
  auto plain = ParseScenario("layer: client\nhunts: x\nsteps:\n  - send: a\nexpect: [one_record]\n", "s.yaml", Vocab());
  REQUIRE(plain.ok());
  CHECK(plain->InstancesNeeded() == 1);
  CHECK(CheckScenarioAgainstTarget(*plain, Target(3)).runnable());
}

TEST_CASE("a scenario meaningful on fewer instances than the target has is not applicable, saying why") {
  auto single = ParseScenario("layer: queue\nhunts: x\nmax_instances: 1\nsteps:\n  - send: a\nexpect: [one_record]\n",
                              "s.yaml", Vocab());
  REQUIRE(single.ok());
  CHECK(single->max_instances == 1);
  CHECK(CheckScenarioAgainstTarget(*single, Target(1)).runnable());
  ScenarioFit three = CheckScenarioAgainstTarget(*single, Target(3));
  REQUIRE(three.errors.empty());
  REQUIRE(three.needs.size() == 1);
  CHECK(three.needs[0] == "a target with at most 1 instance(s) (scenario 'max_instances'; 't' has 3)");
  const std::string head = "layer: cluster\nhunts: x\n";
  CHECK(ScenarioError(head + "min_instances: 2\nmax_instances: 1\nsteps:\n  - send: a\nexpect: [one_record]\n") ==
        "s.yaml:4:16: max_instances must be between min_instances (2) and 16, found 1");
}

TEST_CASE("a target whose instances share no store makes every scenario sending a key to a second instance not "
          "applicable") {
  // paused-owner-takeover spawns a second process and takes the key over
  // there; kill-instance-takeover retries on `instance: other`. Both assume
  // the other instance sees the same store: on a target saying it does not,
  // their violation would be unearned.
  const std::string head = "name: t\nbase_url: http://127.0.0.1:{{port}}\n" + kStart + kAction;
  auto alone = ParseTarget(head + "shared_store: false\n", "t.yaml");
  REQUIRE(alone.ok());
  CHECK_FALSE(alone->shared_store);
  CHECK(Target(1).shared_store);  // the default: one store for all

  auto spawned = ParseScenario("layer: side-effect\nhunts: x\nsteps:\n  - spawn: second\n  - send: a\n"
                               "  - send: a\n    instance: second\nexpect: [one_record]\n",
                               "s.yaml", Vocab());
  REQUIRE(spawned.ok());
  CHECK(CheckScenarioAgainstTarget(*spawned, Target(1)).runnable());
  ScenarioFit fit = CheckScenarioAgainstTarget(*spawned, *alone);
  REQUIRE(fit.errors.empty());
  REQUIRE(fit.needs.size() == 1);
  CHECK(fit.needs[0] == "instances that share one store: it sends a key to a second instance, and 't' says its "
                        "instances share none (target 'shared_store: false')");

  // A cluster of two that shares nothing: balanced by key, so one key stays on one instance.
  auto pair = ParseTarget(head + "instances: 2\nbalance: by_key\nshared_store: false\n", "t.yaml");
  REQUIRE(pair.ok());
  auto other = ParseScenario("layer: cluster\nhunts: x\nsteps:\n  - send: a\n  - send: a\n    instance: other\n"
                             "expect: [one_record]\n",
                             "s.yaml", Vocab());
  REQUIRE(other.ok());
  CHECK(CheckScenarioAgainstTarget(*other, Target(2)).runnable());
  CHECK_FALSE(CheckScenarioAgainstTarget(*other, *pair).runnable());
  // A scenario on one instance still runs there.
  auto plain = ParseScenario("layer: client\nhunts: x\nsteps:\n  - send: a\nexpect: [one_record]\n", "s.yaml", Vocab());
  REQUIRE(plain.ok());
  CHECK(CheckScenarioAgainstTarget(*plain, *pair).runnable());
  CHECK(CheckScenarioAgainstTarget(*plain, *alone).runnable());
  // Balancing a key over instances that share nothing would split it: refused, located.
  CHECK(TargetError(head + "instances: 2\nshared_store: false\n") ==
        "t.yaml:7:15: shared_store: false with 2 instances needs balance: by_key (instances that share no store "
        "must each get every request of a key)");
  CHECK(TargetError(head + "shared_store: sometimes\n").find("t.yaml:6:15:") != std::string::npos);
}

TEST_CASE("listed instance URLs that name the same host and port are refused at the second one's line and column") {
  // One server spelt two ways is one instance: the balancer would count it
  // twice and a duplicate "on another instance" would land on the same one.
  auto error = [](const std::string& list) { return TargetError("name: t\ninstances: " + list + "\n" + kAction); };
  CHECK(error("[http://127.0.0.1:8001, http://localhost:8001]")
            .find("t.yaml:2:36: instances: 'http://localhost:8001' names the same server as "
                  "'http://127.0.0.1:8001' (host localhost, port 8001)") != std::string::npos);
  CHECK(error("[http://LOCALHOST:8001/, http://127.0.0.1:8001]").find("t.yaml:2:37:") != std::string::npos);
  CHECK(error("['http://[::1]:8001', http://localhost:8001]").find("names the same server") != std::string::npos);
  CHECK(error("[http://svc.example:80, http://SVC.example]").find("t.yaml:2:36:") != std::string::npos);
  CHECK(error("[https://svc.example, https://svc.example:443/api]").find("names the same server") !=
        std::string::npos);
  CHECK(error("[http://127.0.0.1:8001, 'http://user@127.0.0.1:8001/v1']").find("names the same server") !=
        std::string::npos);
  // Other ports, other hosts: other servers.
  for (const char* list : {"[http://127.0.0.1:8001, http://localhost:8002]", "[http://a.example, http://b.example]",
                           "[http://svc.example, https://svc.example]"}) {
    INFO(list);
    auto r = ParseTarget(std::string("name: t\ninstances: ") + list + "\n" + kAction, "t.yaml");
    CHECK(r.ok());
  }
}

TEST_CASE("lease_recovery takes an instance's own death for the end of the requests it served, not of another's") {
  // The owner runs (slow) on main; instance-2 segfaults at 300 ms. The
  // retries on main stay in progress past the 2 s lease: right, main still
  // runs the owner. Only a death of main would leave its key to the lease.
  using namespace idemproof::testing;
  const Answer busy{409, R"({"title":"in progress"})"};
  LiteralHistory h;
  h.Open("client-1", "create_order", "k1", "b1", 0)
      .Send("client-0", "create_order", "k1", "b1", 900, 920, busy)
      .Send("client-0", "create_order", "k1", "b1", 2600, 2610, busy);
  auto died = [&](const std::string& instance) {
    History out;
    for (HistoryEvent e : h.history().events()) {
      if (e.type == EventType::kInvoke && e.f == event_f::kSend) e.value["instance"] = "main";
      out.Append(e);
    }
    HistoryEvent exited = TargetExited(1, 42, "exited (signal 11 (Segmentation fault))");
    exited.value["instance"] = instance;
    exited.time_ns = 300 * std::int64_t{1000000};
    out.Append(exited);
    return out;
  };
  Verdict other = RunOracle("lease_recovery", died("instance-2"), ShopTarget(), {{"lease", "2s"}});
  INFO(other.evidence);
  CHECK(other.status != VerdictStatus::kInvalid);
  Verdict own = RunOracle("lease_recovery", died("main"), ShopTarget(), {{"lease", "2s"}});
  INFO(own.evidence);
  CHECK(own.status == VerdictStatus::kInvalid);  // the key blocked past the lease of its dead owner
}

TEST_CASE("on a cluster listed by URL every step that controls a process is not applicable, saying the harness did "
          "not start it") {
  auto listed = ParseTarget("name: t\ninstances: [http://127.0.0.1:8001, http://127.0.0.1:8002]\n" + kAction, "t.yaml");
  REQUIRE(listed.ok());
  for (const std::string step : {"  - kill\n", "  - spawn: extra\n", "  - pause:\n    instance: instance-2\n",
                                 "  - send: a\n    then: kill\n"}) {
    auto s = ParseScenario("layer: cluster\nhunts: x\nsteps:\n" + step + "expect: [one_record]\n", "s.yaml", Vocab());
    INFO(step << (s.ok() ? "" : s.status().ToString()));
    REQUIRE(s.ok());
    ScenarioFit fit = CheckScenarioAgainstTarget(*s, *listed);
    REQUIRE(fit.needs.size() == 1);
    CHECK(fit.needs[0].find("the harness did not start the listed instances") != std::string::npos);
  }
}
