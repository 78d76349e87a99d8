#include "injectors/proxy_listener.h"

#include "injectors/asio_names.h"

namespace idemproof::injectors {

using namespace asio_names;

Result<ProxyListener> OpenProxyListener(tcp::acceptor& acceptor, const Endpoint& listen, const Endpoint& upstream) {
  error_code ec;
  const auto listen_addr = asio::ip::make_address(listen.host, ec);
  if (ec) return Status(StatusCode::kUnavailable, "listen address '" + listen.host + "': " + ec.message());
  const auto upstream_addr = asio::ip::make_address(upstream.host, ec);
  if (ec) return Status(StatusCode::kUnavailable, "upstream address '" + upstream.host + "': " + ec.message());
  const tcp::endpoint at(listen_addr, listen.port);
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    return Status(StatusCode::kUnavailable, "listen on " + listen.to_string() + ": " + ec.message());
  }
  return ProxyListener{tcp::endpoint(upstream_addr, upstream.port),
                       Endpoint{listen.host, acceptor.local_endpoint().port()}};
}

}  // namespace idemproof::injectors
