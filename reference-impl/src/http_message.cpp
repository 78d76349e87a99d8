#include "idemproof/ref/http_message.h"

#include <algorithm>
#include <cctype>

namespace idemproof::ref {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<std::string> find_header(const HeaderList& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return std::nullopt;
}

void HttpResponse::set_header(std::string_view name, std::string value) {
  std::erase_if(headers, [&](const auto& h) { return iequals(h.first, name); });
  headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace idemproof::ref
