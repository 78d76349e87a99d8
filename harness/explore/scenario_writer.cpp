#include "explore/scenario_writer.h"

#include <sstream>

#include <yaml-cpp/yaml.h>

namespace idemproof::explore {

namespace {

// JSON to YAML; strings are quoted so the loader keeps them strings.
void EmitJson(YAML::Emitter& out, const nlohmann::json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      EmitJson(out, it.value());
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : v) EmitJson(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    out << YAML::DoubleQuoted << v.get<std::string>();
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << v.dump();
  }
}

// A step as its kind writes it (harness/steps/), then the keys every kind
// shares; a kind without a writer (publish) is kUnsupported.
Status EmitStep(YAML::Emitter& out, const Step& s) {
  const bool has_common = s.after.count() > 0 || (!s.label.empty() && !s.kind->owns_label());
  if (s.kind->WritesBare(s) && !has_common) {
    out << s.kind->name();
    return Status::Ok();
  }
  out << YAML::BeginMap;
  if (Status written = s.kind->Write(s, out); !written.ok()) return written;
  if (s.after.count() > 0) out << YAML::Key << "after" << YAML::Value << FormatDuration(s.after);
  if (!s.label.empty() && !s.kind->owns_label()) {
    out << YAML::Key << "label" << YAML::Value << YAML::DoubleQuoted << s.label;
  }
  out << YAML::EndMap;
  return Status::Ok();
}

}  // namespace

Result<std::string> WriteScenarioYaml(const Scenario& scenario, const std::string& comment) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << scenario.name;
  out << YAML::Key << "layer" << YAML::Value << LayerName(scenario.layer);
  out << YAML::Key << "hunts" << YAML::Value << YAML::DoubleQuoted << scenario.hunts;
  if (!scenario.faults.empty()) {
    out << YAML::Key << "faults" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, f] : scenario.faults) {
      out << YAML::Key << name << YAML::Value << YAML::BeginMap;
      out << YAML::Key << "kind" << YAML::Value << f.kind;
      // Where it acts: without `on:` a store fault would load as the client
      // hop's fault of that kind (a repro of a store reset failed to load).
      if (!f.on.empty()) out << YAML::Key << "on" << YAML::Value << f.on;
      if (!f.required) out << YAML::Key << "required" << YAML::Value << false;
      for (auto it = f.params.begin(); it != f.params.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        EmitJson(out, it.value());
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "steps" << YAML::Value << YAML::BeginSeq;
  for (const auto& step : scenario.steps) {
    Status s = EmitStep(out, step);
    if (!s.ok()) return s;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "expect" << YAML::Value << YAML::BeginSeq;
  for (const auto& spec : scenario.expect) {
    if (spec.params.empty()) {
      out << spec.name;
    } else {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << spec.name << YAML::Value;
      EmitJson(out, spec.params);
      out << YAML::EndMap;
    }
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
  if (!out.good()) return Status(StatusCode::kInternal, std::string("YAML emitter: ") + out.GetLastError());
  std::ostringstream text;
  std::istringstream lines(comment);
  std::string line;
  while (std::getline(lines, line)) text << "# " << line << "\n";
  text << out.c_str() << "\n";
  return text.str();
}

}  // namespace idemproof::explore
