// `probes:` of the target file: named observations (a request, a command,
// an egress record, a member of an action's answer).
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/json_path.h"
#include "model/target/request.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// Which requests of an egress record an egress probe keeps: method and path
// of the request (path without the query; a trailing '*' matches a prefix),
// and JSON members of its body equal to templated text (a non-string member
// compares as its JSON text).
struct EgressMatch {
  std::string method;  // "" = any
  std::string path;    // "" = any
  std::vector<std::pair<JsonPath, std::string>> fields;
  // {method, path} as a kill-after-answer fault's `match` (the declared
  // ones only; {} when neither is).
  nlohmann::json AsFaultMatch() const;
};

// A named observation: a request + JSON path, a command whose stdout
// (trimmed; parsed as JSON when it parses) is the value, or an egress probe:
// the array of the egress record's entries (see EgressDescription) that
// `match` keeps, each narrowed by `value` when declared.
struct ProbeDescription {
  std::string name;
  TargetCall call;                // unset for an egress probe
  std::string egress;             // the egress downstream whose record it reads; "" = none
  EgressMatch match;              // egress probes only
  std::optional<JsonPath> value;  // absent with a command = stdout; with a request = "$"
  std::vector<JsonPath> volatile_paths;  // ignored by probe_equal
  std::string role;  // a probe role (roles.h); "" = none
  std::string of;    // the action it observes ("" = none): a counter's create, a ledger's pay
  // What a consumer's counter read by applied_once moves by per message
  // applied: unset (`counts: applications`, the default) = 1; a JSON path
  // (`sums: "$.amount"`) = that member of the message (its push body, or its
  // broker entry's fields), as a balance summing amounts does.
  std::optional<JsonPath> sums;
  // `caller: NAME` (a `callers:` entry): the probe's request goes with that
  // caller's headers over the target's (a per-tenant listing); "" = none.
  std::string caller;
  // `from_answer: PATH`: no call; the value is that member of the first 2xx
  // answer of its `of:` action for the probe's biz (a charge's txn id).
  std::optional<JsonPath> from_answer;
  SourceMark mark;
};

// The capture variable under which a from_answer probe's value is kept (the
// loader adds it to the probe's `of:` action's captures).
inline std::string FromAnswerVariable(const std::string& probe) { return "from_answer." + probe; }

// Reads `probes:` into t.probes.
void ParseProbes(TargetLoadContext& cx, const YAML::Node& probes, TargetDescription& t);
// Once actions and probes are read: each from_answer probe's value becomes a
// capture of its `of:` action.
void AddFromAnswerCaptures(TargetDescription& t);

}  // namespace idemproof
