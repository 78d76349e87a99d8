// How the proxy frames a message it relays. It reads every message in full
// (string_body, chunked codings already decoded), so it writes each on framed
// by Content-Length alone, never by a coding it did not apply or by closing:
//  - an upstream answer read "until the connection closed" (HTTP/1.0 without
//    Content-Length, a Transfer-Encoding that is not chunked) would leave a
//    kept-alive client waiting for a close that never comes;
//  - a message with several Transfer-Encoding fields, or an unknown coding
//    named, would be framed one way by Beast and another by the peer
//    (RFC 9112 6.1: a proxy must not forward both; the request-smuggling shape).
// Both found by scripts/fuzz.sh (tests/fuzz/regressions/proxy_http).
// Header-only (Beast), shared by proxy_exchange.cpp and tests/fuzz.
#pragma once

#include <boost/beast/http.hpp>

namespace idemproof::injectors {

// REQUIRES: `m` was read in full by Beast's parser (its body is complete).
template <bool IsRequest>
void FrameForRelay(boost::beast::http::message<IsRequest, boost::beast::http::string_body>& m, bool keep_alive) {
  namespace http = boost::beast::http;
  bool reframe = m.find(http::field::transfer_encoding) != m.end();
  if constexpr (!IsRequest) {
    const int status = m.result_int();
    const bool bodiless = (status >= 100 && status < 200) || status == 204 || status == 304;
    if (bodiless) reframe = false;  // no body, whatever the fields say
    if (!bodiless && !m.has_content_length()) reframe = true;  // ended by closing
  }
  if (reframe) {
    m.erase(http::field::transfer_encoding);
    m.prepare_payload();  // Content-Length: the body's size
  }
  m.keep_alive(keep_alive);
}

}  // namespace idemproof::injectors
