#include "injectors/proxy_faults/drop_response.h"

#include <array>

#include <boost/asio/buffer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace idemproof::injectors {

DropResponseOptions DropResponse::parse(YamlOptions& o) {
  DropResponseOptions out;
  const std::string mode = o.string("mode").value_or("close");
  if (mode != "close" && mode != "hold") o.fail_at("mode", "expected close or hold, got '" + mode + "'");
  out.hold = mode == "hold";
  out.hold_limit = o.duration("hold_limit").value_or(out.hold_limit);
  return out;
}

ProxyTask<bool> DropResponse::act(ProxyExchange& x) const {
  UpstreamAnswer ex = co_await x.send_upstream(std::move(x.request()));
  FaultEvent& ev = x.event();
  ev.upstream_sends = 1;
  if (ex.response) {
    ev.upstream.push_back(snapshot(*ex.response, ex.done_ns));
  } else {
    ev.detail = ex.error + "; ";
    ev.missed = "the upstream did not answer (" + ex.error + "): no answer was dropped";
  }
  ev.detail += options_.hold ? "held the client connection without an answer"
                             : "closed the client connection without an answer";
  x.record();
  boost::beast::tcp_stream& client = x.client();
  if (options_.hold && !x.closing()) {
    // Wait for the client to give up (EOF), heal, or the hold limit.
    Tracked tracked(x.loop(), [&client] {
      boost::system::error_code e;
      client.socket().close(e);
    });
    std::array<char, 512> sink;
    client.expires_after(options_.hold_limit);
    for (;;) {
      boost::system::error_code ec;
      co_await client.async_read_some(boost::asio::buffer(sink),
                                      boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      if (ec || x.closing()) break;
    }
  }
  close_client(client, /*reset=*/false);
  co_return false;
}

}  // namespace idemproof::injectors
