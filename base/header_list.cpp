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

}  // namespace idemproof
