// The reference's HTTP/2 cleartext front (h2c, prior knowledge; issue #35):
// a connection whose first bytes are the client preface is served here by
// libnghttp2's server session, on the same port as HTTP/1.1, so a
// single-packet burst (every stream's final frame in one TCP segment) is
// parsed in one read, each request stamped when its END_STREAM is parsed.
// Plain Asio: no Beast in this translation unit.
#pragma once

#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>

#include "server_context.h"

namespace idemproof::ref {

// What every HTTP/2 connection starts with (RFC 9113 §3.4).
inline constexpr std::string_view kH2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Serves `socket` as an h2c connection until it closes: every request goes
// through run_business_step (counted in ctx.in_flight until its stream
// closes or is reset), answers are submitted on the socket's strand; at most
// 128 concurrent streams; a body over options.body_limit is answered 413, a
// header block over 16 KiB 431. What waits on the client has
// options.io_timeout, as on HTTP/1.1: a request not all in (RST_STREAM
// REFUSED_STREAM) or an answer not all taken (CANCEL) is reset, a write not
// taken closes the connection, and one with no stream and no progress sends
// GOAWAY and closes. ctx.stopping: GOAWAY at once, and what waits on the
// client 0.5 s more at most; streams in a business step are answered.
// `slot` counts the connection until it closes.
// REQUIRES: `socket`'s executor is a strand; `received` holds the bytes
// already read from it, starting with kH2Preface; ctx outlives the session.
void start_h2_session(boost::asio::ip::tcp::socket socket, std::string received, ServerContext& ctx,
                      ConnectionSlot slot);

}  // namespace idemproof::ref
