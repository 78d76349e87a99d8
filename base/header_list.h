// HeaderList: HTTP header fields as name/value pairs, in the order sent or
// received, names as written. Every room that holds headers (the harness's
// client and history, the proxy's snapshots, the reference service, the
// payment stub) uses this one type; lookups are case-insensitive (RFC 9110
// field names).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace idemproof {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// True when `a` and `b` are equal ignoring ASCII case.
bool equals_ignoring_case(std::string_view a, std::string_view b);

// First value of header `name` (case-insensitive), if present.
std::optional<std::string> find_header(const HeaderList& headers, std::string_view name);

}  // namespace idemproof
