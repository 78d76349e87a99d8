// IdempotencyKey: parsing of the key header's value.
//
// Accepted spellings (IETF draft "The Idempotency-Key HTTP Header Field"):
// an RFC 9110 token (`abc-123`) or an RFC 8941 sf-string (`"abc 123"`, with
// `\"` and `\\` escapes). The key is the token, or the string's content; it
// must be 1..255 characters. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace idemproof::ref {

inline constexpr std::size_t kMaxIdempotencyKeyLength = 255;

// The key carried by header value `raw`, or nullopt if `raw` is not a valid
// key of 1..max_length characters.
std::optional<std::string> parse_idempotency_key(std::string_view raw,
                                                 std::size_t max_length = kMaxIdempotencyKeyLength);

}  // namespace idemproof::ref
