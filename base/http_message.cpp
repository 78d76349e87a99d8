#include "base/http_message.h"

#include <algorithm>

namespace idemproof {

std::size_t TargetStart(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return 0;
  return std::min(url.find('/', scheme + 3), url.size());
}

std::string OriginForm(std::string_view url) {
  const std::string_view target = url.substr(TargetStart(url));
  return target.empty() && !url.empty() ? "/" : std::string(target);
}

void HttpResponse::set_header(std::string_view name, std::string value) {
  std::erase_if(headers, [&](const auto& h) { return equals_ignoring_case(h.first, name); });
  headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace idemproof
