// Where both proxies (the HTTP chaos proxy, the TCP fault proxy) begin: the
// upstream resolved and the listening socket opened, bound and listening.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include "base/status.h"
#include "injectors/endpoint.h"

namespace idemproof::injectors {

struct ProxyListener {
  boost::asio::ip::tcp::endpoint upstream;  // `upstream` as an address
  Endpoint bound;                           // where it listens (the port the OS chose for 0)
};

// Parses `upstream`'s and `listen`'s hosts as addresses, then opens `acceptor`
// on `listen` (address reuse on) and listens. On an error the acceptor is
// closed and the status names the endpoint.
// REQUIRES: `acceptor` is not open.
Result<ProxyListener> OpenProxyListener(boost::asio::ip::tcp::acceptor& acceptor, const Endpoint& listen,
                                        const Endpoint& upstream);

}  // namespace idemproof::injectors
