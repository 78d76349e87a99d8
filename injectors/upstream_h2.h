// The chaos proxy's upstream in HTTP/2 (ProxySettings::upstream_http2): a
// target that speaks only HTTP/2 (h2c prior knowledge on http://, ALPN h2 on
// https://) gets each relayed request as one stream on a connection of its
// own, driven by libnghttp2 over the proxy's Asio coroutines. The client's
// side of the proxy stays HTTP/1.1; the answer comes back as a ProxyResponse
// that answer_client() frames for it.
//
// Internal to injectors/ (proxy_exchange.cpp calls it from send_upstream).
//
// Thread-safety: the proxy's thread only (proxy_exchange.h).
#pragma once

#include <cstdint>
#include <string>

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>

#include "injectors/proxy_loop.h"

namespace idemproof::injectors {

// Makes every handshake of `ctx` offer ALPN "h2" (and nothing else).
void offer_h2(boost::asio::ssl::context& ctx);
// After a handshake that offered h2: "" when the server selected it, else why
// the exchange cannot go on (what the server selected, or that it chose none).
std::string h2_refusal(SSL* ssl);

struct H2Exchange {
  UpstreamAnswer answer;
  bool written = false;         // the request's HEADERS reached the socket
  std::int64_t written_ns = 0;  // when its last frame did (or its HEADERS, if no more went)
};

// One request/answer as an HTTP/2 stream on `conn`: the client preface and
// SETTINGS, the request's header block (base/header_list.h's
// http2_request_fields) and body, then reading until the stream closes. The
// answer's header fields in order (pseudo-headers and interim 1xx answers
// dropped, trailers ignored), its body capped at the settings' body_limit.
// Errors as send_upstream's ("upstream read: ...", timed_out on the
// deadline); a stream the server reset is an error naming its code.
// REQUIRES: `conn` is freshly connected (its TLS, if any, selected h2), its
// stream's expiry set to the exchange's deadline; `request` framed
// (FrameForRelay). The caller closes `conn` afterwards.
ProxyTask<H2Exchange> exchange_h2(ProxyLoop& loop, UpstreamConn& conn, const ProxyRequest& request);

}  // namespace idemproof::injectors
