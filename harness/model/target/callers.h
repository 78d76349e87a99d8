// `callers:` of the target file: the principals requests may go as.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <cstddef>
#include <string>

#include "base/header_list.h"
#include "base/status.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// A principal requests may go as (a tenant, an API token): a step's
// `caller: first|second` sends with its headers, over the target's own.
struct CallerDescription {
  std::string name;
  HeaderList headers;  // templates
  SourceMark mark;
};

// Where a step's or explore file's `caller: first|second` sits in a target's
// `callers:` (declaration order).
inline std::size_t CallerIndex(const std::string& caller) { return caller == "second" ? 1 : 0; }

// Reads `callers:` into t.callers (declaration order; no two with one credential).
void ParseCallers(TargetLoadContext& cx, const YAML::Node& callers, TargetDescription& t);
// Once the file is read: every probe's `caller:` names a declared caller.
void CheckCallerUses(TargetLoadContext& cx, const TargetDescription& t);

}  // namespace idemproof
