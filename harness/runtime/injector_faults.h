// InjectorFaults: the interpreter's FaultRunner over the injectors room
// (injectors/registry.h, injectors/chaos_proxy.h).
//
// A scenario's `fault` step builds the injector from the fault's declaration
// (kind + parameters, exactly the options of an injector block; the scenario's
// fault name becomes the injector's `name` unless the block gives one) and
// arms it on a chaos proxy. The first fault of a scenario run starts the
// proxy on 127.0.0.1 (ephemeral port) in front of the target's host:port;
// ClientBaseUrl() is then the target's base URL with the proxy's host:port
// (path kept), so the interpreter routes the client's action requests through
// it. Later faults arm on the same proxy (the proxy offers each request to
// its rules in arming order). `heal` disarms one fault; when the last active
// fault heals, the proxy is healed: it stops listening, closes every
// connection and joins its thread, and the client goes to the target again.
// HealAll() (the end of every scenario run) and the destructor heal
// everything.
//
// Every event of the proxy and its injectors (arming, healing, each firing
// with the upstream answers the client never saw) goes to FaultScope::on_event
// as its JSON (injectors/fault_event.h) with its steady-clock time.
//
// Only http:// targets on a numeric host or localhost can be proxied.
//
// A fault on a tcp egress (scope.egress_tcp_proxy) is a tcp fault (pause,
// refuse, reset, cut-after: their own registry); an http kind there, or a tcp
// one on an http hop, is kInvalidConfig.
// A fault with `on: egress.NAME` arms on the scope's egress proxy instead
// (the run owns that proxy; heal disarms the fault only); a kill-after-answer
// there without a `pid` kills the target's main instance (scope.target_pid).
//
// Thread-safety: one scenario run at a time (the interpreter's thread);
// on_event is called from the proxy's thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/run_types.h"

namespace idemproof::injectors {
class Injector;
}  // namespace idemproof::injectors

namespace idemproof::runtime {

class InjectorFaults : public FaultRunner {
 public:
  InjectorFaults();
  ~InjectorFaults() override;
  InjectorFaults(const InjectorFaults&) = delete;
  InjectorFaults& operator=(const InjectorFaults&) = delete;

  // The registered kinds, http and tcp (injectors/tcp_fault_injector.h), sorted.
  std::vector<std::string> Kinds() const;

  bool Supports(const std::string& kind) const override;
  // Errors: kInvalidConfig (the declaration's options: unknown key, wrong
  // type), kUnsupported (an https or non-numeric target), kUnavailable (the
  // proxy could not listen), kInvalidArgument (the fault is already active).
  Result<nlohmann::json> Start(const FaultDeclaration& fault, const FaultScope& scope) override;
  // Times the fault fired; 0 and ok for a fault that is not active.
  Result<std::int64_t> Heal(const FaultDeclaration& fault) override;
  void HealAll() noexcept override;
  std::optional<std::string> ClientBaseUrl() const override;

  // Checks a declaration's options without starting anything (lint). A
  // fault on an egress fits when it fits either hop (the target decides).
  Status Validate(const FaultDeclaration& fault) const;
  // ...on a hop of that protocol (`tcp`: an egress with protocol: tcp): a
  // kind of the other protocol is kInvalidConfig, naming the hop's kinds.
  Status ValidateOn(const FaultDeclaration& fault, bool tcp) const;

 private:
  struct Proxy;
  struct Registered;
  // Heals the faults of the proxy in front of the target and that proxy.
  void HealClientProxy() noexcept;
  std::unique_ptr<Registered> registry_;
  std::unique_ptr<Proxy> proxy_;  // while a fault is active
  std::map<std::string, std::unique_ptr<injectors::Injector>> egress_active_;  // armed on egress proxies
  std::optional<std::string> client_base_url_;
};

}  // namespace idemproof::runtime
