// A minimal blocking HTTP client over libcurl for the integration tests.
// Every call has a deadline; a transport failure (timeout, reset) comes back
// as status 0 with `error` set, never as an exception. Thread-safe: each call
// uses its own easy handle.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace idemproof::ref::testing {

struct HttpResult {
  long status = 0;                             // 0: no answer (see error)
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  std::string body;
  std::string error;

  std::optional<std::string> header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

struct HttpCall {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::optional<std::string> body;
  std::chrono::milliseconds timeout = std::chrono::seconds(15);
};

HttpResult http_call(const HttpCall& call);

// A blocking loopback connection to `port` (connect bounded by 5 s through
// SO_SNDTIMEO); -1 when it could not be made. The caller closes it.
int connect_loopback(int port);

// Sends raw bytes over a fresh loopback connection and returns what came back
// until the peer closed or `timeout` passed.
std::string raw_exchange(int port, const std::string& bytes,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace idemproof::ref::testing
