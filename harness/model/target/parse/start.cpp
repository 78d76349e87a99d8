// `start:` (start.h).
#include "model/pattern.h"
#include "model/target/parse/load_context.h"
#include "model/target/start.h"

namespace idemproof {

StartCommand ParseStart(TargetLoadContext& cx, const YAML::Node& node) {
  StartCommand s;
  s.mark = cx.r.MarkOf(node);
  if (node.IsSequence()) {  // shorthand: start: [argv...]
    s.argv = cx.Argv(node, "start");
    return s;
  }
  cx.r.CheckKeys(node,
               {"argv", "env", "cwd", "port_from_stdout", "free_port", "flaw_args", "ready", "start_timeout",
                "stop_timeout"},
               "start");
  s.argv = cx.Argv(cx.r.Required(node, "argv", "start"), "start.argv");
  if (node["env"]) {
    for (const auto& [k, v] : cx.r.StringPairs(node["env"], "start.env")) s.env[k] = v;
    for (auto it = node["env"].begin(); it != node["env"].end(); ++it)
      cx.templates.push_back({it->second, it->second.Scalar(), cx.section_variables});
  }
  if (node["cwd"]) s.cwd = cx.Templated(node["cwd"], "start.cwd");
  if (node["port_from_stdout"]) {
    s.port_from_stdout = cx.r.String(node["port_from_stdout"], "start.port_from_stdout");
    auto re = Pattern::Compile(s.port_from_stdout);
    if (!re.ok()) cx.r.Fail(node["port_from_stdout"], "start.port_from_stdout: " + re.status().message());
    if (re->groups() < 1) cx.r.Fail(node["port_from_stdout"], "start.port_from_stdout needs a capture group for the port");
  }
  if (node["free_port"]) s.free_port = cx.r.Bool(node["free_port"], "start.free_port");
  if (s.free_port && !s.port_from_stdout.empty())
    cx.r.Fail(node["free_port"], "start: give free_port or port_from_stdout, not both");
  if (node["flaw_args"]) s.flaw_args = cx.Argv(node["flaw_args"], "start.flaw_args");
  if (node["ready"]) {
    YAML::Node rn = node["ready"];
    cx.r.CheckKeys(rn, {"request", "status", "timeout"}, "start.ready");
    ReadinessCheck rc;
    rc.request.mark = cx.r.MarkOf(rn);
    // No default path: which request says "ready" is the target's to declare.
    if (rn["request"]) {
      rc.request = cx.Request(rn["request"], "start.ready.request");
    } else {
      cx.r.Fail(rn, "start.ready needs a request (the target's own readiness check)");
    }
    if (rn["status"]) rc.status = cx.r.HttpStatus(rn["status"], "start.ready.status");
    if (rn["timeout"]) rc.timeout = cx.r.Timeout(rn["timeout"], "start.ready.timeout");
    s.ready = rc;
  }
  if (node["start_timeout"]) s.start_timeout = cx.r.Timeout(node["start_timeout"], "start.start_timeout");
  if (node["stop_timeout"]) s.stop_timeout = cx.r.DurationOf(node["stop_timeout"], "start.stop_timeout");
  return s;
}

}  // namespace idemproof
