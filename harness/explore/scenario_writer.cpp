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

// The step kinds this writer can emit (explore generates no others, and
// writes the fixed steps of a file only when it uses none of the others);
// their YAML key is the model's StepKindName.
bool Writable(StepKind kind) {
  switch (kind) {
    case StepKind::kPublish: return false;
    default: return true;
  }
}

bool IsBare(StepKind kind) {
  return kind == StepKind::kJoin || kind == StepKind::kStart || kind == StepKind::kStop ||
         kind == StepKind::kKill || kind == StepKind::kRestart || kind == StepKind::kPause ||
         kind == StepKind::kResume;
}

Status EmitStep(YAML::Emitter& out, const Step& s) {
  const char* key = StepKindName(s.kind);
  if (!Writable(s.kind)) {
    return Status(StatusCode::kUnsupported,
                  std::string("cannot write step kind ") + StepKindName(s.kind) + " as YAML yet");
  }
  const bool has_common = s.after.count() > 0 || (!s.label.empty() && s.kind != StepKind::kProbe) ||
                          ((s.kind == StepKind::kPause || s.kind == StepKind::kResume) && s.ControlledInstance() != "main");
  if (IsBare(s.kind) && !has_common) {
    out << key;
    return Status::Ok();
  }
  out << YAML::BeginMap;
  switch (s.kind) {
    case StepKind::kSend:
    case StepKind::kBurst:
      out << YAML::Key << key << YAML::Value << s.action;
      out << YAML::Key << "key" << YAML::Value << s.key;
      out << YAML::Key << "biz" << YAML::Value << s.biz;
      if (!s.payloads.empty()) {
        out << YAML::Key << "payload" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (PayloadVariant p : s.payloads) out << PayloadName(p);
        out << YAML::EndSeq;
      } else if (s.payload != PayloadVariant::kDefault) {
        out << YAML::Key << "payload" << YAML::Value << PayloadName(s.payload);
      }
      if (s.kind == StepKind::kSend) {
        if (s.repeat != 1) out << YAML::Key << "repeat" << YAML::Value << s.repeat;
        if (s.every.count() > 0) out << YAML::Key << "every" << YAML::Value << FormatDuration(s.every);
        if (s.until_recovered) out << YAML::Key << "until" << YAML::Value << "recovered";
        if (s.background) out << YAML::Key << "background" << YAML::Value << true;
        if (s.kill_after_answer) out << YAML::Key << "then" << YAML::Value << "kill";
        if (!s.instance.empty()) out << YAML::Key << "instance" << YAML::Value << s.instance;
      } else {
        out << YAML::Key << "n" << YAML::Value << s.n;
        out << YAML::Key << "mode" << YAML::Value << (s.mode == BurstMode::kThreads ? "threads" : "last_byte");
      }
      if (!s.caller.empty()) out << YAML::Key << "caller" << YAML::Value << s.caller;
      if (s.timeout) out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*s.timeout);
      break;
    case StepKind::kWait:
      out << YAML::Key << key << YAML::Value << (s.past_window ? std::string("past_window") : FormatDuration(s.duration));
      break;
    case StepKind::kProbe:
      out << YAML::Key << key << YAML::Value << s.name;
      if (!s.label.empty() && s.label != s.name) out << YAML::Key << "as" << YAML::Value << s.label;
      break;
    case StepKind::kCause:
      out << YAML::Key << key << YAML::Value << s.name;
      if (!s.action.empty()) out << YAML::Key << "action" << YAML::Value << s.action;
      break;
    case StepKind::kHook:
    case StepKind::kFault:
    case StepKind::kHeal:
    case StepKind::kSpawn: out << YAML::Key << key << YAML::Value << s.name; break;
    case StepKind::kRunBatch:
    case StepKind::kRerun:
    case StepKind::kCleanRun:
      out << YAML::Key << key << YAML::Value << s.job;
      if (s.kind != StepKind::kRerun) {
        out << YAML::Key << "from" << YAML::Value << s.from;
        out << YAML::Key << "to" << YAML::Value << s.to;
      }
      if (s.kind == StepKind::kRerun && s.repeat != 1) out << YAML::Key << "repeat" << YAML::Value << s.repeat;
      if (s.fail_after) out << YAML::Key << "fail_after" << YAML::Value << *s.fail_after;
      if (s.kind == StepKind::kCleanRun && !s.of.empty()) out << YAML::Key << "of" << YAML::Value << s.of;
      break;
    case StepKind::kDeliver:
      out << YAML::Key << key << YAML::Value << s.name;
      out << YAML::Key << "message" << YAML::Value << s.message_id;
      out << YAML::Key << "biz" << YAML::Value << s.biz;
      if (s.copies != 1) out << YAML::Key << "copies" << YAML::Value << s.copies;
      if (s.lose_ack != 0) out << YAML::Key << "lose_ack" << YAML::Value << s.lose_ack;
      if (s.every.count() > 0) out << YAML::Key << "every" << YAML::Value << FormatDuration(s.every);
      if (s.max_attempts != 10) out << YAML::Key << "max_attempts" << YAML::Value << s.max_attempts;
      if (s.consumers != std::vector<std::string>{"main"}) {
        out << YAML::Key << "to" << YAML::Value << YAML::Flow << s.consumers;
      }
      if (s.timeout) out << YAML::Key << "timeout" << YAML::Value << FormatDuration(*s.timeout);
      break;
    case StepKind::kPause:
    case StepKind::kResume:
      out << YAML::Key << key << YAML::Value << true;
      if (s.ControlledInstance() != "main") out << YAML::Key << "instance" << YAML::Value << s.instance;
      break;
    default: out << YAML::Key << key << YAML::Value << true; break;  // bare kinds with options
  }
  if (s.after.count() > 0) out << YAML::Key << "after" << YAML::Value << FormatDuration(s.after);
  if (!s.label.empty() && s.kind != StepKind::kProbe) {
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
