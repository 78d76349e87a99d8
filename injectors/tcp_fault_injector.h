// TcpFaultInjector: the Injector (injector.h) that puts one tcp fault
// (tcp_fault.h) in force on the context's TcpFaultProxy, add_tcp_fault<F>,
// which registers a tcp fault kind in a Registry as such an injector, and
// register_builtin_tcp_faults (tcp_faults/builtin_tcp_faults.cpp): pause,
// refuse, reset, cut-after. The tcp kinds live in a registry of their own:
// `reset` names one fault on an http hop and another on a tcp one.
//
// A tcp fault takes `name` and `window` and its own options; the HTTP
// selectors (match, first, every, limit, probability, seed) are errors:
// there is no request to match, only connections.
//
// Thread-safety: as every Injector (injector.h).
#pragma once

#include <memory>
#include <string>

#include "injectors/injector.h"
#include "injectors/registry.h"
#include "injectors/tcp_fault.h"
#include "injectors/yaml_options.h"

namespace idemproof::injectors {

class TcpFaultInjector : public Injector {
 public:
  // REQUIRES: fault != nullptr.
  TcpFaultInjector(std::shared_ptr<const TcpFault> fault, FaultSettings settings);
  ~TcpFaultInjector() override;

  const std::string& kind() const override { return kind_; }
  const FaultSettings& settings() const override { return rule_->settings; }
  // invalid_config when context.tcp_proxy is null (an http hop); internal
  // when started twice.
  Status start(const InjectorContext& context) override;
  void heal() noexcept override;
  InjectorCounters counters() const override;

 private:
  std::string kind_;
  std::shared_ptr<TcpFaultRule> rule_;
  TcpFaultProxy* proxy_ = nullptr;
  bool started_ = false;
};

// Rejects the HTTP selectors in `settings` (errors go into `options`).
void RejectHttpSelectors(YamlOptions& options, const FaultSettings& settings);

template <typename Fault>
Status add_tcp_fault(Registry& registry) {
  return registry.add(Fault::kKind, [](const std::string&, YamlOptions& options,
                                       FaultSettings settings) -> Result<std::unique_ptr<Injector>> {
    RejectHttpSelectors(options, settings);
    auto fault = std::make_shared<const Fault>(Fault::parse(options));
    if (!options.first_error().ok()) return options.first_error();
    return std::unique_ptr<Injector>(std::make_unique<TcpFaultInjector>(std::move(fault), std::move(settings)));
  });
}

void register_builtin_tcp_faults(Registry& registry);

}  // namespace idemproof::injectors
