// HttpRequest / HttpResponse: the transport-neutral messages the reference
// service maps between. The server translates Beast messages to and from
// these; the core and its tests never see a socket. Plain values, not
// thread-safe for concurrent mutation.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace idemproof::ref {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// First value of header `name` (case-insensitive), if present.
std::optional<std::string> find_header(const HeaderList& headers, std::string_view name);

struct HttpRequest {
  std::string method;  // "POST"
  std::string target;  // origin-form: "/orders?biz_no=b1"
  HeaderList headers;
  std::string body;

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

}  // namespace idemproof::ref
