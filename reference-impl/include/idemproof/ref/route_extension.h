// RouteExtension: routes a component other than ReferenceService answers
// (side effects: payments, provider callbacks, the queue inbox), plugged into
// the router with ReferenceService::add_extension(). Implementations are
// thread-safe like handle_request().
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/http_message.h"

namespace idemproof::ref {

class RouteExtension {
 public:
  virtual ~RouteExtension() = default;
  // The answer when `rel` (the path without the base path) is one of this
  // extension's routes; nullopt to let the next router try. `path` is the
  // full concrete path, `query` the query string without '?'.
  virtual std::optional<HttpResponse> route(const HttpRequest& request, std::string_view rel,
                                            const std::string& path, const std::string& query) = 0;
};

}  // namespace idemproof::ref
