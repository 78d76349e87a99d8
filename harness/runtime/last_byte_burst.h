// LastByteBurst: the interpreter's BurstSender for `burst` steps with
// `mode: last_byte`, over the injectors' fire_burst() (injectors/burst.h).
//
// Each OutgoingRequest becomes raw HTTP/1.1 (Host and Content-Length added)
// on its own connection; all but the final `final_bytes` byte(s) are written
// on every connection, and after `settle` the final bytes of all N go out
// from one thread in a tight loop. Answers map to HttpExchange outcomes: answered,
// kNoAnswer (sent, no answer in time: unknown), kNotSent (never complete on
// the wire). The read deadline is the first request's timeout.
// LastHarnessSpreadNs() is the last burst's last-minus-first final write.
//
// Each request goes to its own URL's host:port (a burst split across the
// target's instances). Only http:// URLs on a numeric host or localhost. A request the burst
// cannot send at all (bad URL) ends as kNotSent with the reason.
//
// Thread-safety: one Send() at a time per object.
#pragma once

#include <chrono>
#include <optional>

#include "runtime/run_types.h"

namespace idemproof::runtime {

class LastByteBurst : public BurstSender {
 public:
  struct Options {
    std::size_t final_bytes = 1;
    std::chrono::nanoseconds settle = std::chrono::milliseconds(5);
  };
  LastByteBurst() = default;
  explicit LastByteBurst(Options options) : options_(options) {}

  std::vector<HttpExchange> Send(const std::vector<OutgoingRequest>& requests) override;
  std::optional<std::int64_t> LastHarnessSpreadNs() const override { return last_spread_; }

 private:
  Options options_;
  std::optional<std::int64_t> last_spread_;
};

}  // namespace idemproof::runtime
