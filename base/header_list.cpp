#include "base/header_list.h"

#include <algorithm>
#include <cctype>

namespace idemproof {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<std::string> find_header(const HeaderList& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (equals_ignoring_case(k, name)) return v;
  }
  return std::nullopt;
}

HeaderList http2_request_fields(std::string_view method, std::string_view scheme, std::string_view authority,
                                std::string_view path, const HeaderList& headers, std::size_t body_size) {
  HeaderList out = {{":method", std::string(method.empty() ? "GET" : method)},
                    {":scheme", std::string(scheme)},
                    {":authority", std::string(authority)},
                    {":path", std::string(path.empty() ? "/" : path)}};
  bool has_length = false;
  for (const auto& [name, value] : headers) {
    std::string lower = name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "host") out[2].second = value;
    if (lower == "host" || lower == "connection" || lower == "keep-alive" || lower == "proxy-connection" ||
        lower == "transfer-encoding" || lower == "upgrade" || (lower == "te" && !equals_ignoring_case(value, "trailers")))
      continue;
    if (lower == "content-length") has_length = true;
    out.emplace_back(std::move(lower), value);
  }
  if (!has_length && body_size > 0) out.emplace_back("content-length", std::to_string(body_size));
  return out;
}

}  // namespace idemproof
