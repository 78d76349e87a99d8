// HttpRequest / HttpResponse: transport-neutral HTTP messages, for code that
// maps a request to an answer without a socket (the reference service's
// core, the payment stub's routes, the simulation). A server translates its
// wire messages (Beast's) to and from these; the harness's client sends an
// HttpRequest to an origin (runtime::OutgoingRequest, clients/http_client.h).
// Plain values, not thread-safe for concurrent mutation.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/header_list.h"

namespace idemproof {

struct HttpRequest {
  std::string method = "GET";
  std::string target;  // origin-form: "/orders?biz_no=b1"
  HeaderList headers;  // in order, names as written
  std::string body;    // empty = no body

  std::optional<std::string> header(std::string_view name) const {
    return find_header(headers, name);
  }
};

struct HttpResponse {
  int status = 200;
  HeaderList headers;  // Content-Type included; Content-Length is the server's job
  std::string body;

  std::optional<std::string> header(std::string_view name) const {
    return find_header(headers, name);
  }
  // Replaces every header called `name` with one `name: value`.
  void set_header(std::string_view name, std::string value);
};

}  // namespace idemproof
