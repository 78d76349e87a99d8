// `egress:` (egress.h).
#include <string>
#include <vector>

#include "model/target/description.h"
#include "model/target/egress.h"
#include "model/target/parse/load_context.h"
#include "model/tls_settings.h"

namespace idemproof {
namespace {

// A downstream behind the harness's proxy (see EgressDescription).
// `services`: the target's, already read (an egress to one takes its tls:).
EgressDescription Egress(TargetLoadContext& cx, const std::string& name, const YAML::Node& node,
                         const std::map<std::string, ServiceDescription>& services) {
  const std::string what = "egress '" + name + "'";
  cx.r.ExpectMap(node, what);
  cx.r.CheckKeys(node, {"upstream", "record", "protocol", "tls", "key_header"}, what);
  EgressDescription e;
  e.name = name;
  e.mark = cx.r.MarkOf(node);
  YAML::Node up = cx.r.Required(node, "upstream", what);
  e.upstream = cx.Templated(up, what + ".upstream");
  if (node["protocol"]) {
    const std::string protocol = cx.r.String(node["protocol"], what + ".protocol");
    if (protocol != "http" && protocol != "tcp")
      cx.r.Fail(node["protocol"], what + ".protocol: unknown protocol '" + protocol + "'" +
                                    yaml::DidYouMean(protocol, {"http", "tcp"}) + " (http, tcp)");
    e.tcp = protocol == "tcp";
  }
  if (e.tcp) {
    // Raw bytes: no request to record, no URL to forward to.
    if (node["record"]) cx.r.Fail(node["record"], what + ".record: a tcp egress has no requests to record (http only)");
    if (node["tls"]) cx.r.Fail(node["tls"], what + ".tls: a tcp egress copies raw bytes, it speaks no TLS of its own (http only)");
    if (node["key_header"]) cx.r.Fail(node["key_header"], what + ".key_header: a tcp egress has no requests to read a key from (http only)");
    if (e.upstream.find("://") != std::string::npos)
      cx.r.Fail(up, what + ".upstream of a tcp egress is HOST:PORT (e.g. \"127.0.0.1:{{services.postgres.port}}\"), not a URL");
    return e;
  }
  // A template ({{services.NAME.url}}) is checked once expanded, by the runtime.
  if (e.upstream.rfind("http://", 0) != 0 && e.upstream.rfind("https://", 0) != 0 &&
      e.upstream.rfind("{{", 0) != 0)
    cx.r.Fail(up, what + ".upstream must be an http:// or https:// URL");
  if (node["record"]) e.record = cx.Paths(node["record"], what + ".record");
  if (node["key_header"]) {
    e.key_header = cx.r.String(node["key_header"], what + ".key_header");
    if (e.key_header == "none") e.key_header.clear();
    else if (e.key_header.empty()) cx.r.Fail(node["key_header"], what + ".key_header: a header name, or none");
  }
  // No tls: of its own: that of the service it forwards to, if it names one.
  for (const auto& [service, svc] : services) {
    if (node["tls"] || e.upstream.rfind("{{services." + service + ".url}}", 0) != 0) continue;
    e.tls = svc.tls;
  }
  ParseTlsSettings(cx.r, node, cx.r.file(), e.tls, what + ".tls");
  return e;
}

}  // namespace

void ParseEgress(TargetLoadContext& cx, const YAML::Node& egress, TargetDescription& t) {
  cx.r.ExpectMap(egress, "egress");
  for (auto it = egress.begin(); it != egress.end(); ++it) {
    std::string name = cx.Name(it->first, "egress");
    t.egress[name] = Egress(cx, name, it->second, t.services);
  }
}

// A probe's `egress:` names an http egress (one that keeps a record); an
// action's `calls:` name http egress downstreams (a store is no call to kill after).
void CheckEgressUses(TargetLoadContext& cx, const TargetDescription& t) {
  for (const auto& [node, name] : cx.egress_uses) {
    if (t.egress.count(name) == 0) {
      std::vector<std::string> declared;
      for (const auto& [n, e] : t.egress) declared.push_back(n);
      cx.r.Fail(node, "egress: '" + name + "' is not a downstream declared under 'egress'" +
                          yaml::DidYouMean(name, declared));
    } else if (t.egress.at(name).tcp) {
      cx.r.Fail(node, "egress: '" + name + "' is a tcp egress (protocol: tcp): it keeps no record of requests to probe");
    }
  }
  for (const auto& [node, name] : cx.calls_uses) {
    std::vector<std::string> http;
    for (const auto& [n, e] : t.egress)
      if (!e.tcp) http.push_back(n);
    if (t.egress.count(name) == 0)
      cx.r.Fail(node, "calls: '" + name + "' is not a downstream declared under 'egress'" + yaml::DidYouMean(name, http));
    else if (t.egress.at(name).tcp)
      cx.r.Fail(node, "calls: '" + name + "' is a tcp egress (protocol: tcp, the service's store): calls names http downstreams");
  }
}

}  // namespace idemproof
