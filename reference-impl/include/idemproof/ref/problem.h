// Problem details (RFC 9457): every error answer of the reference service is
// application/problem+json {"type": "urn:idemproof:<name>", "title", "status",
// "detail"}.
#pragma once

#include <string>
#include <string_view>

#include "idemproof/ref/http_message.h"

namespace idemproof::ref {

inline constexpr std::string_view kProblemContentType = "application/problem+json";
inline constexpr std::string_view kJsonContentType = "application/json";

// A problem answer; `name` becomes the type "urn:idemproof:<name>".
HttpResponse problem_response(int status, std::string_view name, std::string_view title,
                              std::string_view detail);

}  // namespace idemproof::ref
