#include "base/problem.h"

#include <nlohmann/json.hpp>

namespace idemproof {

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse r;
  r.status = status;
  r.set_header("Content-Type", std::string(kJsonContentType));
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpResponse problem_response(int status, std::string_view name, std::string_view title,
                              std::string_view detail) {
  const nlohmann::json body = {
      {"type", "urn:idemproof:" + std::string(name)},
      {"title", title},
      {"status", status},
      {"detail", detail},
  };
  HttpResponse response;
  response.status = status;
  response.set_header("Content-Type", std::string(kProblemContentType));
  // Replace invalid UTF-8 from request data rather than throw.
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

}  // namespace idemproof
