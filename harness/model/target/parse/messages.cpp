// `messages:` and `broker:` (messages.h).
#include "model/target/description.h"
#include "model/target/parse/load_context.h"
#include "model/target/messages.h"

namespace idemproof {
namespace {

MessageDescription Message(TargetLoadContext& cx, const std::string& name, const YAML::Node& node) {
  const std::string what = "message '" + name + "'";
  cx.r.CheckKeys(node, {"push", "fields", "variants", "role"}, what);
  MessageDescription m;
  m.name = name;
  m.mark = cx.r.MarkOf(node);
  if (node["role"]) m.role = cx.KnownRole(node["role"], what, {kMessageRole});
  if (node["push"]) m.push = cx.Request(node["push"], what + ".push");
  if (node["fields"]) m.fields = cx.Headers(node["fields"], what + ".fields", false);
  if (node["variants"]) {
    // A variant changes the push, the broker entry (fields), or both: each
    // needs what it changes.
    const YAML::Node vs = node["variants"];
    cx.r.ExpectMap(vs, what + ".variants");
    for (auto it = vs.begin(); it != vs.end(); ++it) {
      if (!it->second.IsMap()) continue;  // Variants says so
      const bool entry_only = it->second.size() == 1 && it->second["fields"];
      if (!m.push && !entry_only)
        cx.r.Fail(vs, what + ".variants change its push: give push (a request)");
      if (it->second["fields"] && !node["fields"])
        cx.r.Fail(it->second["fields"], what + ".variants." + it->first.Scalar() +
                                          ".fields change its broker entry: give fields (a broker entry)");
    }
    m.variants = cx.Variants(vs, what, m.push ? *m.push : RequestTemplate{}, std::nullopt, /*entry=*/true);
  }
  if (!m.push && m.fields.empty()) cx.r.Fail(node, what + ": give push (a request) or fields (a broker entry), or both");
  return m;
}

}  // namespace

void ParseMessages(TargetLoadContext& cx, const YAML::Node& messages, TargetDescription& t) {
  cx.r.ExpectMap(messages, "messages");
  for (auto it = messages.begin(); it != messages.end(); ++it) {
    std::string name = cx.Name(it->first, "message");
    t.messages[name] = Message(cx, name, it->second);
  }
}

BrokerDescription ParseBroker(TargetLoadContext& cx, const YAML::Node& node) {
  cx.r.CheckKeys(node, {"redis", "stream", "group", "settle"}, "broker");
  BrokerDescription b;
  b.mark = cx.r.MarkOf(node);
  b.address = cx.Templated(cx.r.Required(node, "redis", "broker"), "broker.redis");
  b.stream = cx.Templated(cx.r.Required(node, "stream", "broker"), "broker.stream");
  b.group = cx.r.String(cx.r.Required(node, "group", "broker"), "broker.group");
  if (node["settle"]) b.settle = cx.r.DurationOf(node["settle"], "broker.settle");
  return b;
}

}  // namespace idemproof
