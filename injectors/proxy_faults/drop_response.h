// drop-response: forward the request, let the target answer, then close the
// client's connection without the answer (mode: close, default) or hold it
// open without an answer until the client gives up (mode: hold, at most
// hold_limit, default 30s). The client never sees the answer; the fault
// event carries it.
//
// Thread-safety: immutable once built.
#pragma once

#include <chrono>

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct DropResponseOptions {
  bool hold = false;
  std::chrono::nanoseconds hold_limit = std::chrono::seconds(30);
};

class DropResponse final : public ProxyFault {
 public:
  static constexpr const char* kKind = "drop-response";
  // Reads mode and hold_limit; errors go into `options`.
  static DropResponseOptions parse(YamlOptions& options);

  explicit DropResponse(DropResponseOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
  const DropResponseOptions& options() const { return options_; }

 private:
  DropResponseOptions options_;
};

}  // namespace idemproof::injectors
