// `hooks:` of the target file: named calls that steer the target.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <string>

#include "base/status.h"
#include "model/target/request.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// A named call the scenarios fire to steer the target (chaos control).
// Scenarios ask for a hook by its `role:` (a capability it provides,
// model/capabilities.h: slow_request, heal...); a hook without one takes
// the role its name spells by default (slow_business -> slow_request,
// heal -> heal). The hook with role heal runs at the end of every scenario.
struct HookDescription {
  std::string name;
  TargetCall call;
  std::string role;  // "" = none: only a `hook: NAME` step fires it
  SourceMark mark;
};

// Reads `hooks:` into t.hooks (one hook per role).
void ParseHooks(TargetLoadContext& cx, const YAML::Node& hooks, TargetDescription& t);

}  // namespace idemproof
