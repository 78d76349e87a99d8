#include "base/duration.h"

#include <cctype>
#include <limits>

namespace idemproof {

Result<Duration> ParseDuration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("bad duration '" + std::string(text) + "': " + why +
                                   " (write an integer and one unit: us, ms, s, m, h, e.g. 250ms)");
  };
  if (text == "0") return Duration(0);  // the one unit-less duration: zero in every unit
  std::size_t i = 0;
  std::int64_t n = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    int digit = text[i] - '0';
    if (n > (std::numeric_limits<std::int64_t>::max() - digit) / 10) return bad("too large");
    n = n * 10 + digit;
    ++i;
  }
  if (i == 0) return bad("no leading integer");
  std::string_view unit = text.substr(i);
  std::int64_t scale = 0;
  if (unit == "us") scale = 1'000;
  else if (unit == "ms") scale = 1'000'000;
  else if (unit == "s") scale = 1'000'000'000;
  else if (unit == "m") scale = 60'000'000'000;
  else if (unit == "h") scale = 3'600'000'000'000;
  else if (unit.empty()) return bad("missing unit");
  else return bad("unknown unit '" + std::string(unit) + "'");
  if (n > std::numeric_limits<std::int64_t>::max() / scale) return bad("too large");
  return Duration(n * scale);
}

std::string FormatDuration(Duration d) {
  std::int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  struct Unit {
    std::int64_t us;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{3'600'000'000, "h"}, {60'000'000, "m"}, {1'000'000, "s"}, {1'000, "ms"}};
  if (us == 0) return "0s";
  for (const Unit& u : kUnits) {
    if (us % u.us == 0) return std::to_string(us / u.us) + u.name;
  }
  return std::to_string(us) + "us";
}

}  // namespace idemproof
