// ProxyFaultInjector: the Injector (injector.h) that arms one proxy fault
// (proxy_fault.h) on the context's ChaosProxy, and add_proxy_fault<F>, which
// registers a fault kind in a Registry as such an injector. Above both the
// proxy and the faults; proxy_faults/builtin_proxy_faults.cpp uses it.
//
// Thread-safety: as every Injector (injector.h).
#pragma once

#include <memory>
#include <string>

#include "injectors/injector.h"
#include "injectors/proxy_fault.h"
#include "injectors/registry.h"
#include "injectors/yaml_options.h"

namespace idemproof::injectors {

class ChaosProxy;
class FaultEventLog;

// An Injector that arms one rule on the context's proxy.
class ProxyFaultInjector : public Injector {
 public:
  // REQUIRES: fault != nullptr.
  ProxyFaultInjector(std::shared_ptr<const ProxyFault> fault, FaultSettings settings);
  ~ProxyFaultInjector() override;

  const std::string& kind() const override { return kind_; }
  const FaultSettings& settings() const override { return rule_->selector.settings(); }
  // invalid_config when context.proxy is null; internal when started twice.
  Status start(const InjectorContext& context) override;
  void heal() noexcept override;
  InjectorCounters counters() const override;
  const std::shared_ptr<ProxyFaultRule>& rule() const { return rule_; }

 private:
  std::string kind_;
  std::shared_ptr<ProxyFaultRule> rule_;
  ChaosProxy* proxy_ = nullptr;
  FaultEventLog* events_ = nullptr;
  bool started_ = false;
};

// Registers kind Fault::kKind: its factory reads Fault's options with
// Fault::parse and, when they are valid, builds a ProxyFaultInjector over a
// Fault. internal when the kind is registered already.
template <typename Fault>
Status add_proxy_fault(Registry& registry) {
  return registry.add(Fault::kKind, [](const std::string&, YamlOptions& options,
                                       FaultSettings settings) -> Result<std::unique_ptr<Injector>> {
    auto fault = std::make_shared<const Fault>(Fault::parse(options));
    if (!options.first_error().ok()) return options.first_error();
    return std::unique_ptr<Injector>(std::make_unique<ProxyFaultInjector>(std::move(fault), std::move(settings)));
  });
}

}  // namespace idemproof::injectors
