// Clock: where the reference service reads "now" from.
//
// Lease expiries and dedup TTLs are stored in the database, so they must be
// comparable across restarts: the clock is wall-clock (UTC) time with
// nanosecond resolution. SystemClock reads the real clock; FakeClock is set by
// tests. Both are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace idemproof::ref {

using Nanos = std::chrono::nanoseconds;
using TimePoint = std::chrono::sys_time<Nanos>;

class Clock {
 public:
  virtual ~Clock() = default;
  // The current UTC time.
  virtual TimePoint now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override;
};

// A clock that only moves when told to. Starts at `start`.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start);
  TimePoint now() const override;
  void advance(Nanos by);
  void set(TimePoint to);

 private:
  std::atomic<std::int64_t> now_ns_;
};

// Nanoseconds since the Unix epoch, and back (the stored representation).
std::int64_t to_epoch_ns(TimePoint t);
TimePoint from_epoch_ns(std::int64_t ns);

// `t + d`, saturating at TimePoint::max() instead of overflowing.
TimePoint saturating_add(TimePoint t, Nanos d);

// RFC 3339 UTC with microseconds: "2024-05-01T12:00:00.123456Z".
std::string format_rfc3339(TimePoint t);

}  // namespace idemproof::ref
