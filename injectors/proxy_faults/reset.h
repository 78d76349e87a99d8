// reset: reset the client's connection (RST) before forwarding; the request
// never reaches the target. No options of its own.
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct ResetOptions {};

class Reset final : public ProxyFault {
 public:
  static constexpr const char* kKind = "reset";
  static ResetOptions parse(YamlOptions&) { return {}; }

  explicit Reset(ResetOptions) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
};

}  // namespace idemproof::injectors
