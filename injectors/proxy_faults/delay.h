// delay: hold the request (side: request, default) before forwarding it, or
// the answer (side: response) before returning it, for `duration`
// (required). The client gets the target's answer, late.
//
// Thread-safety: immutable once built.
#pragma once

#include <chrono>

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct DelayOptions {
  bool response_side = false;
  std::chrono::nanoseconds duration{0};
};

class Delay final : public ProxyFault {
 public:
  static constexpr const char* kKind = "delay";
  // Reads side and duration; errors go into `options`.
  static DelayOptions parse(YamlOptions& options);

  explicit Delay(DelayOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
  const DelayOptions& options() const { return options_; }

 private:
  DelayOptions options_;
};

}  // namespace idemproof::injectors
