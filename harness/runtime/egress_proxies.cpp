#include "runtime/egress_proxies.h"

#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "injectors/fault_selector.h"
#include "injectors/tcp_fault_proxy.h"
#include "model/scenario.h"
#include "clients/http_client.h"

namespace idemproof::runtime {

namespace inj = idemproof::injectors;

// Destroyed in reverse: the proxy (healed, thread joined) before its log.
struct EgressProxies::Running {
  std::unique_ptr<inj::FaultEventLog> log;
  std::unique_ptr<inj::ChaosProxy> proxy;
  std::unique_ptr<inj::TcpFaultProxy> tcp;
};

namespace {

// One egress record entry (see the header).
nlohmann::json EntryOf(const EgressDescription& egress, const inj::UpstreamExchange& x) {
  const std::string& target = x.request.target;
  nlohmann::json entry = {{"egress", egress.name},
                          {"method", x.request.method},
                          {"path", target.substr(0, target.find('?'))},
                          {"target", target},
                          {"body", x.request.body},
                          {"fields", nlohmann::json::object()},
                          {"key", nlohmann::json()},
                          {"status", x.answer ? nlohmann::json(x.answer->status) : nlohmann::json()},
                          {"answer", nlohmann::json()},
                          {"error", x.error},
                          {"sent_ns", x.sent_ns}};
  if (!egress.key_header.empty())
    if (auto key = x.request.header(egress.key_header)) entry["key"] = *key;
  const nlohmann::json body = nlohmann::json::parse(x.request.body, nullptr, false);
  for (const auto& path : egress.record) {
    auto v = body.is_discarded() ? Result<nlohmann::json>(Status::NotFound("no JSON body")) : path.Find(body);
    entry["fields"][path.text()] = v.ok() ? *v : nlohmann::json();
  }
  if (x.answer) {
    nlohmann::json answer = nlohmann::json::parse(x.answer->body, nullptr, false);
    entry["answer"] = answer.is_discarded() ? nlohmann::json(x.answer->body) : answer;
  }
  return entry;
}

// An https:// downstream is checked once before its proxy starts, as the
// target's own ready check is: a certificate its tls: does not trust stops
// the run (exit 2) before the target sends anything through the proxy,
// rather than each call failing inside the proxy as the target's problem.
// Anything else (nothing listening yet) is left to the proxy to meet.
Status CheckHandshake(const EgressDescription& egress, const std::string& url) {
  HttpClient client;
  OutgoingRequest hello;
  hello.set_url(url);
  hello.tls = egress.tls;
  hello.timeout = std::chrono::seconds(5);
  HttpExchange e = client.connect_only(hello);
  if (e.tls_refused) return TlsRefused(e.error, url, egress.mark.file, "egress " + egress.name);
  return Status::Ok();
}

}  // namespace

EgressProxies::EgressProxies(const std::map<std::string, EgressDescription>& egress, Sink on_record,
                             Sink on_fault)
    : egress_(egress), on_record_(std::move(on_record)), on_fault_(std::move(on_fault)) {}

EgressProxies::~EgressProxies() { Stop(); }

Status EgressProxies::Start(const TemplateVars& vars) {
  for (const auto& [name, egress] : egress_) {
    auto url = ExpandTemplate(egress.upstream, vars);
    if (!url.ok()) return Status(url.status().code(), "egress " + name + ": " + url.status().message());
    if (egress.tcp) {
      if (Status st = StartTcp(egress, *url); !st.ok()) return st;
      continue;
    }
    const bool https = url->rfind("https://", 0) == 0;
    std::string authority = url->substr(https ? 8 : url->rfind("http://", 0) == 0 ? 7 : 0);
    while (!authority.empty() && authority.back() == '/') authority.pop_back();
    if ((!https && url->rfind("http://", 0) != 0) || authority.find('/') != std::string::npos)
      return Status(StatusCode::kInvalidConfig, "egress " + name + ": upstream '" + *url +
                                                    "' must be http(s)://HOST:PORT without a path (" +
                                                    egress.mark.ToString() + ")");
    auto upstream = inj::parse_endpoint(authority);
    if (!upstream.ok()) return Status(StatusCode::kInvalidConfig, "egress " + name + ": " + upstream.status().message());
    if (https) {
      if (Status shaken = CheckHandshake(egress, *url); !shaken.ok()) return shaken;
    }
    auto r = NewRunning(name);
    inj::ProxySettings settings;
    settings.upstream = upstream.value();
    // The target speaks plain HTTP to the proxy, the proxy TLS to the downstream.
    if (https) settings.upstream_tls = egress.tls;
    const EgressDescription* desc = &egress;
    settings.on_exchange = [this, desc](const inj::UpstreamExchange& x) {
      nlohmann::json entry = EntryOf(*desc, x);
      {
        base::MutexLock lock(mu_);
        records_[desc->name].push_back(entry);
      }
      if (on_record_) on_record_(entry, x.answer ? x.answer->time_ns : inj::steady_now_ns());
    };
    r->proxy = std::make_unique<inj::ChaosProxy>(settings, r->log.get());
    Status st = r->proxy->start();
    if (!st.ok()) return Status(StatusCode::kUnavailable, "egress " + name + " proxy: " + st.message());
    vars_out_["egress." + name + ".url"] = "http://" + r->proxy->endpoint().to_string();
    vars_out_["egress." + name + ".port"] = std::to_string(r->proxy->endpoint().port);
    running_[name] = std::move(r);
  }
  return Status::Ok();
}

// A running egress whose fault events go to on_fault_, marked "on": "egress.NAME".
std::unique_ptr<EgressProxies::Running> EgressProxies::NewRunning(const std::string& name) const {
  auto r = std::make_unique<Running>();
  const std::string on = EgressHop(name);
  Sink on_fault = on_fault_;
  r->log = std::make_unique<inj::FaultEventLog>([on_fault, on](const inj::FaultEvent& e) {
    nlohmann::json j = e;
    j["on"] = on;
    if (on_fault) on_fault(j, e.time_ns);
  });
  return r;
}

// A tcp egress: raw bytes to HOST:PORT, its fault events to on_fault_.
Status EgressProxies::StartTcp(const EgressDescription& egress, const std::string& address) {
  const std::string& name = egress.name;
  auto upstream = inj::parse_endpoint(address);
  if (!upstream.ok() || address.find("://") != std::string::npos)
    return Status(StatusCode::kInvalidConfig, "egress " + name + ": upstream '" + address +
                                                  "' must be HOST:PORT (" + egress.mark.ToString() + ")");
  auto r = NewRunning(name);
  inj::TcpProxySettings settings;
  settings.upstream = upstream.value();
  r->tcp = std::make_unique<inj::TcpFaultProxy>(settings, r->log.get());
  if (Status st = r->tcp->start(); !st.ok())
    return Status(StatusCode::kUnavailable, "egress " + name + " tcp proxy: " + st.message());
  vars_out_["egress." + name + ".address"] = r->tcp->endpoint().to_string();
  vars_out_["egress." + name + ".port"] = std::to_string(r->tcp->endpoint().port);
  running_[name] = std::move(r);
  return Status::Ok();
}

void EgressProxies::Stop() { running_.clear(); }

inj::TcpFaultProxy* EgressProxies::TcpProxy(const std::string& name) {
  auto it = running_.find(name);
  return it == running_.end() ? nullptr : it->second->tcp.get();
}

inj::ChaosProxy* EgressProxies::Proxy(const std::string& name) {
  auto it = running_.find(name);
  return it == running_.end() ? nullptr : it->second->proxy.get();
}

inj::FaultEventLog* EgressProxies::Log(const std::string& name) {
  auto it = running_.find(name);
  return it == running_.end() ? nullptr : it->second->log.get();
}

std::vector<nlohmann::json> EgressProxies::Records(const std::string& name) const {
  base::MutexLock lock(mu_);
  auto it = records_.find(name);
  return it == records_.end() ? std::vector<nlohmann::json>{} : it->second;
}

Result<bool> EgressMatches(const EgressMatch& match, const nlohmann::json& entry, const TemplateVars& vars) {
  inj::FaultSettings where;
  if (!match.method.empty()) where.method = match.method;
  if (!match.path.empty()) where.path = match.path;
  // The proxy faults' own matching, so `match:` means the same on probes and faults.
  if (!inj::FaultSelector(where).matches(entry.value("method", ""), entry.value("target", ""))) return false;
  if (match.fields.empty()) return true;
  const nlohmann::json body = nlohmann::json::parse(entry.value("body", ""), nullptr, false);
  if (body.is_discarded()) return false;
  for (const auto& [path, text] : match.fields) {
    auto want = ExpandTemplate(text, vars);
    if (!want.ok()) return want.status();
    if (path.FindText(body) != *want) return false;
  }
  return true;
}

}  // namespace idemproof::runtime
