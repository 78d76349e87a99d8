#include "base/http_message.h"

#include <algorithm>

namespace idemproof {

void HttpResponse::set_header(std::string_view name, std::string value) {
  std::erase_if(headers, [&](const auto& h) { return equals_ignoring_case(h.first, name); });
  headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace idemproof
