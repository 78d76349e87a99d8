// The JSON Schemas in schemas/ against the loaders' own key tables (issue
// #34 item 3: one source of truth). Loading every shipped target, scenario
// and explore file with Reader::CheckKeys' recorder on collects each place a
// loader checks keys and the keys it allows there; the step kinds' keys come
// from the StepKinds() registry, the oracles' parameters from the oracle
// registry. Each place maps to one definition of a schema, and the test fails
// when a loader allows a key the schema lacks, the schema has a key no loader
// allows, or a loader checks keys at a place this table does not map.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "explore/explore_spec.h"
#include "model/profile.h"
#include "model/scenario.h"
#include "model/step_kind.h"
#include "model/target.h"
#include "model/yaml_reader.h"
#include "oracles/oracle.h"

using namespace idemproof;
namespace fs = std::filesystem;

namespace {

using Keys = std::set<std::string>;

// A checked place, names cut out: "action 'pay' variant 'slow'" -> "action * variant *".
std::string Place(const std::string& what) {
  std::string s = what;
  RE2::GlobalReplace(&s, "'[^']*'", "*");
  RE2::GlobalReplace(&s, "^callers\\.[^.]+", "callers.*");
  RE2::GlobalReplace(&s, "\\.capture\\.[A-Za-z0-9_]+", ".capture.*");
  return s;
}

std::map<std::string, Keys>& Recorded() {
  static std::map<std::string, Keys> recorded;
  return recorded;
}

void Record(const std::string& what, const std::vector<std::string>& allowed) {
  // Steps and oracle parameters are checked against their registries below.
  if (what.rfind("step '", 0) == 0 || what.rfind("oracle '", 0) == 0) return;
  Recorded()[Place(what)].insert(allowed.begin(), allowed.end());
}

// Each checked place -> {schema file, definition ("" = the root object)}.
struct SchemaPlace {
  const char* schema;
  const char* definition;
};
const std::map<std::string, SchemaPlace>& Places() {
  static const std::map<std::string, SchemaPlace> places = {
      {"target", {"target", ""}},
      {"start", {"target", "start"}},
      {"start.ready", {"target", "ready"}},
      {"start.ready.request", {"target", "request"}},
      {"reset", {"target", "call"}},
      {"reset.request", {"target", "request"}},
      {"hook *", {"target", "hook"}},
      {"hook *.request", {"target", "request"}},
      {"idempotency", {"target", "idempotency"}},
      {"idempotency.replay", {"target", "replay"}},
      {"idempotency.retry_after", {"target", "retry_after"}},
      {"idempotency.path_equivalence", {"target", "path_equivalence"}},
      {"action *", {"target", "action"}},
      {"action *.request", {"target", "request"}},
      {"action *.other_payload", {"target", "body"}},
      {"action *.records", {"target", "records"}},
      {"action *.records.request", {"target", "request"}},
      {"action *.capture.*", {"target", "capture"}},
      {"action * variant *", {"target", "variant"}},
      {"probe *", {"target", "probe"}},
      {"probe *.request", {"target", "request"}},
      {"probe *.match", {"target", "egress_match"}},
      {"egress *", {"target", "egress"}},
      {"egress *.tls", {"target", "tls"}},
      {"batch", {"target", "batch"}},
      {"batch.run", {"target", "request"}},
      {"batch.failing_run", {"target", "request"}},
      {"batch.marker", {"target", "batch_marker"}},
      {"batch.markers", {"target", "batch_markers"}},
      {"batch.markers.request", {"target", "request"}},
      {"batch.result", {"target", "batch_result"}},
      {"batch.result.request", {"target", "request"}},
      {"batch variant *", {"target", "variant"}},
      {"service *", {"target", "service"}},
      {"service *.tls", {"target", "tls"}},
      {"message *", {"target", "message"}},
      {"message *.push", {"target", "request"}},
      {"message * variant *", {"target", "message_variant"}},
      {"broker", {"target", "broker"}},
      {"callers.*", {"target", "caller"}},
      {"tls", {"target", "tls"}},
      {"scenario", {"scenario", ""}},
      {"parameter *", {"scenario", "parameter"}},
      {"explore", {"explore", "explore"}},
      {"explore.ops", {"explore", "ops"}},
      {"explore.batch", {"explore", "batch"}},
      {"explore.burst", {"explore", "burst"}},
  };
  return places;
}

nlohmann::json LoadSchema(const std::string& name) {
  std::ifstream in(std::string(IDEMPROOF_SOURCE_DIR) + "/schemas/" + name + ".schema.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// The property names an object schema allows: its `properties` and those of
// its anyOf / oneOf / allOf branches, following local $refs.
void CollectKeys(const nlohmann::json& root, const nlohmann::json& s, Keys& out, int depth = 0) {
  REQUIRE(depth < 16);
  if (!s.is_object()) return;
  if (s.contains("$ref")) {
    const std::string ref = s["$ref"];
    REQUIRE(ref.rfind("#/$defs/", 0) == 0);
    CollectKeys(root, root["$defs"][ref.substr(8)], out, depth + 1);
  }
  if (s.contains("properties"))
    for (const auto& [k, v] : s["properties"].items()) out.insert(k);
  for (const char* branch : {"anyOf", "oneOf", "allOf"})
    if (s.contains(branch))
      for (const auto& b : s[branch]) CollectKeys(root, b, out, depth + 1);
}

Keys SchemaKeys(const nlohmann::json& root, const std::string& definition) {
  Keys keys;
  if (definition.empty()) {
    CollectKeys(root, root, keys);
  } else {
    REQUIRE(root["$defs"].contains(definition));
    CollectKeys(root, root["$defs"][definition], keys);
  }
  return keys;
}

std::string Show(const Keys& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out.empty() ? "(none)" : out;
}

// Keys in `a` but not in `b`.
Keys Minus(const Keys& a, const Keys& b) {
  Keys out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

std::vector<fs::path> YamlFiles(const std::string& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(std::string(IDEMPROOF_SOURCE_DIR) + "/" + folder))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Loads every shipped file with the recorder on (once per process).
void LoadShippedFiles() {
  static bool loaded = false;
  if (loaded) return;
  loaded = true;
  yaml::SetKeyTableRecorder(&Record);
  const ScenarioVocabulary vocabulary = BuiltinOracles().Vocabulary();
  std::vector<fs::path> files = YamlFiles("scenarios");
  for (const auto& path : YamlFiles("tests/schema")) files.push_back(path);  // places no shipped file reaches
  for (const auto& path : files) {
    INFO(path.string());
    const std::string folder = path.parent_path().filename().string();
    if (folder == "targets" || path.string().ends_with(".target.yaml")) {
      auto t = LoadTargetFile(path.string());
      CHECK(t.ok());
    } else if (folder == "explore") {
      auto e = explore::LoadExploreSpec(path.string(), vocabulary);
      CHECK(e.ok());
    } else {
      auto s = LoadScenarioFile(path.string(), vocabulary);
      CHECK(s.ok());
    }
  }
  yaml::SetKeyTableRecorder(nullptr);
}

// IDEMPROOF_SCHEMA_DUMP=1: prints what the registries hold and every checked
// place with its keys, as JSON, to write a schema's new entries from.
void DumpKeyTables() {
  nlohmann::json out;
  for (const auto& [place, keys] : Recorded()) out["places"][place] = keys;
  for (const auto& name : StepKinds().Names()) {
    const StepKindSpec& kind = StepKindNamed(name);
    out["steps"][name] = {{"bare", kind.bare()}, {"options", kind.options()}};
  }
  for (const auto& sig : BuiltinOracles().Vocabulary().oracles) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& p : sig.params)
      params[p.name] = {{"type", static_cast<int>(p.type)}, {"required", p.required}, {"doc", p.doc}};
    out["oracles"][sig.name] = {{"doc", sig.doc}, {"params", params}};
  }
  std::cout << out.dump(1) << "\n";
}

}  // namespace

TEST_CASE("the JSON Schemas allow exactly the keys the loaders allow where they check keys", "[schema]") {
  LoadShippedFiles();
  if (std::getenv("IDEMPROOF_SCHEMA_DUMP") != nullptr) DumpKeyTables();
  REQUIRE(Recorded().size() > 20);
  std::map<std::string, nlohmann::json> schemas = {
      {"target", LoadSchema("target")}, {"scenario", LoadSchema("scenario")}, {"explore", LoadSchema("explore")}};
  // Several places share one definition (every request): compare the union.
  std::map<std::pair<std::string, std::string>, Keys> loader_keys;
  for (const auto& [place, keys] : Recorded()) {
    INFO("a loader checks keys at '" << place << "' (allowing " << Show(keys)
                                     << "), a place tests/schema/schema_drift_test.cpp does not map to a schema");
    auto it = Places().find(place);
    CHECK(it != Places().end());
    if (it == Places().end()) continue;
    loader_keys[{it->second.schema, it->second.definition}].insert(keys.begin(), keys.end());
  }
  for (const auto& [where, keys] : loader_keys) {
    const Keys schema = SchemaKeys(schemas.at(where.first), where.second);
    INFO("schemas/" << where.first << ".schema.json, " << (where.second.empty() ? "the root" : "$defs/" + where.second));
    INFO("keys the loader allows that the schema lacks: " << Show(Minus(keys, schema)));
    INFO("keys the schema has that no loader allows: " << Show(Minus(schema, keys)));
    CHECK(keys == schema);
  }
  // An explore file is a scenario file plus `explore:` (explore_spec.cpp
  // removes it before the scenario loader reads the rest).
  Keys explore_root = SchemaKeys(schemas.at("explore"), "");
  Keys scenario_root = SchemaKeys(schemas.at("scenario"), "");
  scenario_root.insert("explore");
  CHECK(explore_root == scenario_root);
  // A definition no shipped file reached is compared with nothing: say so.
  for (const auto& [place, at] : Places()) {
    INFO("no shipped file makes a loader check keys at '" << place << "'");
    CHECK(Recorded().count(place) == 1);
  }
}

TEST_CASE("the scenario schema has each step kind with exactly its keys, from the step registry", "[schema]") {
  const nlohmann::json schema = LoadSchema("scenario");
  const nlohmann::json& steps = schema["$defs"]["step"]["anyOf"];
  Keys bare_schema;
  std::map<std::string, Keys> kinds_schema;
  for (const auto& branch : steps) {
    if (branch.contains("enum")) {
      for (const auto& name : branch["enum"]) bare_schema.insert(name.get<std::string>());
      continue;
    }
    REQUIRE(branch.contains("required"));
    REQUIRE(branch["required"].size() == 1);
    Keys keys;
    CollectKeys(schema, branch, keys);
    kinds_schema[branch["required"][0].get<std::string>()] = keys;
  }
  Keys bare, names;
  for (const auto& name : StepKinds().Names()) {
    const StepKindSpec& kind = StepKindNamed(name);
    names.insert(name);
    if (kind.bare()) bare.insert(name);
    std::vector<std::string> options = kind.options();
    Keys keys(options.begin(), options.end());
    keys.insert(name);
    INFO("step kind '" << name << "'");
    INFO("keys the registry allows that the schema lacks: " << Show(Minus(keys, kinds_schema[name])));
    INFO("keys the schema has that the kind does not allow: " << Show(Minus(kinds_schema[name], keys)));
    CHECK(keys == kinds_schema[name]);
  }
  Keys in_schema;
  for (const auto& [k, v] : kinds_schema) in_schema.insert(k);
  INFO("step kinds in the schema that no kind registers: " << Show(Minus(in_schema, names)));
  CHECK(Minus(in_schema, names).empty());
  INFO("bare words: registry " << Show(bare) << ", schema " << Show(bare_schema));
  CHECK(bare == bare_schema);
}

TEST_CASE("the scenario schema names every oracle with exactly its parameters, from the oracle registry", "[schema]") {
  const nlohmann::json schema = LoadSchema("scenario");
  const nlohmann::json& oracles = schema["$defs"]["oracle"]["anyOf"];
  Keys plain_schema;
  std::map<std::string, Keys> params_schema;
  for (const auto& branch : oracles) {
    if (branch.contains("enum")) {
      for (const auto& name : branch["enum"]) plain_schema.insert(name.get<std::string>());
      continue;
    }
    REQUIRE(branch["properties"].size() == 1);
    const auto& [name, params] = *branch["properties"].items().begin();
    Keys keys;
    CollectKeys(schema, params, keys);
    params_schema[name] = keys;
  }
  Keys names;
  for (const auto& sig : BuiltinOracles().Vocabulary().oracles) {
    names.insert(sig.name);
    Keys keys;
    for (const auto& p : sig.params) keys.insert(p.name);
    INFO("oracle '" << sig.name << "'");
    CHECK(plain_schema.count(sig.name) == 1);
    INFO("parameters the oracle takes that the schema lacks: " << Show(Minus(keys, params_schema[sig.name])));
    INFO("parameters the schema has that the oracle does not take: " << Show(Minus(params_schema[sig.name], keys)));
    CHECK(params_schema.count(sig.name) == 1);
    CHECK(keys == params_schema[sig.name]);
  }
  INFO("oracles in the schema that the registry lacks: " << Show(Minus(plain_schema, names)));
  CHECK(plain_schema == names);
}


// README.md's "Add an oracle", held: every registered oracle has a rule in
// every semantics profile (else its verdicts name no rule and a finding is
// never a deviation), and its row in docs/scenario-reference.md's oracle
// table; its schema entries are held by the case above.
TEST_CASE("every registered oracle has a rule in every profile and its row in the scenario reference", "[schema]") {
  std::ifstream in(std::string(IDEMPROOF_SOURCE_DIR) + "/docs/scenario-reference.md");
  REQUIRE(in);
  const std::string reference((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto oracles = BuiltinOracles().Vocabulary().oracles;
  REQUIRE(oracles.size() >= 20);
  for (const auto& sig : oracles) {
    INFO("oracle '" << sig.name << "'");
    for (const SemanticsProfile& profile : Profiles()) {
      INFO("profile '" << profile.name << "' (harness/model/profile.cpp)");
      const ProfileRule* rule = profile.RuleFor(sig.name, false);
      CHECK(rule != nullptr);
      if (rule != nullptr) CHECK(rule->id.rfind(profile.name + "/", 0) == 0);
    }
    CHECK(reference.find("\n| `" + sig.name + "` |") != std::string::npos);
  }
}
