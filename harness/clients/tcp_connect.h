// A TCP connection to an http(s) origin, below any HTTP: the parts of the
// origin and one non-blocking connect with a deadline. Shared by the
// single-packet HTTP/2 bursts (h2_burst) and a start that waits only for
// the target's port to accept (runtime/target_process, `until: accepting`).
//
// Thread-safety: pure functions; the socket returned is the caller's.
#pragma once

#include <chrono>
#include <string>

namespace idemproof::runtime {

// An origin's parts: "http://HOST:PORT" or "https://HOST:PORT" (HOST may
// be [v6]; no port: the scheme's). A path, query or fragment after the
// authority is ignored (a base URL may have one).
struct OriginParts {
  bool tls = false;
  std::string host;           // brackets removed
  std::string port;
  bool port_written = false;  // the origin names its port
  std::string authority;      // as written
};
// REQUIRES: parts != nullptr. False when `origin` is no http(s) URL with a host.
bool SplitOrigin(const std::string& origin, OriginParts* parts);

// A connected non-blocking TCP_NODELAY socket to host:port (each address
// the name resolves to, in turn) within `timeout`, or -1 with `error` saying
// why. REQUIRES: error != nullptr.
int ConnectTcp(const std::string& host, const std::string& port, std::chrono::nanoseconds timeout,
               std::string* error);

}  // namespace idemproof::runtime
