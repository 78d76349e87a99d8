// `probes:` (probes.h).
#include <algorithm>

#include "model/roles.h"
#include "model/target/description.h"
#include "model/target/parse/load_context.h"
#include "model/target/probes.h"

namespace idemproof {
namespace {

// {egress: NAME, match: {method, path, fields: {PATH: text}}}: the egress
// record's entries (see EgressMatch).
void EgressProbe(TargetLoadContext& cx, const YAML::Node& node, const std::string& what, ProbeDescription& p) {
  cx.r.CheckKeys(node, {"egress", "match", "value", "volatile", "role", "of"}, what);
  p.egress = cx.r.String(node["egress"], what + ".egress");
  cx.egress_uses.emplace_back(node["egress"], p.egress);
  if (!node["match"]) return;
  const YAML::Node m = node["match"];
  cx.r.CheckKeys(m, {"method", "path", "fields"}, what + ".match");
  if (m["method"]) {
    p.match.method = cx.r.String(m["method"], what + ".match.method");
    if (std::find(HttpMethods().begin(), HttpMethods().end(), p.match.method) == HttpMethods().end())
      cx.r.Fail(m["method"], what + ".match.method: unknown HTTP method '" + p.match.method + "'" +
                               yaml::DidYouMean(p.match.method, HttpMethods()));
  }
  if (m["path"]) {
    p.match.path = cx.r.String(m["path"], what + ".match.path");
    if (p.match.path.empty() || p.match.path[0] != '/') cx.r.Fail(m["path"], what + ".match.path must start with '/'");
  }
  if (m["fields"]) {
    cx.r.ExpectMap(m["fields"], what + ".match.fields");
    for (auto it = m["fields"].begin(); it != m["fields"].end(); ++it)
      p.match.fields.emplace_back(cx.r.Path(it->first, what + ".match.fields key"),
                                  cx.Templated(it->second, what + ".match.fields value"));
  }
}

ProbeDescription Probe(TargetLoadContext& cx, const std::string& name, const YAML::Node& node) {
  std::string what = "probe '" + name + "'";
  ProbeDescription p;
  p.name = name;
  p.mark = cx.r.MarkOf(node);
  if (node.IsMap() && node["egress"]) {
    EgressProbe(cx, node, what, p);
  } else if (node.IsMap() && node["from_answer"]) {
    // A member of its action's answer: no call of its own.
    cx.r.CheckKeys(node, {"from_answer", "volatile", "role", "of", "counts", "sums"}, what);
    p.from_answer = cx.r.Path(node["from_answer"], what + ".from_answer");
    if (!node["of"]) cx.r.Fail(node["from_answer"], what + ".from_answer reads an action's answer: give of: ACTION");
    } else {
    if (node.IsMap() && node["match"]) cx.r.Fail(node["match"], what + ".match needs egress: (an egress probe)");
    p.call = cx.Call(node, what, {"value", "volatile", "role", "of", "counts", "sums", "caller"});
    if (node["caller"]) {
      if (!p.call.request) cx.r.Fail(node["caller"], what + ".caller sends its request as that caller: give request:");
      p.caller = cx.Name(node["caller"], what + ".caller");
      cx.caller_uses.emplace_back(node["caller"], p.caller);
    }
  }
  cx.RoleOf(node, what, ProbeRoleNames(), p.role, p.of);
  // What a consumer counter moves by per message applied (applied_once).
  if (node["counts"] && node["sums"])
    cx.r.Fail(node["sums"], what + ": give counts: applications or sums: PATH, not both");
  if (node["counts"] && cx.r.String(node["counts"], what + ".counts") != "applications")
    cx.r.Fail(node["counts"], what + ".counts must be applications (for a total of a message member: sums: PATH)");
  if (node["sums"]) p.sums = cx.r.Path(node["sums"], what + ".sums");
  if (node["value"]) {
    std::string v = cx.r.String(node["value"], what + ".value");
    if (v == "stdout") {
      if (!p.call.command) cx.r.Fail(node["value"], what + ".value: 'stdout' needs a command probe");
    } else {
      p.value = cx.r.Path(node["value"], what + ".value");
    }
  }
  if (node["volatile"]) p.volatile_paths = cx.Paths(node["volatile"], what + ".volatile");
  return p;
}

}  // namespace

void ParseProbes(TargetLoadContext& cx, const YAML::Node& probes, TargetDescription& t) {
  cx.r.ExpectMap(probes, "probes");
  for (auto it = probes.begin(); it != probes.end(); ++it) {
    std::string name = cx.Name(it->first, "probe");
    if (name == "records") cx.r.Fail(it->first, "probe name 'records' is reserved for records probes");
    t.probes[name] = Probe(cx, name, it->second);
  }
}

// A from_answer probe's value is captured from its action's first 2xx
// answer, under FromAnswerVariable (the runtime's captures keep it per biz).
void AddFromAnswerCaptures(TargetDescription& t) {
  for (auto& [name, probe] : t.probes) {
    if (!probe.from_answer) continue;
    CaptureRule rule;
    rule.path = *probe.from_answer;
    t.actions.at(probe.of).capture[FromAnswerVariable(name)] = rule;
  }
}

}  // namespace idemproof
