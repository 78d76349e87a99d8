#include "injectors/tcp_fault_injector.h"

#include "injectors/tcp_fault_proxy.h"

namespace idemproof::injectors {

const char* TcpDirectionName(TcpDirection direction) {
  return direction == TcpDirection::kUpstream ? "service->store" : "store->service";
}

std::string TcpMillis(std::chrono::nanoseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(duration).count()) + "ms";
}

std::optional<std::chrono::nanoseconds> ReadTcpWindow(YamlOptions& options) {
  auto window = options.duration("window");
  if (window && (window->count() <= 0 || *window > std::chrono::minutes(10)))
    options.fail_at("window", "must be more than 0 and at most 10m");
  return window;
}

TcpDirections ReadTcpDirection(YamlOptions& options) {
  const std::string direction = options.string("direction").value_or("both");
  if (direction != "upstream" && direction != "downstream" && direction != "both")
    options.fail_at("direction", "expected upstream, downstream or both, found '" + direction + "'");
  return {direction != "downstream", direction != "upstream"};
}

void RejectHttpSelectors(YamlOptions& options, const FaultSettings& s) {
  const char* why = "a tcp fault acts on connections: there is no request to select";
  if (s.method || s.path) options.fail_at("match", why);
  if (s.first) options.fail_at("first", why);
  if (s.every) options.fail_at("every", why);
  if (s.limit) options.fail_at("limit", why);
  if (s.probability != 1.0) options.fail_at("probability", why);
  if (s.seed != 0) options.fail_at("seed", why);
}

TcpFaultInjector::TcpFaultInjector(std::shared_ptr<const TcpFault> fault, FaultSettings settings)
    : kind_(fault->kind()), rule_(std::make_shared<TcpFaultRule>(std::move(fault), std::move(settings))) {}

TcpFaultInjector::~TcpFaultInjector() { heal(); }

Status TcpFaultInjector::start(const InjectorContext& context) {
  if (started_) return Status(StatusCode::kInternal, kind_ + " started twice");
  if (context.tcp_proxy == nullptr)
    return Status(StatusCode::kInvalidConfig, kind_ + " is a tcp fault: it acts on an egress with protocol: tcp");
  proxy_ = context.tcp_proxy;
  started_ = true;
  proxy_->arm(rule_);  // records the start event on the proxy's log
  return Status::Ok();
}

void TcpFaultInjector::heal() noexcept {
  if (!proxy_) return;
  try {
    proxy_->disarm(rule_);
  } catch (...) {
    // Healing must not throw; the rule is out of force either way.
  }
  proxy_ = nullptr;
}

InjectorCounters TcpFaultInjector::counters() const {
  const std::int64_t n = rule_->injected.load();
  return InjectorCounters{kind_, settings().name, FaultCounters{n, n, n}};
}

}  // namespace idemproof::injectors
