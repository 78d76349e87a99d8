// listen_loopback: a listening TCP socket on 127.0.0.1 at a port the kernel
// picks, for the test servers written against raw sockets (the tcp fault
// proxy's echo server, the proxy's h2c and TLS upstreams).
#pragma once

#include <cstdint>

namespace idemproof::testkit {

// The socket's fd (the caller closes it) and its port in `*port`; -1 on failure.
int listen_loopback(std::uint16_t* port, int backlog = 16);

}  // namespace idemproof::testkit
