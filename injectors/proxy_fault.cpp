#include "injectors/proxy_fault.h"

#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "injectors/registry.h"

namespace idemproof::injectors {

const char* to_string(ProxyFaultKind kind) {
  switch (kind) {
    case ProxyFaultKind::kDropResponse: return "drop-response";
    case ProxyFaultKind::kReplayUpstream: return "replay-upstream";
    case ProxyFaultKind::kHedge: return "hedge";
    case ProxyFaultKind::kDelay: return "delay";
    case ProxyFaultKind::kReset: return "reset";
  }
  return "unknown";
}

ProxyFaultInjector::ProxyFaultInjector(ProxyFaultSpec spec, FaultSettings settings)
    : kind_(to_string(spec.kind)),
      rule_(std::make_shared<ProxyFaultRule>(spec, std::move(settings))) {}

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

static Result<std::unique_ptr<Injector>> build_fault(ProxyFaultKind kind, YamlOptions& o,
                                                     FaultSettings settings) {
  ProxyFaultSpec spec;
  spec.kind = kind;
  const std::string k = to_string(kind);
  switch (kind) {
    case ProxyFaultKind::kDropResponse: {
      const std::string mode = o.string("mode").value_or("close");
      if (mode != "close" && mode != "hold") {
        o.fail_at("mode", "expected close or hold, got '" + mode + "'");
      }
      spec.hold = mode == "hold";
      spec.hold_limit = o.duration("hold_limit").value_or(spec.hold_limit);
      break;
    }
    case ProxyFaultKind::kReplayUpstream: {
      const std::string after = o.string("after").value_or("response");
      if (after != "response") {
        auto d = parse_duration(after);
        if (!d) {
          o.fail_at("after", "expected 'response' or a duration");
        } else {
          spec.replay_after = d.value();
        }
      }
      spec.times = static_cast<int>(o.integer("times", 1, 16).value_or(1));
      break;
    }
    case ProxyFaultKind::kHedge:
      spec.copies = static_cast<int>(o.integer("copies", 2, 16).value_or(2));
      break;
    case ProxyFaultKind::kDelay: {
      const std::string side = o.string("side").value_or("request");
      if (side != "request" && side != "response") {
        o.fail_at("side", "expected request or response");
      }
      spec.response_side = side == "response";
      auto d = o.duration("duration");
      if (!d) o.require("duration");
      spec.duration = d.value_or(std::chrono::nanoseconds(0));
      break;
    }
    case ProxyFaultKind::kReset:
      break;
  }
  if (!o.first_error().ok()) return o.first_error();
  return std::unique_ptr<Injector>(new ProxyFaultInjector(spec, std::move(settings)));
}

void register_proxy_faults(Registry& registry) {
  for (ProxyFaultKind kind : {ProxyFaultKind::kDropResponse, ProxyFaultKind::kReplayUpstream,
                              ProxyFaultKind::kHedge, ProxyFaultKind::kDelay,
                              ProxyFaultKind::kReset}) {
    registry.add(to_string(kind), [kind](const std::string&, YamlOptions& o, FaultSettings s) {
      return build_fault(kind, o, std::move(s));
    });
  }
}

}  // namespace idemproof::injectors
