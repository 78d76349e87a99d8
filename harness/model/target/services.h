// `services:` of the target file: helper processes started before the target.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <string>

#include "base/status.h"
#include "base/tls_options.h"
#include "model/target/start.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// A helper process the harness starts before the target and stops after it
// (a payment provider stub, a broker...), one per scenario run. Its templates
// see the built-in variables, `port` being its own; the target's templates see
// {{services.NAME.url}}, {{services.NAME.port}} and {{services.NAME.pid}}.
struct ServiceDescription {
  std::string name;
  StartCommand start;         // argv, env, cwd, port_from_stdout, free_port, ready, timeouts (flaw_args unused)
  std::string ready_stdout;   // RE2 regex: ready once its stdout matches; "" = not checked
  std::string url = "http://127.0.0.1:{{port}}";  // templated: {{services.NAME.url}}
  TlsOptions tls;  // `tls:`: how an https:// url is checked (its ready request; an egress to it)
  SourceMark mark;
};

// Reads `services:` into t.services.
void ParseServices(TargetLoadContext& cx, const YAML::Node& services, TargetDescription& t);
// Once the file is read: every request's `base:` names a declared service.
void CheckRequestBases(TargetLoadContext& cx, const TargetDescription& t);

}  // namespace idemproof
