// RequestFingerprint: what binds an idempotency key to one payload.
//
// SHA-256 (hex) of the method, the concrete path and the canonical body,
// separated by newlines. The canonical body of JSON is nlohmann::json's
// dump() of the parsed document (object keys sorted, no insignificant white
// space), so two spellings of the same JSON share a fingerprint. Pure
// functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace idemproof::ref {

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// Fingerprint of a request whose body is already canonical ("" for no body).
std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view canonical_body);

}  // namespace idemproof::ref
