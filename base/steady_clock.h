// steady_now_ns: now on std::chrono::steady_clock, in nanoseconds since its
// epoch. The one time base of the harness's events, the injectors' fault
// events and the reference service's X-Arrival-Ns: they line up in one
// history only because all three read this same clock.
//
// Thread-safety: safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace idemproof {

inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace idemproof
