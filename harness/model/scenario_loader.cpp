// Scenario file -> Scenario, strictly (see scenario.h).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <re2/re2.h>

#include "model/capabilities.h"
#include "model/scenario.h"
#include "model/scenario_node.h"
#include "model/step_kind.h"
#include "model/step_parser.h"
#include "model/target/instances.h"
#include "model/yaml_reader.h"

namespace idemproof {
namespace {

using yaml::Reader;

std::vector<std::string> KindNames() { return StepKinds().Names(); }

const ScenarioParameter* FindParameter(const Scenario& s, const std::string& name) {
  for (const auto& p : s.parameters)
    if (p.name == name) return &p;
  return nullptr;
}

class ScenarioLoader {
 public:
  ScenarioLoader(const std::string& file, const ScenarioVocabulary& vocab, bool used_elsewhere)
      : r_(file), vocab_(vocab), used_elsewhere_(used_elsewhere) {}

  Scenario Load(const std::string& text) { return LoadRoot(r_.Load(text)); }

  Scenario LoadRoot(const YAML::Node& root) {
    if (!root.IsDefined() || root.IsNull()) r_.Fail(root, "scenario file is empty");
    r_.CheckKeys(root,
                 {"name", "layer", "hunts", "for_each", "steps", "faults", "expect", "min_instances", "max_instances"},
                 "scenario");
    Scenario s;
    StepParser parser(r_, s);
    parser_ = &parser;
    s.file = r_.file();
    s.mark = r_.MarkOf(root);
    if (root["min_instances"]) {
      const long long n = r_.Int(root["min_instances"], "min_instances");
      if (n < 1 || n > kMostInstances)
        r_.Fail(root["min_instances"], "min_instances must be between 1 and " + std::to_string(kMostInstances) +
                                           ", found " + std::to_string(n));
      s.min_instances = static_cast<int>(n);
    }
    if (root["max_instances"]) {
      const long long n = r_.Int(root["max_instances"], "max_instances");
      if (n < s.min_instances || n > kMostInstances)
        r_.Fail(root["max_instances"], "max_instances must be between min_instances (" +
                                           std::to_string(s.min_instances) + ") and " + std::to_string(kMostInstances) +
                                           ", found " + std::to_string(n));
      s.max_instances = static_cast<int>(n);
    }
    s.name = root["name"] ? r_.String(root["name"], "name") : std::filesystem::path(s.file).stem().string();
    YAML::Node layer = r_.Required(root, "layer", "scenario");
    auto l = ParseLayer(r_.String(layer, "layer"));
    if (!l.ok()) r_.Fail(layer, l.status().message());
    s.layer = *l;
    s.hunts = r_.String(r_.Required(root, "hunts", "scenario"), "hunts");
    if (root["for_each"]) Parameters(root["for_each"], s);
    if (root["faults"]) {
      r_.ExpectMap(root["faults"], "faults");
      for (auto it = root["faults"].begin(); it != root["faults"].end(); ++it) {
        FaultDeclaration f = Fault(it->first, it->second);
        s.faults[f.name] = f;
      }
    }
    YAML::Node steps = r_.Required(root, "steps", "scenario");
    if (!steps.IsSequence() || steps.size() == 0) r_.Fail(steps, "steps must be a non-empty list");
    for (const auto& item : steps) s.steps.push_back(StepOf(item));
    for (std::size_t i = 0; i < s.steps.size(); ++i) s.steps[i].kind->AfterLoad(parser, s, i, steps);
    YAML::Node expect = r_.Required(root, "expect", "scenario");
    if (!expect.IsSequence() || expect.size() == 0)
      r_.Fail(expect, "expect must be a non-empty list of oracles");
    for (const auto& item : expect) s.expect.push_back(Oracle(item));
    for (const auto& p : s.parameters) {
      if (!used_elsewhere_ && !s.ReferencesParameter(p.name))
        r_.FailAt(p.mark, "parameter '" + p.name + "' is never used as $" + p.name);
    }
    parser_ = nullptr;
    return s;
  }

 private:
  std::string Symbol(const YAML::Node& node, const std::string& what) { return parser_->Symbol(node, what); }

  // for_each: {NAME: {role: ROLE, needs: [...], of: EARLIER}}
  void Parameters(const YAML::Node& node, Scenario& s) {
    r_.ExpectMap(node, "for_each");
    for (auto it = node.begin(); it != node.end(); ++it) {
      ScenarioParameter p;
      p.name = r_.String(it->first, "parameter name");
      p.mark = r_.MarkOf(it->first);
      static const RE2 kName("[A-Za-z_][A-Za-z0-9_]*", RE2::Latin1);
      if (!RE2::FullMatch(p.name, kName))
        r_.Fail(it->first, "bad parameter name '" + p.name + "' (letters, digits, _)");
      if (FindParameter(s, p.name)) r_.Fail(it->first, "parameter '" + p.name + "' is declared twice");
      const std::string what = "parameter '" + p.name + "'";
      const YAML::Node body = it->second;
      r_.ExpectMap(body, what);
      r_.CheckKeys(body, {"role", "needs", "of"}, what);
      const YAML::Node role = r_.Required(body, "role", what);
      p.role = r_.String(role, what + ".role");
      if (!IsActionRole(p.role) && !IsProbeRole(p.role) && !IsMessageRole(p.role) && p.role != kAnyActionRole) {
        std::vector<std::string> roles = ActionRoleNames();
        roles.push_back(kAnyActionRole);
        roles.insert(roles.end(), ProbeRoleNames().begin(), ProbeRoleNames().end());
        roles.push_back(kMessageRole);
        std::string known;
        for (const auto& k : roles) known += (known.empty() ? "" : ", ") + k;
        r_.Fail(role, what + ": unknown role '" + p.role + "'" + yaml::DidYouMean(p.role, roles) + "; known: " + known);
      }
      if (body["needs"]) {
        if (p.is_probe() || p.is_message())
          r_.Fail(body["needs"], what + ": a " + (p.is_probe() ? "probe" : "message") + " parameter has no 'needs'");
        p.needs = r_.StringList(body["needs"], what + ".needs");
        std::size_t i = 0;
        for (const auto& item : body["needs"]) {
          const std::string& need = p.needs[i++];
          if (need != "records" && need != "other_payload" && need != "json_body" && need != "calls")
            r_.Fail(item, what + ".needs: unknown need '" + need + "'" +
                              yaml::DidYouMean(need, {"records", "other_payload", "json_body", "calls"}) +
                              " (records, other_payload, json_body, calls)");
        }
      }
      if (body["of"]) {
        p.of = r_.String(body["of"], what + ".of");
        const ScenarioParameter* of = FindParameter(s, p.of);
        // A probe of role applied is of a message (or callback action)
        // parameter; anything else of an action parameter.
        const bool of_message = p.role == kAppliedRole;
        const bool fits = of != nullptr && !of->is_probe() &&
                          (of_message ? of->is_message() || of->role == "callback" : !of->is_message());
        if (!fits)
          r_.Fail(body["of"], what + ".of: '" + p.of + "' is not " +
                                  (of_message ? "a message (or callback action)" : "an action") +
                                  " parameter declared before it");
      }
      s.parameters.push_back(p);
    }
  }


  FaultDeclaration Fault(const YAML::Node& key, const YAML::Node& body) {
    FaultDeclaration f;
    f.name = Symbol(key, "fault name");
    f.mark = r_.MarkOf(key);
    r_.ExpectMap(body, "fault '" + f.name + "'");
    YAML::Node kind = r_.Required(body, "kind", "fault '" + f.name + "'");
    f.kind = r_.String(kind, "fault '" + f.name + "'.kind");
    if (vocab_.fault_kinds) {
      const auto& kinds = *vocab_.fault_kinds;
      if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) {
        std::string known;
        for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + k;
        r_.Fail(kind, "unknown fault kind '" + f.kind + "'" + yaml::DidYouMean(f.kind, kinds) + "; known: " + known);
      }
    }
    f.params = nlohmann::json::object();
    for (auto it = body.begin(); it != body.end(); ++it) {
      std::string k = r_.String(it->first, "fault key");
      if (k == "on") {
        // The hop it acts on; the rest of the block is the injector's.
        f.on = r_.String(it->second, "fault '" + f.name + "'.on");
        static const RE2 kEgress("egress\\.[A-Za-z_][A-Za-z0-9_.-]*", RE2::Latin1);
        if (f.on != kStoreHop && f.on != kDownstreamHop && !RE2::FullMatch(f.on, kEgress))
          r_.Fail(it->second, "fault '" + f.name + "'.on must be egress.NAME (a downstream the target declares under 'egress'), store (each egress with protocol: tcp) or downstream (each http egress the scenario's actions call), found '" + f.on + "'");
      } else if (k == "required") {
        f.required = r_.Bool(it->second, "fault '" + f.name + "'.required");
      } else if (k != "kind") {
        f.params[k] = r_.Json(it->second);
      }
    }
    return f;
  }

  Step StepOf(const YAML::Node& node) {
    Step st;
    st.mark = r_.MarkOf(node);
    const StepKindSpec* kind = nullptr;
    if (node.IsScalar()) {
      kind = StepKinds().Find(node.Scalar());
      if (kind == nullptr || !kind->bare()) {
        if (kind != nullptr) r_.Fail(node, "step '" + node.Scalar() + "' needs a value (e.g. '" + node.Scalar() + ": NAME')");
        r_.Fail(node, "unknown step kind '" + node.Scalar() + "'" + yaml::DidYouMean(node.Scalar(), KindNames()));
      }
      st.kind = kind;
      st.options = kind->NewOptions();
      return st;
    }
    // An empty map ("- {}") has no first key to name.
    if (!node.IsMap() || node.size() == 0)
      r_.Fail(node, "a step must be a map like '{send: ACTION}' or a bare word like 'kill'");
    std::optional<YAML::Node> kind_key;  // see Oracle(): never assign a Node
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string k = r_.String(it->first, "step key");
      if (const StepKindSpec* ki = StepKinds().Find(k)) {
        if (kind != nullptr) r_.Fail(it->first, "a step has exactly one kind, found '" + std::string(kind->name()) + "' and '" + k + "'");
        kind = ki;
        kind_key.emplace(it->first);
      }
    }
    if (kind == nullptr) {
      std::string first = node.begin()->first.Scalar();
      std::string known;
      for (const auto& n : KindNames()) known += (known.empty() ? "" : ", ") + n;
      r_.Fail(node.begin()->first, "unknown step kind '" + first + "'" + yaml::DidYouMean(first, KindNames()) +
                                       "; a step is one of: " + known);
    }
    st.kind = kind;
    st.options = kind->NewOptions();
    std::string what = std::string("step '") + kind->name() + "'";
    std::vector<std::string> allowed = kind->options();
    allowed.push_back(kind->name());
    r_.CheckKeys(node, allowed, what);
    kind->Parse(*parser_, node, node[kind->name()], *kind_key, st);
    if (node["after"]) st.after = r_.DurationOf(node["after"], what + ".after");
    if (node["label"]) st.label = r_.String(node["label"], what + ".label");
    if (node["as"]) st.label = Symbol(node["as"], what + ".as");
    return st;
  }

  OracleSpec Oracle(const YAML::Node& node) {
    OracleSpec spec;
    spec.mark = r_.MarkOf(node);
    if (!node.IsScalar() && !(node.IsMap() && node.size() == 1))
      r_.Fail(node, "an expectation is a name or a one-key map {NAME: {params}}");
    // yaml-cpp's Node::operator= rebinds the node it was copied from, so
    // never assign Nodes: construct each one once.
    const YAML::Node name_node = node.IsMap() ? node.begin()->first : node;
    const YAML::Node params = node.IsMap() ? node.begin()->second : YAML::Node();
    spec.name = r_.String(name_node, "oracle name");
    const OracleSignature* sig = vocab_.FindOracle(spec.name);
    if (sig == nullptr) {
      std::vector<std::string> names;
      std::string known;
      for (const auto& o : vocab_.oracles) {
        names.push_back(o.name);
        known += (known.empty() ? "" : ", ") + o.name;
      }
      r_.Fail(name_node, "unknown oracle '" + spec.name + "'" + yaml::DidYouMean(spec.name, names) + "; known: " + known);
    }
    std::string what = "oracle '" + spec.name + "'";
    std::vector<std::string> param_names;
    for (const auto& p : sig->params) param_names.push_back(p.name);
    if (params.IsDefined() && !params.IsNull()) {
      if (param_names.empty() && !(params.IsMap() && params.size() == 0))
        r_.Fail(params, what + " takes no parameters");
      r_.CheckKeys(params, param_names, what + " parameters");
      for (const auto& p : sig->params) {
        YAML::Node v = params[p.name];
        if (!v.IsDefined()) continue;
        std::string pw = what + " parameter '" + p.name + "'";
        switch (p.type) {
          case ParamType::kString:
            spec.params[p.name] = r_.String(v, pw);
            if (v.Scalar().rfind(kParameterSigil, 0) == 0) parser_->CheckReference(v, v.Scalar(), pw, -1);
            break;
          case ParamType::kInt: spec.params[p.name] = r_.Int(v, pw); break;
          case ParamType::kBool: spec.params[p.name] = r_.Bool(v, pw); break;
          case ParamType::kDuration:
            r_.DurationOf(v, pw);
            spec.params[p.name] = v.Scalar();
            break;
          case ParamType::kStringList:
            spec.params[p.name] = r_.StringList(v, pw);
            for (const auto& item : v)
              if (item.Scalar().rfind(kParameterSigil, 0) == 0) parser_->CheckReference(item, item.Scalar(), pw, -1);
            break;
        }
      }
    }
    for (const auto& p : sig->params) {
      if (p.required && !spec.params.contains(p.name))
        r_.Fail(node, what + ": missing required parameter '" + p.name + "'");
    }
    return spec;
  }

  Reader r_;
  const ScenarioVocabulary& vocab_;
  bool used_elsewhere_;  // parameters may be used outside steps and expect
  StepParser* parser_ = nullptr;  // the one LoadRoot lends the steps (spawned instances, jobs)
};

}  // namespace

namespace {
// Runs `load` on a ScenarioLoader, its errors as a Status.
template <typename Fn>
Result<Scenario> Loaded(const std::string& file, const ScenarioVocabulary& vocabulary, bool parameters_used_elsewhere,
                        Fn load) {
  try {
    ScenarioLoader loader(file, vocabulary, parameters_used_elsewhere);
    return load(loader);
  } catch (const yaml::ConfigError& e) {
    return e.status;
  } catch (const YAML::Exception& e) {
    SourceMark m{file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    return Status::InvalidConfig(e.msg, m);
  }
}
}  // namespace

std::string StepParser::Symbol(const YAML::Node& node, const std::string& what) {
  std::string v = r_.String(node, what);
  static const RE2 kSym("[A-Za-z0-9_.-]+", RE2::Latin1);
  if (!RE2::FullMatch(v, kSym)) r_.Fail(node, what + ": bad name '" + v + "' (letters, digits, _ . -)");
  return v;
}

std::string StepParser::NameOrReference(const YAML::Node& node, const std::string& what, bool probe) {
  const std::string v = r_.String(node, what);
  if (v.empty() || v[0] != kParameterSigil) return Symbol(node, what);
  CheckReference(node, v, what, probe ? 1 : 0);
  return v;
}

std::string StepParser::MessageOrReference(const YAML::Node& node, const std::string& what) {
  const std::string v = r_.String(node, what);
  if (v.empty() || v[0] != kParameterSigil) return Symbol(node, what);
  CheckReference(node, v, what, 2);
  return v;
}

void StepParser::CheckReference(const YAML::Node& node, const std::string& ref, const std::string& what, int kind) {
  const std::string name = ref.substr(1);
  const ScenarioParameter* p = FindParameter(scenario_, name);
  if (p == nullptr) {
    std::vector<std::string> declared;
    for (const auto& q : scenario_.parameters) declared.push_back(q.name);
    r_.Fail(node, what + ": '" + ref + "' names no parameter declared under 'for_each'" +
                      yaml::DidYouMean(name, declared));
  }
  if (kind == 0 && p->is_probe()) r_.Fail(node, what + ": '" + ref + "' is a probe parameter, not an action");
  if (kind == 0 && p->is_message()) r_.Fail(node, what + ": '" + ref + "' is a message parameter, not an action");
  if (kind == 1 && !p->is_probe()) r_.Fail(node, what + ": '" + ref + "' is an action parameter, not a probe");
  if (kind == 2 && !p->is_message()) r_.Fail(node, what + ": '" + ref + "' is not a message parameter (role message)");
}

YAML::Node StepParser::RequiredValue(const YAML::Node& v, const YAML::Node& key, const std::string& what,
                                     const std::string& expected) {
  if (!v.IsDefined() || v.IsNull()) r_.Fail(key, what + " needs " + expected);
  return v;
}

// An instance named by a step must be the target's ("main", "instance-N":
// whether the target has it is the bind stage's question) or spawned by an
// earlier step.
void StepParser::KnownInstance(const YAML::Node& node, const std::string& name, const std::string& what) {
  if (TargetInstanceIndex(name) || instances_.count(name)) return;
  std::vector<std::string> known(instances_.begin(), instances_.end());
  known.push_back("main");
  r_.Fail(node, what + ": instance '" + name + "' is not started by an earlier 'spawn' step, nor a target " +
                    "instance (main, instance-2, ...)" + yaml::DidYouMean(name, known));
}

int StepParser::Repeat(const YAML::Node& node, const std::string& what) {
  const long long n = r_.Int(node, what);
  if (n < 1 || n > 10000) r_.Fail(node, what + " must be between 1 and 10000");
  return static_cast<int>(n);
}

Duration StepParser::Every(const YAML::Node& node, const std::string& what, bool* retry_after) {
  *retry_after = node.IsScalar() && node.Scalar() == "retry_after";
  if (*retry_after) return std::chrono::seconds(1);  // the stand-in when an answer gives none
  return r_.DurationOf(node, what);
}

std::string StepParser::Instance(const YAML::Node& node, const std::string& what, bool places_request) {
  const std::string instance = Symbol(node, what + ".instance");
  if (instance == kOtherInstance && !places_request)
    r_.Fail(node, what + ".instance: 'other' places a request (send, burst); name the instance");
  if (instance != kOtherInstance) KnownInstance(node, instance, what);
  return instance;
}

Result<Scenario> ParseScenario(const std::string& yaml_text, const std::string& file,
                               const ScenarioVocabulary& vocabulary, bool parameters_used_elsewhere) {
  return Loaded(file, vocabulary, parameters_used_elsewhere,
                [&](ScenarioLoader& loader) { return loader.Load(yaml_text); });
}

Result<Scenario> ParseScenarioNode(const YAML::Node& root, const std::string& file,
                                   const ScenarioVocabulary& vocabulary, bool parameters_used_elsewhere) {
  return Loaded(file, vocabulary, parameters_used_elsewhere,
                [&](ScenarioLoader& loader) { return loader.LoadRoot(root); });
}

Result<Scenario> LoadScenarioFile(const std::string& path, const ScenarioVocabulary& vocabulary) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read scenario file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path, vocabulary);
}

}  // namespace idemproof
