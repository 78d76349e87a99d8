// kill-after-answer: the side-effect boundary, for a proxy between a service
// and its own downstream (egress). The proxy forwards the service's request,
// reads the downstream's full answer — the downstream has acted (charged) —
// and SIGKILLs the service (`pid`, required, > 1; its whole process group
// unless `group: false`) BEFORE forwarding that answer; then it closes the
// connection. The service dies knowing nothing of the answer; the fault event
// carries it. When the downstream gives no answer, nothing is killed: the
// service gets the proxy's 502/504 and the event says so.
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct KillAfterAnswerOptions {
  long pid = 0;
  bool group = true;
};

class KillAfterAnswer final : public ProxyFault {
 public:
  static constexpr const char* kKind = "kill-after-answer";
  // Reads pid (an integer, or its decimal text) and group; errors go into `options`.
  static KillAfterAnswerOptions parse(YamlOptions& options);

  explicit KillAfterAnswer(KillAfterAnswerOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
  const KillAfterAnswerOptions& options() const { return options_; }

 private:
  KillAfterAnswerOptions options_;
};

}  // namespace idemproof::injectors
