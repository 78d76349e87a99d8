// cut-after (tcp): close a connection once `bytes` (required, >= 0) more
// bytes passed in the counted `direction` (`upstream`: service -> store,
// `downstream`: store -> service, `both`, the default: either, each
// counted alone) since the fault was armed; the bytes beyond are dropped.
// A store connection that dies in the middle of a statement or an answer.
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

struct CutAfterOptions {
  std::optional<std::chrono::nanoseconds> window;
  std::int64_t bytes = 0;
  TcpDirections directions;
};

class CutAfter final : public TcpFault {
 public:
  static constexpr const char* kKind = "cut-after";
  // Errors go into `options`.
  static CutAfterOptions parse(YamlOptions& options);

  explicit CutAfter(CutAfterOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  void on_chunk(TcpChunk& chunk) const override;
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  const CutAfterOptions& options() const { return options_; }

 private:
  CutAfterOptions options_;
};

}  // namespace idemproof::injectors
