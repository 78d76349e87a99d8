// Duration: the command line's duration syntax, an integer with a unit
// (`us`, `ms`, `s`, `m`, `h`), e.g. "250ms" or "24h".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace idemproof::ref {

// Parses "250ms" (and a bare "0"); nullopt when the text is not a
// non-negative integer followed by one of the units.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

// The shortest exact spelling of `d` in the same syntax ("1500ms", "24h").
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace idemproof::ref
