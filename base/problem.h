// Answer bodies of the services in this project (the reference service, the
// payment stub): JSON for results and problem details (RFC 9457) for every
// error: application/problem+json
// {"type": "urn:idemproof:<name>", "title", "status", "detail"}.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/http_message.h"

namespace idemproof {

inline constexpr std::string_view kProblemContentType = "application/problem+json";
inline constexpr std::string_view kJsonContentType = "application/json";

// An application/json answer; invalid UTF-8 from request data is replaced.
HttpResponse json_response(int status, const nlohmann::json& body);

// A problem answer; `name` becomes the type "urn:idemproof:<name>".
HttpResponse problem_response(int status, std::string_view name, std::string_view title,
                              std::string_view detail);

}  // namespace idemproof
