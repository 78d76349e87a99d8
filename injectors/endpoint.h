// Endpoint: a numeric IPv4/IPv6 host and a TCP port ("127.0.0.1:8080").
//
// Only numeric hosts (and "localhost", read as 127.0.0.1): the injectors work
// on loopback and never resolve names. Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace idemproof::injectors {

struct Endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string to_string() const;  // "host:port", IPv6 hosts in brackets
};

// "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (host 127.0.0.1); also accepts
// a leading "http://" and a trailing "/" (a base URL without a path).
Result<Endpoint> parse_endpoint(std::string_view text);

}  // namespace idemproof::injectors
