#include "idemproof/ref/idempotency_key.h"

#include <string_view>

namespace idemproof::ref {
namespace {

// RFC 9110 tchar.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// RFC 8941 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE.
std::optional<std::string> parse_sf_string(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i + 1 < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '\\') {
      if (i + 2 >= raw.size()) return std::nullopt;
      const char next = raw[++i];
      if (next != '"' && next != '\\') return std::nullopt;
      out.push_back(next);
    } else if (c == '"' || c < 0x20 || c > 0x7E) {
      return std::nullopt;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> parse_idempotency_key(std::string_view raw, std::size_t max_length) {
  std::optional<std::string> key;
  if (!raw.empty() && raw.front() == '"') {
    key = parse_sf_string(raw);
  } else {
    bool token = !raw.empty();
    for (char c : raw) token = token && is_tchar(c);
    if (token) key = std::string(raw);
  }
  if (!key || key->empty() || key->size() > max_length) return std::nullopt;
  return key;
}

}  // namespace idemproof::ref
