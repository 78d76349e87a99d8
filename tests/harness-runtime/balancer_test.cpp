// The harness's balancer (runtime/balancer.h): where each policy places
// requests, bursts in turn, `instance: other`, instances that are down; and
// a three-instance target run end to end through the interpreter (every
// instance started on one store, a killed one skipped, all reaped).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "model/history_events.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/balancer.h"
#include "runtime/interpreter.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::runtime;
using namespace idemproof::testing;

namespace {

const std::vector<std::string> kThree = {"main", "instance-2", "instance-3"};
bool AllUp(const std::string&) { return true; }

}  // namespace

TEST_CASE("round robin places requests in turn and skips instances that are down", "[balancer]") {
  Balancer b(kThree, BalancePolicy::kRoundRobin, 1);
  CHECK(b.Place("k", AllUp) == "main");
  CHECK(b.Place("k", AllUp) == "instance-2");
  CHECK(b.Place("k", AllUp) == "instance-3");
  CHECK(b.Place("k", AllUp) == "main");
  auto no_two = [](const std::string& n) { return n != "instance-2"; };
  CHECK(b.Place("k", no_two) == "instance-3");  // its turn, down: the next one up
  CHECK_FALSE(b.Place("k", [](const std::string&) { return false; }));
}

TEST_CASE("by_key keeps a key on one instance, random follows the seed", "[balancer]") {
  Balancer by_key(kThree, BalancePolicy::kByKey, 1);
  const auto first = by_key.Place("idem-k1", AllUp);
  for (int i = 0; i < 5; ++i) CHECK(by_key.Place("idem-k1", AllUp) == first);
  std::set<std::string> spread;
  for (int i = 0; i < 30; ++i) spread.insert(*by_key.Place("key-" + std::to_string(i), AllUp));
  CHECK(spread.size() == 3);

  Balancer a(kThree, BalancePolicy::kRandom, 42), b(kThree, BalancePolicy::kRandom, 42);
  std::vector<std::string> from_a, from_b;
  for (int i = 0; i < 20; ++i) {
    from_a.push_back(*a.Place("k", AllUp));
    from_b.push_back(*b.Place("k", AllUp));
  }
  CHECK(from_a == from_b);
  CHECK(std::set<std::string>(from_a.begin(), from_a.end()).size() > 1);
}

TEST_CASE("a burst goes over the instances in turn, other avoids the key's last instance", "[balancer]") {
  Balancer b(kThree, BalancePolicy::kByKey, 1);
  const auto burst = b.PlaceInTurn("k", 6, AllUp);
  REQUIRE(burst.size() == 6);
  std::map<std::string, int> per;
  for (const auto& n : burst) ++per[n];
  CHECK(per == std::map<std::string, int>{{"main", 2}, {"instance-2", 2}, {"instance-3", 2}});

  b.Sent("k", "instance-2");
  CHECK(b.Other("k", AllUp) == "instance-3");
  b.Sent("k", "instance-3");
  CHECK(b.Other("k", AllUp) == "main");
  auto only_three = [](const std::string& n) { return n == "instance-3"; };
  CHECK_FALSE(b.Other("k", only_three));  // the last one is the only one up
  b.Sent("k", "a-spawned-one");           // not the balancer's: any of its own
  CHECK(b.Other("k", AllUp) == "main");
}

TEST_CASE("other keeps away from the key's owner, not from the last other: two instances, the owner down",
          "[balancer]") {
  // kill-instance-takeover on two instances: the owner (main) is killed and
  // the retries repeat `instance: other`; the second one must not look for
  // an instance besides instance-2 (the first retry's), as main is down.
  Balancer b({"main", "instance-2"}, BalancePolicy::kRoundRobin, 1);
  b.Sent("k", "main");
  auto main_down = [](const std::string& n) { return n != "main"; };
  for (int i = 0; i < 3; ++i) {
    auto other = b.Other("k", main_down);
    REQUIRE(other);
    CHECK(*other == "instance-2");
    b.Sent("k", *other, true);
  }
  // Three instances: the retries take the others in turn, never the owner.
  Balancer three(kThree, BalancePolicy::kRoundRobin, 1);
  three.Sent("k", "main");
  std::vector<std::string> got;
  for (int i = 0; i < 4; ++i) {
    auto other = three.Other("k", AllUp);
    REQUIRE(other);
    got.push_back(*other);
    three.Sent("k", *other, true);
  }
  CHECK(got == std::vector<std::string>{"instance-2", "instance-3", "instance-2", "instance-3"});
  // A request placed otherwise moves the anchor: other is then away from it.
  three.Sent("k", "instance-2");
  CHECK(three.Other("k", AllUp) == "instance-3");
  three.Sent("k", "instance-3", true);
  CHECK(three.Other("k", AllUp) == "main");
}

TEST_CASE("a three-instance target: all started on one store, a killed one skipped, all reaped",
          "[interpreter][cluster][slow]") {
  const std::string dir = ScratchDir("three-instances");
  auto target = ParseTarget(R"(
name: ref
instances: 3
base_url: "http://127.0.0.1:{{port}}"
start:
  argv: [")" + ReferenceExe() + R"(", "--port", "0", "--db", "{{run_dir}}/ref.db"]
  port_from_stdout: 'listening on 127\.0\.0\.1:(\d+)'
  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}
request_timeout: 5s
actions:
  health: {role: create, request: {method: GET, path: /healthz}}
)",
                            "ref.yaml");
  INFO(target.status().ToString());
  REQUIRE(target.ok());
  auto scenario = ParseScenario(R"(
layer: cluster
hunts: placement
steps:
  - send: health
    repeat: 3
  - kill:
    instance: instance-2
  - send: health
    repeat: 4
  - send: health
    instance: other
expect: [one_record]
)",
                                "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE(scenario.ok());
  InterpreterOptions options;
  options.seed = 7;
  options.run_namespace = "three";
  Interpreter interpreter(*target, options);
  ScenarioRun run = interpreter.Run(*scenario, dir, 0);
  INFO(run.history.ToJsonl());
  REQUIRE(run.error.ok());
  std::vector<std::string> placed;
  int answered = 0;
  for (const auto& e : run.history.events()) {
    if (e.f == event_f::kSend && e.type == EventType::kInvoke) placed.push_back(e.value.at("instance"));
    if (e.f == event_f::kSend && e.type == EventType::kOk && e.value.at("response").at("status") == 200) ++answered;
  }
  REQUIRE(placed.size() == 8);
  CHECK(std::vector<std::string>(placed.begin(), placed.begin() + 3) ==
        std::vector<std::string>{"main", "instance-2", "instance-3"});
  for (std::size_t i = 3; i < 7; ++i) CHECK(placed[i] != "instance-2");  // killed: skipped
  CHECK(placed[7] != placed[6]);
  CHECK(answered == 8);
  CHECK(run.target_pids.size() == 3);
  for (pid_t pid : run.target_pids) CHECK_FALSE(ProcessExists(pid));
}
