#include "clients/trace_context.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>

namespace idemproof::runtime {
namespace {

std::string Hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool LowerHex(const std::string& s, std::size_t from, std::size_t n) {
  if (s.size() < from + n) return false;
  for (std::size_t i = from; i < from + n; ++i) {
    const char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(const std::string& s, std::size_t from, std::size_t n) {
  return s.compare(from, n, std::string(n, '0')) == 0;
}

}  // namespace

std::string TraceIdFor(const std::string& seed_text) {
  std::uint64_t hi = std::hash<std::string>{}(seed_text + "#trace-hi");
  const std::uint64_t lo = std::hash<std::string>{}(seed_text + "#trace-lo");
  if (hi == 0 && lo == 0) hi = 1;  // all zeros is invalid
  return Hex64(hi) + Hex64(lo);
}

std::string NewSpanId() {
  thread_local std::mt19937_64 rng{(std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()};
  std::uint64_t v = 0;
  while (v == 0) v = rng();
  return Hex64(v);
}

std::string Traceparent(const std::string& trace_id, const std::string& span_id) {
  return "00-" + trace_id + "-" + span_id + "-01";
}

bool WellFormedTraceparent(const std::string& v) {
  // 00-(32)-(16)-(2): 55 characters.
  return v.size() == 55 && v.compare(0, 3, "00-") == 0 && LowerHex(v, 3, 32) && !AllZero(v, 3, 32) &&
         v[35] == '-' && LowerHex(v, 36, 16) && !AllZero(v, 36, 16) && v[52] == '-' && LowerHex(v, 53, 2);
}

}  // namespace idemproof::runtime
