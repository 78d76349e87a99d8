// fail: answer the client with `status` (default 503; 100..599) and `body`
// (default empty, Content-Type `content_type`, default text/plain) INSTEAD of
// forwarding: the upstream never sees the request. Between a service and its
// downstream (egress) it is "the provider failed": the service must treat
// the failure as retryable and not store it. Optional `retry_after` sets a
// Retry-After header. The connection stays usable.
//
// Thread-safety: immutable once built.
#pragma once

#include <optional>
#include <string>

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct FailOptions {
  int status = 503;
  std::string body;
  std::string content_type = "text/plain";
  std::optional<std::string> retry_after;
};

class Fail final : public ProxyFault {
 public:
  static constexpr const char* kKind = "fail";
  // Reads status, body, content_type, retry_after; errors go into `options`.
  static FailOptions parse(YamlOptions& options);

  explicit Fail(FailOptions options) : options_(std::move(options)) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
  const FailOptions& options() const { return options_; }

 private:
  FailOptions options_;
};

}  // namespace idemproof::injectors
