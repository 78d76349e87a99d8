#include "runtime/injector_faults.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "injectors/registry.h"
#include "injectors/tcp_fault_injector.h"
#include "injectors/tcp_fault_proxy.h"

namespace idemproof::runtime {

namespace inj = idemproof::injectors;

struct InjectorFaults::Registered {
  inj::Registry registry;  // the http hop's faults (the client's, an http egress's)
  inj::Registry tcp;       // a tcp egress's faults

  static bool Has(const inj::Registry& r, const std::string& kind) {
    for (const auto& k : r.kinds())
      if (k == kind) return true;
    return false;
  }
  static std::string Listed(const inj::Registry& r) {
    std::string out;
    for (const auto& k : r.kinds()) out += (out.empty() ? "" : ", ") + k;
    return out;
  }
  // The registry of the hop (tcp or not), or why the kind does not act there.
  Result<const inj::Registry*> For(const FaultDeclaration& fault, bool tcp) const {
    const inj::Registry& r = tcp ? this->tcp : registry;
    if (Has(r, fault.kind)) return &r;
    const std::string hop = fault.on.empty() ? "the client's hop" : fault.on;
    return Status(StatusCode::kInvalidConfig,
                  "fault " + fault.name + ": '" + fault.kind + "' is " + (tcp ? "an http" : "a tcp") + " fault, and " +
                      hop + " is " + (tcp ? "a tcp egress (protocol: tcp); tcp faults: " + Listed(this->tcp)
                                          : std::string(fault.on.empty() ? "http" : "an http egress") +
                                                "; http faults: " + Listed(registry)));
  }
};

// One proxy in front of the target for a scenario run, and the faults armed
// on it. Members are destroyed in reverse order: injectors are healed before
// the proxy, the proxy before the event log it writes to.
struct InjectorFaults::Proxy {
  std::unique_ptr<inj::FaultEventLog> log;
  std::unique_ptr<inj::ChaosProxy> proxy;
  std::map<std::string, std::unique_ptr<inj::Injector>> active;

  ~Proxy() {
    for (auto& [name, injector] : active) injector->heal();
    if (proxy) proxy->heal();
  }
};

namespace {

// The injectors' own Status, with `context` (which fault, which target) in front.
Status FromInjectors(const Status& st, const std::string& context) {
  return Status(st.code(), context + (st.mark() ? st.mark()->ToString() + ": " : "") + st.message());
}

YAML::Node ToYaml(const nlohmann::json& j) {
  YAML::Node n;
  if (j.is_object()) {
    n = YAML::Node(YAML::NodeType::Map);
    for (const auto& [k, v] : j.items()) n[k] = ToYaml(v);
  } else if (j.is_array()) {
    n = YAML::Node(YAML::NodeType::Sequence);
    for (const auto& v : j) n.push_back(ToYaml(v));
  } else if (j.is_string()) {
    n = j.get<std::string>();
  } else if (!j.is_null()) {
    n = j.dump();  // numbers and booleans as their YAML scalars
  }
  return n;
}

// {kind: {params..., name: fault name}}: an injector block.
YAML::Node BlockOf(const FaultDeclaration& fault) {
  nlohmann::json params = fault.params.is_object() ? fault.params : nlohmann::json::object();
  if (!params.contains("name")) params["name"] = fault.name;
  YAML::Node block(YAML::NodeType::Map);
  block[fault.kind] = ToYaml(params);
  return block;
}

struct BaseUrlParts {
  std::string authority;  // host:port
  std::string path;       // "" or "/api/v9"
  bool https = false;
};

Result<BaseUrlParts> SplitBaseUrl(const std::string& url) {
  const bool https = url.rfind("https://", 0) == 0;
  const std::string scheme = https ? "https://" : "http://";
  if (url.rfind(scheme, 0) != 0) {
    return Status(StatusCode::kUnsupported,
                  "proxy faults need an http:// or https:// target; base URL is '" + url + "'");
  }
  BaseUrlParts out;
  out.https = https;
  const std::size_t slash = url.find('/', scheme.size());
  out.authority = url.substr(scheme.size(), slash == std::string::npos ? std::string::npos
                                                                       : slash - scheme.size());
  if (slash != std::string::npos) out.path = url.substr(slash);
  if (https && out.authority.find(':') == std::string::npos) out.authority += ":443";
  while (!out.path.empty() && out.path.back() == '/') out.path.pop_back();
  return out;
}

}  // namespace

InjectorFaults::InjectorFaults() : registry_(std::make_unique<Registered>()) {
  inj::register_builtin_injectors(registry_->registry);
  inj::register_builtin_tcp_faults(registry_->tcp);
}

InjectorFaults::~InjectorFaults() { HealAll(); }

std::vector<std::string> InjectorFaults::Kinds() const {
  std::vector<std::string> out = registry_->registry.kinds();
  for (const auto& k : registry_->tcp.kinds())
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

bool InjectorFaults::Supports(const std::string& kind) const {
  for (const auto& k : Kinds()) {
    if (k == kind) return true;
  }
  return false;
}

Status InjectorFaults::Validate(const FaultDeclaration& fault) const {
  // On an egress the hop's protocol is the target's to say (ValidateOn);
  // here the options must fit the kind on some hop.
  if (!fault.on.empty() && Registered::Has(registry_->tcp, fault.kind)) {
    Status tcp = ValidateOn(fault, true);
    if (tcp.ok() || !Registered::Has(registry_->registry, fault.kind)) return tcp;
  }
  return ValidateOn(fault, false);
}

Status InjectorFaults::ValidateOn(const FaultDeclaration& fault, bool tcp) const {
  auto registry = registry_->For(fault, tcp);
  if (!registry.ok()) return registry.status();
  // On an egress, Start gives a kill-after-answer without pid the target's
  // main instance: validate it with a stand-in.
  FaultDeclaration checked = fault;
  if (!fault.on.empty() && fault.kind == "kill-after-answer" && !fault.params.contains("pid"))
    checked.params["pid"] = 2;
  auto built = (*registry)->build(BlockOf(checked));
  if (!built) return FromInjectors(built.status(), "fault " + fault.name + ": ");
  return Status::Ok();
}

Result<nlohmann::json> InjectorFaults::Start(const FaultDeclaration& fault, const FaultScope& scope) {
  if (!fault.on.empty() && scope.egress_tcp_proxy != nullptr) {
    if (egress_active_.count(fault.name))
      return Status(StatusCode::kInvalidArgument, "fault " + fault.name + " is already active");
    auto registry = registry_->For(fault, true);
    if (!registry.ok()) return registry.status();
    auto built = (*registry)->build(BlockOf(fault));
    if (!built) return FromInjectors(built.status(), "fault " + fault.name + ": ");
    std::unique_ptr<inj::Injector> injector = std::move(built).value();
    inj::InjectorContext context{nullptr, scope.egress_log, scope.egress_tcp_proxy};
    if (Status st = injector->start(context); !st.ok()) return FromInjectors(st, "fault " + fault.name + ": ");
    nlohmann::json record = {{"injector", injector->kind()},
                             {"name", injector->settings().name},
                             {"on", fault.on},
                             {"protocol", "tcp"},
                             {"proxy", scope.egress_tcp_proxy->endpoint().to_string()}};
    egress_active_.emplace(fault.name, std::move(injector));
    return record;
  }
  if (!fault.on.empty()) {
    if (scope.egress_proxy == nullptr)
      return Status(StatusCode::kUnsupported, "fault " + fault.name + ": no running proxy for " + fault.on);
    if (egress_active_.count(fault.name))
      return Status(StatusCode::kInvalidArgument, "fault " + fault.name + " is already active");
    FaultDeclaration armed = fault;
    if (armed.kind == "kill-after-answer" && !armed.params.contains("pid")) {
      if (scope.target_pid.empty())
        return Status(StatusCode::kUnsupported, "fault " + fault.name + ": no target process to kill");
      armed.params["pid"] = scope.target_pid;
    }
    if (auto r = registry_->For(fault, false); !r.ok()) return r.status();
    auto built = registry_->registry.build(BlockOf(armed));
    if (!built) return FromInjectors(built.status(), "fault " + fault.name + ": ");
    std::unique_ptr<inj::Injector> injector = std::move(built).value();
    inj::InjectorContext context{scope.egress_proxy, scope.egress_log};
    if (Status st = injector->start(context); !st.ok()) return FromInjectors(st, "fault " + fault.name + ": ");
    nlohmann::json record = {{"injector", injector->kind()},
                             {"name", injector->settings().name},
                             {"on", fault.on},
                             {"proxy", scope.egress_proxy->endpoint().to_string()}};
    if (armed.params.contains("pid")) record["pid"] = armed.params["pid"];
    egress_active_.emplace(fault.name, std::move(injector));
    return record;
  }
  if (proxy_ && proxy_->active.count(fault.name)) {
    return Status(StatusCode::kInvalidArgument, "fault " + fault.name + " is already active");
  }
  if (auto r = registry_->For(fault, false); !r.ok()) return r.status();
  auto built = registry_->registry.build(BlockOf(fault));
  if (!built) return FromInjectors(built.status(), "fault " + fault.name + ": ");
  std::unique_ptr<inj::Injector> injector = std::move(built).value();

  if (!proxy_) {
    auto parts = SplitBaseUrl(scope.target_base_url);
    if (!parts.ok()) return parts.status();
    auto upstream = inj::parse_endpoint(parts->authority);
    if (!upstream) return FromInjectors(upstream.status(), "target " + scope.target_base_url + ": ");
    auto p = std::make_unique<Proxy>();
    auto on_event = scope.on_event;
    p->log = std::make_unique<inj::FaultEventLog>([on_event](const inj::FaultEvent& e) {
      if (on_event) on_event(nlohmann::json(e), e.time_ns);
    });
    inj::ProxySettings settings;
    settings.upstream = upstream.value();
    settings.body_limit = scope.max_body;  // an endless answer ends at the cap here too
    // An https:// target: the harness's requests reach its own loopback proxy
    // in plain HTTP, the proxy speaks TLS to the target with the target's checks.
    if (parts->https) settings.upstream_tls = scope.target_tls;
    // A target that says http: 2 may speak nothing else (h2c prior knowledge).
    settings.upstream_http2 = scope.target_http2;
    p->proxy = std::make_unique<inj::ChaosProxy>(settings, p->log.get());
    if (Status st = p->proxy->start(); !st.ok()) return FromInjectors(st, "chaos proxy: ");
    client_base_url_ = "http://" + p->proxy->endpoint().to_string() + parts->path;
    proxy_ = std::move(p);
  }
  inj::InjectorContext context{proxy_->proxy.get(), proxy_->log.get()};
  if (Status st = injector->start(context); !st.ok()) {
    Status out = FromInjectors(st, "fault " + fault.name + ": ");
    if (proxy_->active.empty()) HealClientProxy();
    return out;
  }
  nlohmann::json record = {{"injector", injector->kind()},
                           {"name", injector->settings().name},
                           {"proxy", proxy_->proxy->endpoint().to_string()},
                           {"upstream", scope.target_base_url},
                           {"client_base_url", *client_base_url_}};
  proxy_->active.emplace(fault.name, std::move(injector));
  return record;
}

Result<std::int64_t> InjectorFaults::Heal(const FaultDeclaration& fault) {
  if (auto e = egress_active_.find(fault.name); e != egress_active_.end()) {
    e->second->heal();
    const std::int64_t injected = e->second->counters().counts.injected;
    egress_active_.erase(e);
    return injected;
  }
  if (!proxy_) return std::int64_t{0};
  auto it = proxy_->active.find(fault.name);
  if (it == proxy_->active.end()) return std::int64_t{0};
  it->second->heal();
  const std::int64_t injected = it->second->counters().counts.injected;
  proxy_->active.erase(it);
  if (proxy_->active.empty()) HealClientProxy();
  return injected;
}

void InjectorFaults::HealClientProxy() noexcept {
  proxy_.reset();  // heals every injector, then the proxy (drained, thread joined)
  client_base_url_.reset();
}

void InjectorFaults::HealAll() noexcept {
  for (auto& [name, injector] : egress_active_) injector->heal();
  egress_active_.clear();
  HealClientProxy();
}

std::optional<std::string> InjectorFaults::ClientBaseUrl() const { return client_base_url_; }

}  // namespace idemproof::runtime
