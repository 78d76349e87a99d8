// Target file -> TargetDescription, strictly (see model/target.h): the root
// map's keys, then one parser per section (model/target/SECTION.cpp, beside
// the section's type), then the checks that need the whole file.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/target.h"
#include "model/target/parse/load_context.h"
#include "model/template.h"
#include "model/tls_settings.h"
#include "model/yaml_reader.h"

namespace idemproof {
namespace {

// {{target_dir}} (the target file's folder, absolute) and {{env.NAME}}
// (the harness's environment) in every value of the file, once, here: a
// service shipped beside its target file starts from there, and an unset
// variable is an error at its node, never an empty string.
void ExpandFileVariables(TargetLoadContext& cx, YAML::Node node) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) ExpandFileVariables(cx, it->second);
    return;
  }
  if (node.IsSequence()) {
    for (auto item : node) ExpandFileVariables(cx, item);
    return;
  }
  if (!node.IsScalar() || node.Scalar().find("{{") == std::string::npos) return;
  const std::string dir = std::filesystem::absolute(std::filesystem::path(cx.r.file())).parent_path().string();
  auto expanded = ExpandSome(node.Scalar(), [&](const std::string& name) -> Result<std::optional<std::string>> {
    if (name == kTargetDirVariable) return std::optional<std::string>(dir);
    if (name.rfind("env.", 0) != 0) return std::optional<std::string>();
    const char* value = std::getenv(name.substr(4).c_str());
    if (value == nullptr)
      return Status::InvalidArgument("'{{" + name + "}}': the environment variable " + name.substr(4) +
                                     " is not set (set it, or write the value here)");
    return std::optional<std::string>(value);
  });
  if (!expanded.ok()) cx.r.Fail(node, expanded.status().message());
  node = *expanded;
}

// 4194304, "512KiB", "4MiB", "1GiB": at least 1 KiB, at most 1 GiB.
std::uint64_t ByteSize(TargetLoadContext& cx, const YAML::Node& node, const std::string& what) {
  const std::string text = cx.r.String(node, what);
  std::size_t digits = 0;
  while (digits < text.size() && digits < 12 && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  std::uint64_t scale = unit.empty() || unit == "B" ? 1 : unit == "KiB" ? 1 << 10 : unit == "MiB" ? 1 << 20
                      : unit == "GiB" ? 1 << 30 : 0;
  if (digits == 0 || scale == 0) cx.r.Fail(node, what + ": expected bytes, or a number with B, KiB, MiB or GiB");
  const std::uint64_t n = std::stoull(text.substr(0, digits)) * scale;
  if (n < 1024 || n > (std::uint64_t{1} << 30)) cx.r.Fail(node, what + ": must be between 1KiB and 1GiB");
  return n;
}

// `isolation: namespace | process`.
bool ProcessIsolation(TargetLoadContext& cx, const YAML::Node& node) {
  const std::string isolation = cx.r.String(node, "isolation");
  if (isolation != "namespace" && isolation != "process")
    cx.r.Fail(node, "isolation: '" + isolation + "' is not one of namespace, process");
  return isolation == "process";
}

// Every templated string names only variables it can see: the built-in
// ones, the services' and egress', the actions' captures, {{slow_ms}} with
// a lease, and its section's own (batch).
void CheckTemplates(TargetLoadContext& cx, const TargetDescription& t) {
  std::vector<std::string> known = BuiltinTemplateVariables();
  for (const auto& [name, svc] : t.services)
    for (const char* part : {".url", ".port", ".pid"}) known.push_back("services." + name + part);
  for (const auto& [name, e] : t.egress)
    for (const char* part : {".url", ".port", ".address"})
      if (std::string(part) != (e.tcp ? ".url" : ".address")) known.push_back("egress." + name + part);
  for (const auto& [name, a] : t.actions)
    for (const auto& [var, path] : a.capture) known.push_back(var);
  // {{slow_ms}}: the declared lease x 1.5 in ms (a request slower than its lease).
  if (t.idempotency.lease) known.push_back(kSlowMsVariable);
  for (const auto& use : cx.templates) {
    if (!t.idempotency.lease) {
      auto vars = TemplateVariables(use.text);
      if (vars.ok() && std::find(vars->begin(), vars->end(), kSlowMsVariable) != vars->end())
        cx.r.Fail(use.node, std::string("'{{") + kSlowMsVariable +
                                "}}' is the declared lease x 1.5 in ms: declare idempotency.lease");
    }
    std::vector<std::string> k = known;
    k.insert(k.end(), use.extra.begin(), use.extra.end());
    cx.r.CheckTemplate(use.node, use.text, k);
  }
}

// errors: problem+json | any. true for problem+json.
bool ErrorFormat(TargetLoadContext& cx, const YAML::Node& node) {
  const std::string v = cx.r.String(node, "errors");
  if (v != "problem+json" && v != "any")
    cx.r.Fail(node, "errors must be problem+json or any, found '" + v + "'" +
                        yaml::DidYouMean(v, {"problem+json", "any"}));
  return v == "problem+json";
}

TargetDescription Load(TargetLoadContext& cx, const std::string& text) {
  const YAML::Node root = cx.r.Load(text);
  if (!root.IsDefined() || root.IsNull()) cx.r.Fail(root, "target file is empty");
  ExpandFileVariables(cx, root);
  cx.r.CheckKeys(root,
                 {"name", "base_url", "start", "reset", "idempotency", "request_timeout", "headers",
                  "compare_headers", "volatile", "actions", "probes", "hooks", "batch", "arrival_header",
                  "services", "messages", "broker", "max_body", "max_kept", "egress", "profile", "callers", "isolation",
                  "instances", "balance", "shared_store", "http", "trace", "tls", "errors"},
                 "target");
  TargetDescription t;
  t.file = cx.r.file();
  t.name = cx.r.String(cx.r.Required(root, "name", "target"), "name");
  if (root["start"]) t.start = ParseStart(cx, root["start"]);
  ParseInstances(cx, root, t);
  if (root["reset"]) t.reset = cx.Call(root["reset"], "reset", {});
  if (root["isolation"]) t.process_isolation = ProcessIsolation(cx, root["isolation"]);
  t.idempotency = ParseContract(cx, root["profile"], root["idempotency"]);
  if (root["request_timeout"]) t.request_timeout = cx.r.Timeout(root["request_timeout"], "request_timeout");
  if (root["max_body"]) t.max_body = ByteSize(cx, root["max_body"], "max_body");
  if (root["max_kept"]) t.max_kept = ByteSize(cx, root["max_kept"], "max_kept");
  if (root["headers"]) t.headers = cx.Headers(root["headers"], "headers");
  if (root["compare_headers"]) t.compare_headers = cx.r.StringList(root["compare_headers"], "compare_headers");
  if (root["arrival_header"]) t.arrival_header = cx.HeaderName(root["arrival_header"], "arrival_header");
  if (root["errors"]) t.errors_problem_json = ErrorFormat(cx, root["errors"]);
  ParseHttpSettings(cx.r, root, t.http);
  ParseTlsSettings(cx.r, root, t.file, t.tls);
  if (root["volatile"]) t.volatile_paths = cx.Paths(root["volatile"], "volatile");
  const YAML::Node actions = cx.r.Required(root, "actions", "target");
  ParseActions(cx, actions, t);
  if (root["probes"]) ParseProbes(cx, root["probes"], t);
  if (root["hooks"]) ParseHooks(cx, root["hooks"], t);
  if (root["batch"]) t.batch = ParseBatch(cx, root["batch"]);
  if (root["services"]) ParseServices(cx, root["services"], t);
  if (root["messages"]) ParseMessages(cx, root["messages"], t);
  if (root["broker"]) t.broker = ParseBroker(cx, root["broker"]);
  if (root["egress"]) ParseEgress(cx, root["egress"], t);
  if (root["callers"]) ParseCallers(cx, root["callers"], t);
  // What a section names may be declared by a later one: checked now, in
  // this order, so the first error a file gets stays the same.
  CheckEgressUses(cx, t);
  CheckRoleOf(cx, t);
  AddFromAnswerCaptures(t);
  CheckCallerUses(cx, t);
  CheckActionsSendKey(cx, actions, t);
  CheckRequestBases(cx, t);
  CheckTemplates(cx, t);
  CheckActionRoles(cx, actions, t);
  return t;
}

}  // namespace

Result<TargetDescription> ParseTarget(const std::string& yaml_text, const std::string& file,
                                      const std::string& profile) {
  try {
    TargetLoadContext cx(file, profile);
    return Load(cx, yaml_text);
  } catch (const yaml::ConfigError& e) {
    return e.status;
  } catch (const YAML::Exception& e) {
    SourceMark m{file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    return Status::InvalidConfig(e.msg, m);
  }
}

Result<TargetDescription> LoadTargetFile(const std::string& path, const std::string& profile) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read target file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseTarget(ss.str(), path, profile);
}

}  // namespace idemproof
