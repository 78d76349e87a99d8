#include "injectors/endpoint.h"

#include <charconv>

namespace idemproof::injectors {

std::string Endpoint::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Endpoint> parse_endpoint(std::string_view text) {
  const std::string original(text);
  auto bad = [&](const std::string& why) {
    return Status(StatusCode::kInvalidConfig, "not an endpoint: '" + original + "' (" + why + ")");
  };
  if (text.substr(0, 7) == "http://") text.remove_prefix(7);
  if (!text.empty() && text.back() == '/') text.remove_suffix(1);
  Endpoint ep;
  std::string_view port_text = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("expected [V6]:PORT");
    }
    ep.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    if (colon > 0) ep.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (ep.host == "localhost") ep.host = "127.0.0.1";
  unsigned port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
      port > 65535) {
    return bad("port must be 0..65535");
  }
  ep.port = static_cast<std::uint16_t>(port);
  return ep;
}

}  // namespace idemproof::injectors
