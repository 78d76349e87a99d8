#include "idemproof/ref/duration.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <utility>

namespace idemproof::ref {
namespace {

constexpr std::array<std::pair<std::string_view, std::int64_t>, 5> kUnits{{
    {"h", 3'600'000'000'000},
    {"m", 60'000'000'000},
    {"s", 1'000'000'000},
    {"ms", 1'000'000},
    {"us", 1'000},
}};

}  // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds(0);  // the one unit-less duration
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 18) return std::nullopt;
  std::int64_t value = 0;
  std::from_chars(text.data(), text.data() + digits, value);
  const std::string_view unit = text.substr(digits);
  for (const auto& [name, ns] : kUnits) {
    if (unit != name) continue;
    if (value > std::numeric_limits<std::int64_t>::max() / ns) return std::nullopt;
    return std::chrono::nanoseconds(value * ns);
  }
  return std::nullopt;
}

std::string format_duration(std::chrono::nanoseconds d) {
  const std::int64_t ns = d.count();
  for (const auto& [name, unit_ns] : kUnits) {
    if (ns % unit_ns == 0) return std::to_string(ns / unit_ns) + std::string(name);
  }
  return std::to_string(ns / 1000) + "us";  // below a microsecond: truncated
}

}  // namespace idemproof::ref
