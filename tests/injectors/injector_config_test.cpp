// Registry, YAML blocks (errors with line:column) and the shared selectors.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "injectors/fault_selector.h"
#include "injectors/proxy_fault_injector.h"
#include "injectors/proxy_faults/drop_response.h"
#include "injectors/proxy_faults/replay_upstream.h"
#include "injectors/registry.h"

using namespace idemproof::injectors;
using idemproof::Result;
using idemproof::Status;
using idemproof::StatusCode;

namespace {

Registry builtin() {
  Registry r;
  register_builtin_injectors(r);
  return r;
}

Result<std::unique_ptr<Injector>> build(const std::string& yaml) {
  return builtin().build(YAML::Load(yaml));
}

FaultSelector selector(const std::string& yaml) {
  YAML::Node node = YAML::Load(yaml);
  YamlOptions options(node, "test");
  FaultSettings settings = FaultSettings::read(options, "test");
  REQUIRE(options.finish().ok());
  return FaultSelector(settings);
}

}  // namespace

TEST_CASE("register_builtin_injectors registers the seven proxy faults", "[injectors][registry]") {
  auto kinds = builtin().kinds();
  CHECK(kinds == std::vector<std::string>{"delay", "drop-response", "fail", "hedge", "kill-after-answer", "replay-upstream", "reset"});
  Registry r = builtin();
  CHECK(r.add("hedge", {}).code() == StatusCode::kInternal);
}

TEST_CASE("injectors are built from a bare kind or a one-key map", "[injectors][registry]") {
  auto hedge = build("hedge");
  REQUIRE(hedge.ok());
  CHECK(hedge.value()->kind() == "hedge");
  CHECK(hedge.value()->settings().name == "hedge");

  auto drop = build("drop-response: {name: lost, mode: hold, hold_limit: 2s, first: 1,\n"
                    "  match: {method: POST, path: /orders}}");
  REQUIRE(drop.ok());
  auto* proxy_fault = dynamic_cast<ProxyFaultInjector*>(drop.value().get());
  REQUIRE(proxy_fault != nullptr);
  auto* dropping = dynamic_cast<const DropResponse*>(proxy_fault->rule()->fault.get());
  REQUIRE(dropping != nullptr);
  CHECK(dropping->options().hold);
  CHECK(dropping->options().hold_limit == std::chrono::seconds(2));
  CHECK(drop.value()->settings().name == "lost");
  CHECK(drop.value()->settings().method == "POST");
  CHECK(drop.value()->settings().first == 1);

  auto replay = build("replay-upstream: {after: 150ms, times: 2}");
  REQUIRE(replay.ok());
  auto* rp = dynamic_cast<ProxyFaultInjector*>(replay.value().get());
  REQUIRE(rp != nullptr);
  auto* replaying = dynamic_cast<const ReplayUpstream*>(rp->rule()->fault.get());
  REQUIRE(replaying != nullptr);
  CHECK(replaying->options().replay_after == std::chrono::milliseconds(150));
  CHECK(replaying->options().times == 2);
}

TEST_CASE("YAML errors are values naming line:column", "[injectors][registry]") {
  SECTION("unknown kind") {
    auto r = build("\n\n  teleport: {first: 1}\n");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidConfig);
    CHECK(r.status().mark().value_or(idemproof::SourceMark{}).line == 3);
    CHECK(r.status().mark().value_or(idemproof::SourceMark{}).column == 3);
    CHECK(r.status().message().find("known: delay, drop-response") != std::string::npos);
  }
  SECTION("unknown option is positioned at the key") {
    auto r = build("delay:\n  duration: 10ms\n  probabilty: 0.5\n");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().ToString() == "3:3: delay: unknown option 'probabilty'");
  }
  SECTION("wrong type") {
    auto r = build("reset: {first: many}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().ToString() == "1:16: reset.first: expected an integer");
  }
  SECTION("out of range") {
    auto r = build("hedge: {probability: 1.5}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().mark().value_or(idemproof::SourceMark{}).line == 1);
    CHECK(r.status().message().find("out of range") != std::string::npos);
  }
  SECTION("required option") {
    auto r = build("delay: {side: response}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "delay: 'duration' is required");
    CHECK(r.status().mark().value_or(idemproof::SourceMark{}).line == 1);
  }
  SECTION("bad enumeration and bad duration") {
    CHECK(build("drop-response: {mode: vanish}").status().ToString() ==
          "1:23: drop-response.mode: expected close or hold, got 'vanish'");
    CHECK(build("delay: {duration: 10 parsecs}").status().message().find("not a duration") != std::string::npos);
  }
  SECTION("unknown key inside match") {
    auto r = build("reset: {match: {verb: GET}}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "reset.match: unknown option 'verb'");
  }
}

TEST_CASE("first N fires on the first N matching requests only", "[injectors][selector]") {
  FaultSelector s = selector("{first: 2}");
  std::vector<bool> fired;
  for (int i = 0; i < 5; ++i) fired.push_back(s.select("GET", "/x"));
  CHECK(fired == std::vector<bool>{true, true, false, false, false});
  CHECK(s.counters().seen == 5);
  CHECK(s.counters().matched == 5);
  CHECK(s.counters().injected == 2);
}

TEST_CASE("every k-th fires on matches k, 2k, ...", "[injectors][selector]") {
  FaultSelector s = selector("{every: 3}");
  std::vector<int> fired_at;
  for (int i = 1; i <= 9; ++i) {
    if (s.select("GET", "/x")) fired_at.push_back(i);
  }
  CHECK(fired_at == std::vector<int>{3, 6, 9});
  FaultSelector limited = selector("{every: 2, limit: 1}");
  int n = 0;
  for (int i = 0; i < 8; ++i) n += limited.select("GET", "/") ? 1 : 0;
  CHECK(n == 1);
}

TEST_CASE("match by method and path (exact, prefix, query ignored)", "[injectors][selector]") {
  FaultSelector s = selector("{match: {method: POST, path: /orders}}");
  CHECK(s.select("POST", "/orders"));
  CHECK(s.select("POST", "/orders?x=1"));
  CHECK_FALSE(s.select("GET", "/orders"));
  CHECK_FALSE(s.select("POST", "/orders/7"));
  CHECK(s.counters().seen == 4);
  CHECK(s.counters().matched == 2);
  FaultSelector prefix = selector("{match: {path: '/orders*'}}");
  CHECK(prefix.select("DELETE", "/orders/7"));
  CHECK_FALSE(prefix.select("DELETE", "/stock"));
}

TEST_CASE("seeded probability: same seed, same faults, the rate follows p", "[injectors][selector]") {
  auto run = [](std::uint64_t seed) {
    FaultSelector s = selector("{probability: 0.3, seed: " + std::to_string(seed) + "}");
    std::vector<bool> out;
    for (int i = 0; i < 1000; ++i) out.push_back(s.select("GET", "/"));
    return out;
  };
  const auto a = run(42), b = run(42), c = run(43);
  CHECK(a == b);
  CHECK(a != c);
  const auto hits = std::count(a.begin(), a.end(), true);
  CHECK(hits > 200);  // the seed is fixed, so these bounds are checked, not sampled
  CHECK(hits < 400);
}

TEST_CASE("a proxy fault needs a proxy, never_fired names idle injectors", "[injectors][registry]") {
  auto hedge = build("hedge: {name: twice}");
  REQUIRE(hedge.ok());
  Status st = hedge.value()->start(InjectorContext{});
  CHECK(st.code() == StatusCode::kInvalidConfig);
  CHECK(never_fired({hedge.value()->counters()}) == std::vector<std::string>{"hedge/twice"});
}
