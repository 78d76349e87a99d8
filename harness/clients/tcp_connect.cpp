#include "clients/tcp_connect.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace idemproof::runtime {

bool SplitOrigin(const std::string& origin, OriginParts* parts) {
  const std::size_t mark = origin.find("://");
  if (mark == std::string::npos) return false;
  const std::string scheme = origin.substr(0, mark);
  if (scheme != "http" && scheme != "https") return false;
  parts->tls = scheme == "https";
  parts->authority = origin.substr(mark + 3);
  parts->authority.resize(std::min(parts->authority.size(), parts->authority.find_first_of("/?#")));
  const std::string& authority = parts->authority;
  const std::size_t colon = authority.rfind(':');
  if (colon == std::string::npos || authority.find(']', colon) != std::string::npos) {
    parts->port = parts->tls ? "443" : "80";
    parts->host = authority;
  } else {
    parts->host = authority.substr(0, colon);
    parts->port = authority.substr(colon + 1);
    parts->port_written = true;
  }
  if (parts->host.size() > 1 && parts->host.front() == '[') parts->host = parts->host.substr(1, parts->host.size() - 2);
  return !parts->host.empty();
}

int ConnectTcp(const std::string& host, const std::string& port, std::chrono::nanoseconds timeout,
               std::string* error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    return -1;
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> hold(found, &::freeaddrinfo);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) return fd;
    if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      const auto left = std::max<std::int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count(), 1);
      int soerr = 0;
      socklen_t len = sizeof soerr;
      if (::poll(&p, 1, static_cast<int>(left)) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 &&
          soerr == 0)
        return fd;
      *error = "cannot connect to " + host + ":" + port + ": " + (soerr != 0 ? std::strerror(soerr) : "timed out");
    } else {
      *error = "cannot connect to " + host + ":" + port + ": " + std::strerror(errno);
    }
    ::close(fd);
  }
  return -1;
}

}  // namespace idemproof::runtime
