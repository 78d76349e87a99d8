#include "injectors/proxy_command.h"

#include <signal.h>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "injectors/registry.h"

namespace idemproof::injectors {

int run_proxy_command(const ProxyCommandOptions& o, std::ostream& out, std::ostream& err) {
  ProxySettings settings;
  auto listen = parse_endpoint(o.listen);
  auto upstream = parse_endpoint(o.upstream);
  auto timeout = parse_duration(o.upstream_timeout);
  for (const Status& st : {listen.status(), upstream.status(), timeout.status()}) {
    if (!st.ok()) {
      err << "idemproof proxy: " << st.ToString() << "\n";
      return 2;
    }
  }
  settings.listen = listen.value();
  settings.upstream = upstream.value();
  settings.upstream_timeout = timeout.value();
  settings.upstream_http2 = o.upstream_http2;

  Registry registry;
  register_builtin_injectors(registry);
  std::vector<std::unique_ptr<Injector>> built;
  for (const std::string& text : o.faults) {
    YAML::Node block;
    try {
      block = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      err << "idemproof proxy: --fault '" << text << "': " << e.mark.line + 1 << ":"
          << e.mark.column + 1 << ": " << e.msg << "\n";
      return 2;
    }
    auto injector = registry.build(block);
    if (!injector) {
      err << "idemproof proxy: --fault '" << text << "': " << injector.status().ToString() << "\n";
      return 2;
    }
    built.push_back(std::move(injector.value()));
  }

  // Block the signals before the proxy thread exists, so only sigwait() sees them.
  sigset_t signals, previous;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);

  FaultEventLog events([&out](const FaultEvent& e) {
    out << nlohmann::json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  });
  int code = 0;
  {
    ChaosProxy proxy(settings, &events);
    if (Status st = proxy.start(); !st.ok()) {
      err << "idemproof proxy: " << st.ToString() << "\n";
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      return 3;
    }
    out << "listening on " << proxy.endpoint().to_string() << std::endl;
    ActiveFaults active(InjectorContext{&proxy, &events});
    for (auto& injector : built) {
      if (Status st = active.start(std::move(injector)); !st.ok()) {
        err << "idemproof proxy: " << st.ToString() << "\n";
        code = 2;
      }
    }
    if (code == 0) {
      int received = 0;
      sigwait(&signals, &received);
    }
    active.heal_all();
    const bool drained = proxy.heal();
    const ProxyCounters pc = proxy.counters();
    out << "proxy: " << pc.connections_accepted << " connections, " << pc.requests << " requests, "
        << pc.upstream_sends << " upstream sends, " << pc.faults_injected << " faults injected"
        << (drained ? "" : " (heal had to stop the proxy by force)") << std::endl;
    const auto counters = active.counters();
    for (const auto& c : counters) {
      out << "fault " << c.kind << "/" << c.name << ": seen " << c.counts.seen << ", matched "
          << c.counts.matched << ", injected " << c.counts.injected << std::endl;
    }
    for (const auto& name : never_fired(counters)) err << "warning: fault " << name << " never fired\n";
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return code;
}

}  // namespace idemproof::injectors
