// `start:` of the target file (and of each `services:` entry): how to start
// a process and tell it is ready.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/status.h"
#include "model/target/request.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;  // model/target/load_context.h

// How to tell the target is ready after a start.
struct ReadinessCheck {
  RequestTemplate request;       // required: the target's own readiness check
  int status = 200;              // the answer that means "ready"
  Duration timeout = std::chrono::seconds(10);
};

// How to start the target (absent = it is already running at base_url).
struct StartCommand {
  std::vector<std::string> argv;          // templated; never through a shell
  std::map<std::string, std::string> env; // added to the harness's environment
  std::string cwd;                        // templated; empty = the run directory
  std::string port_from_stdout;           // RE2 regex (model/pattern.h), group 1 = the port; empty = none
  // The harness picks a free loopback port before each start and passes it
  // as {{port}} (for a service that cannot take --port 0). Not with port_from_stdout.
  bool free_port = false;
  std::vector<std::string> flaw_args;     // appended when a flaw is requested ({{flaw}})
  std::optional<ReadinessCheck> ready;
  Duration start_timeout = std::chrono::seconds(10);  // for port_from_stdout
  Duration stop_timeout = std::chrono::seconds(5);    // SIGTERM, then SIGKILL
  SourceMark mark;
};

// Reads `start:` (or a service's start keys): `[argv...]` or {argv, env,
// cwd, port_from_stdout, free_port, flaw_args, ready, start_timeout, stop_timeout}.
StartCommand ParseStart(TargetLoadContext& cx, const YAML::Node& node);

}  // namespace idemproof
