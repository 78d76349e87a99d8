#include "injectors/proxy_fault_injector.h"

#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"

namespace idemproof::injectors {

ProxyFaultInjector::ProxyFaultInjector(std::shared_ptr<const ProxyFault> fault, FaultSettings settings)
    : kind_(fault->kind()), rule_(std::make_shared<ProxyFaultRule>(std::move(fault), std::move(settings))) {}

ProxyFaultInjector::~ProxyFaultInjector() { heal(); }

static FaultEvent arming_event(const std::string& kind, const std::string& name,
                               const char* phase) {
  FaultEvent e;
  e.time_ns = steady_now_ns();
  e.fault = kind;
  e.name = name;
  e.phase = phase;
  return e;
}

Status ProxyFaultInjector::start(const InjectorContext& context) {
  if (started_) return Status(StatusCode::kInternal, kind_ + " started twice");
  if (context.proxy == nullptr) {
    return Status(StatusCode::kInvalidConfig, kind_ + " needs the proxy between client and target");
  }
  proxy_ = context.proxy;
  events_ = context.events;
  started_ = true;
  if (events_) events_->record(arming_event(kind_, settings().name, "start"));
  proxy_->arm(rule_);
  return Status::Ok();
}

void ProxyFaultInjector::heal() noexcept {
  if (!proxy_) return;
  proxy_->disarm(rule_);
  proxy_ = nullptr;
  try {
    if (events_) events_->record(arming_event(kind_, settings().name, "heal"));
  } catch (...) {
    // Healing must not throw; a lost heal event is the lesser harm.
  }
}

InjectorCounters ProxyFaultInjector::counters() const {
  return InjectorCounters{kind_, settings().name, rule_->selector.counters()};
}

}  // namespace idemproof::injectors
