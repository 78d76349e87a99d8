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

// Where an absolute URL's origin-form target starts ("http://h:1/a?b=1" ->
// 10): its first '/' after "://"; url.size() when it has no path; 0 when it
// has no "://" (all of it is the target).
std::size_t TargetStart(std::string_view url);
// The origin-form target of an absolute URL: "/a?b=1" ("/" when it has no
// path; "" for "").
std::string OriginForm(std::string_view url);

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
