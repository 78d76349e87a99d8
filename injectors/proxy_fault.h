// Proxy faults: what the chaos proxy does to one HTTP exchange.
//
//   drop-response    forward, let the target answer, then close the client's
//                    connection (mode: close, default) or hold it open without
//                    an answer until the client gives up (mode: hold, at most
//                    hold_limit, default 30s). The client never sees the answer.
//   replay-upstream  a gateway retry the client never sees: send the same
//                    request upstream again after the first answer (after:
//                    response, default) or after a timeout (after: 100ms — the
//                    copy goes out on a fresh connection if the first has not
//                    answered by then); `times` extra sends (default 1). The
//                    client gets one answer: the last copy's.
//   hedge            send `copies` (default 2) at once on separate connections;
//                    the client gets the first answer, the others are recorded.
//   delay            hold the request (side: request, default) or the answer
//                    (side: response) for `duration` (required).
//   reset            reset the client's connection (RST) before forwarding.
//
// Each rule pairs a fault with its FaultSelector; the proxy offers every
// request to its armed rules in arming order and applies the first that fires
// (later rules do not see that request).
//
// Thread-safety: ProxyFaultRule is immutable apart from its selector, which is
// thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "injectors/injector.h"

namespace idemproof::injectors {

class Registry;

enum class ProxyFaultKind { kDropResponse, kReplayUpstream, kHedge, kDelay, kReset };

const char* to_string(ProxyFaultKind kind);

struct ProxyFaultSpec {
  ProxyFaultKind kind = ProxyFaultKind::kDelay;
  // drop-response
  bool hold = false;
  std::chrono::nanoseconds hold_limit = std::chrono::seconds(30);
  // replay-upstream: nullopt = after the first answer
  std::optional<std::chrono::nanoseconds> replay_after;
  int times = 1;
  // hedge
  int copies = 2;
  // delay
  bool response_side = false;
  std::chrono::nanoseconds duration{0};
};

struct ProxyFaultRule {
  ProxyFaultRule(ProxyFaultSpec s, FaultSettings settings)
      : spec(s), selector(std::move(settings)) {}
  const ProxyFaultSpec spec;
  FaultSelector selector;
};

// An Injector that arms one rule on the context's proxy.
class ProxyFaultInjector : public Injector {
 public:
  ProxyFaultInjector(ProxyFaultSpec spec, FaultSettings settings);
  ~ProxyFaultInjector() override;

  const std::string& kind() const override { return kind_; }
  const FaultSettings& settings() const override { return rule_->selector.settings(); }
  // needs_proxy when context.proxy is null; invalid_state when started twice.
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

// Registers drop-response, replay-upstream, hedge, delay and reset.
void register_proxy_faults(Registry& registry);

}  // namespace idemproof::injectors
