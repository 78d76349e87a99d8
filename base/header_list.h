// HeaderList: HTTP header fields as name/value pairs, in the order sent or
// received, names as written. Every room that holds headers (the harness's
// client and history, the proxy's snapshots, the reference service, the
// payment stub) uses this one type; lookups are case-insensitive (RFC 9110
// field names).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
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

// The header block of an HTTP/2 request (RFC 9113 8.3.1): :method, :scheme,
// :authority (Host's value when `headers` has one, else `authority`) and
// :path, then `headers` with lowercase names, minus the HTTP/1.1
// connection-specific fields HTTP/2 forbids (8.2.2: Connection, Keep-Alive,
// Proxy-Connection, Transfer-Encoding, Upgrade, TE other than "trailers";
// Host became :authority), plus a content-length for a body of `body_size`
// bytes when none was given. Shared by the harness's single-packet bursts and
// the chaos proxy's HTTP/2 upstream.
HeaderList http2_request_fields(std::string_view method, std::string_view scheme, std::string_view authority,
                                std::string_view path, const HeaderList& headers, std::size_t body_size);

}  // namespace idemproof
