#include "idemproof/ref/clock.h"

#include <cstdio>
#include <ctime>
#include <limits>

namespace idemproof::ref {

TimePoint SystemClock::now() const {
  return std::chrono::time_point_cast<Nanos>(std::chrono::system_clock::now());
}

FakeClock::FakeClock(TimePoint start) : now_ns_(to_epoch_ns(start)) {}

TimePoint FakeClock::now() const { return from_epoch_ns(now_ns_.load()); }

void FakeClock::advance(Nanos by) { now_ns_.fetch_add(by.count()); }

void FakeClock::set(TimePoint to) { now_ns_.store(to_epoch_ns(to)); }

std::int64_t to_epoch_ns(TimePoint t) { return t.time_since_epoch().count(); }

TimePoint from_epoch_ns(std::int64_t ns) { return TimePoint(Nanos(ns)); }

TimePoint saturating_add(TimePoint t, Nanos d) {
  const auto max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t base = to_epoch_ns(t);
  if (d.count() > 0 && base > max - d.count()) return TimePoint::max();
  return t + d;
}

std::string format_rfc3339(TimePoint t) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
  const std::time_t tt = secs.time_since_epoch().count();
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(micros));
  return buf;
}

}  // namespace idemproof::ref
