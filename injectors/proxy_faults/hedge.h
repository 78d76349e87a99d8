// hedge: send `copies` (default 2, at most 16) of the request at once, each
// on its own connection. The client gets the first answer; the fault event
// carries the others.
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct HedgeOptions {
  int copies = 2;
};

class Hedge final : public ProxyFault {
 public:
  static constexpr const char* kKind = "hedge";
  // Reads copies; errors go into `options`.
  static HedgeOptions parse(YamlOptions& options);

  explicit Hedge(HedgeOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
  const HedgeOptions& options() const { return options_; }

 private:
  HedgeOptions options_;
};

}  // namespace idemproof::injectors
