// Query strings of request targets: "a=1&b=x%20y". Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace idemproof {

// Splits an origin-form target into path and query (without the '?').
std::pair<std::string, std::string> split_target(std::string_view target);

// The percent-decoded value of the first `name` parameter ('+' is a space);
// nullopt when absent or when its encoding is broken.
std::optional<std::string> query_parameter(std::string_view query, std::string_view name);

// RFC 3986 unreserved characters kept, every other byte %XX (upper case).
std::string percent_encode(std::string_view text);

}  // namespace idemproof
