// FireH2Burst: single-packet bursts over HTTP/2 (libnghttp2's client
// session; this file owns the socket).
//
// All requests go as streams of ONE connection: h2c by prior knowledge on
// an http:// origin; on an https:// origin a TLS handshake first (OpenSSL,
// checked as the first request's tls says, base/tls_client.h), offering only
// h2 in ALPN. Every stream's HEADERS and DATA go out except its final
// frame: the body's last byte is held back (a bodiless request sends HEADERS
// without END_STREAM). After `settle`, the final frames of all streams
// (END_STREAM set) are serialized into one buffer, over TLS sealed by ONE
// SSL_write (one record when they fit 16 KiB), and written with ONE send()
// on a TCP_NODELAY socket: one TCP segment when the bytes fit the
// connection's MSS, else ceil(bytes / MSS). A server cannot act on a request
// before its END_STREAM (nor on a TLS record before all of it arrived), so
// the requests complete together, in one packet.
//
// Outcomes as HttpClient's (http_client.h): kAnswered (status, headers,
// body, cut at max_body), kNoAnswer (the final frame went out; no complete
// answer by the deadline, the stream was reset, the connection broke),
// kNotSent (the final frame never went out, or the server refused the stream:
// REFUSED_STREAM or above GOAWAY's last stream id). A failed TLS handshake
// (certificate not trusted, wrong name, no TLS peer) is kNotSent with
// tls_refused and HttpClient's kind of error ("TLS: certificate verify
// failed (...)"), a server that does not select h2 kNotSent saying what it
// selected: nothing was sent either way. Connecting and the handshake share
// connect_timeout (at most the first request's timeout); the answers'
// deadline is the longest request timeout, counted from the release; every
// wait polls a non-blocking socket; `cancel` is honoured between waits.
//
// Thread-safety: reentrant; one call owns its socket, TLS and HTTP/2 session.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "clients/http_client.h"

namespace idemproof::runtime {

struct H2BurstOptions {
  std::chrono::nanoseconds settle = std::chrono::milliseconds(5);
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);
};

// Where one request's final frame went.
struct H2StreamPlacement {
  std::int32_t stream_id = 0;  // 0: never submitted
  int segment = -1;            // the release write's TCP segment that completes its final frame
                               // (over TLS: its record); -1: not in it
};

struct H2BurstResult {
  std::vector<HttpExchange> exchanges;       // in request order
  std::vector<H2StreamPlacement> streams;    // in request order
  std::size_t release_bytes = 0;  // the final frames' bytes on the wire (sealed over TLS), written together
  int release_writes = 0;         // send() calls they took (1 unless the socket took less)
  int segments = 0;               // ceil(release_bytes / mss): TCP segments of the release
  int tls_records = 0;            // TLS records they were sealed in (one SSL_write); 0: h2c
  int mss = 0;                    // the connection's TCP_MAXSEG
  std::optional<std::int64_t> release_ns;  // first send() call to last returned (harness spread)
};

// REQUIRES: every request has the same http:// or https:// origin (one
// connection) and, over https://, the same tls (the first request's is used;
// tls.server_name is SNI, the name checked and :authority's host).
// A request that cannot go (another origin, no connection, a refused
// handshake, no h2 in ALPN) ends kNotSent with the reason.
H2BurstResult FireH2Burst(const std::vector<OutgoingRequest>& requests, const H2BurstOptions& options,
                          const std::atomic<bool>* cancel = nullptr);

}  // namespace idemproof::runtime
