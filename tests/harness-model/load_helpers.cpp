#include "load_helpers.h"

#include <catch2/catch.hpp>

#include "model/target.h"
#include "oracles/oracle.h"

namespace idemproof::testing {

Scenario ScenarioOf(const std::string& text) {
  auto s = ParseScenario(text, "s.yaml", BuiltinOracles().Vocabulary());
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(s).value();
}

std::string ScenarioError(const std::string& text) {
  auto s = ParseScenario(text, "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kInvalidConfig);
  return s.status().ToString();
}

std::string TargetError(const std::string& text) {
  auto t = ParseTarget(text, "t.yaml");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::kInvalidConfig);
  return t.status().ToString();
}

extern const std::string kDoubleSubmit;
const std::string kDoubleSubmit = R"(name: double-submit
layer: client
hunts: a second click creates a second record
for_each:
  create: {role: create, needs: [records]}
steps:
  - send: $create
  - send: $create
    after: 10ms
expect:
  - one_record: {actions: [$create]}
  - identical_replay
)";

}  // namespace idemproof::testing
