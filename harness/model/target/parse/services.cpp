// `services:` (services.h).
#include <string>
#include <vector>

#include "model/pattern.h"
#include "model/target/description.h"
#include "model/target/parse/load_context.h"
#include "model/target/services.h"
#include "model/tls_settings.h"

namespace idemproof {
namespace {

// A helper process (see ServiceDescription).
ServiceDescription Service(TargetLoadContext& cx, const std::string& name, const YAML::Node& node) {
  const std::string what = "service '" + name + "'";
  cx.r.CheckKeys(node,
               {"argv", "env", "cwd", "port_from_stdout", "free_port", "ready", "ready_stdout",
                "start_timeout", "stop_timeout", "url", "tls"},
               what);
  ServiceDescription svc;
  svc.name = name;
  svc.mark = cx.r.MarkOf(node);
  YAML::Node start = YAML::Clone(node);
  for (const char* k : {"ready_stdout", "url", "tls"}) start.remove(k);
  svc.start = ParseStart(cx, start);
  svc.start.mark = svc.mark;
  if (node["ready_stdout"]) {
    svc.ready_stdout = cx.r.String(node["ready_stdout"], what + ".ready_stdout");
    if (auto re = Pattern::Compile(svc.ready_stdout); !re.ok())
      cx.r.Fail(node["ready_stdout"], what + ".ready_stdout: " + re.status().message());
  }
  if (node["url"]) svc.url = cx.Templated(node["url"], what + ".url");
  ParseTlsSettings(cx.r, node, cx.r.file(), svc.tls, what + ".tls");
  return svc;
}

}  // namespace

void ParseServices(TargetLoadContext& cx, const YAML::Node& services, TargetDescription& t) {
  cx.r.ExpectMap(services, "services");
  for (auto it = services.begin(); it != services.end(); ++it) {
    std::string name = cx.Name(it->first, "service");
    t.services[name] = Service(cx, name, it->second);
  }
}

// Every request's `base:` names a declared service.
void CheckRequestBases(TargetLoadContext& cx, const TargetDescription& t) {
  for (const auto& [node, base] : cx.bases) {
    if (t.services.count(base) == 0) {
      std::vector<std::string> declared;
      for (const auto& [n, svc] : t.services) declared.push_back(n);
      cx.r.Fail(node, "base: '" + base + "' is not a service declared under 'services'" +
                          yaml::DidYouMean(base, declared));
    }
  }
}

}  // namespace idemproof
