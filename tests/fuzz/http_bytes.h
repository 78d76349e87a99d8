// Bytes to a Beast message, the way the proxy and the reference's server read
// one off a socket (base/beast_capped_read.h): Beast's parser with a body
// limit, fed at once, then EOF.
// Header-only (Beast), so the fuzz targets need no socket code.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <string>

namespace idemproof::fuzz {

// `until_close`: the end of the bytes may end the message (as a closed
// connection does); false: the message must end by its own framing.
template <bool IsRequest>
std::optional<boost::beast::http::message<IsRequest, boost::beast::http::string_body>> ParseHttp(
    const std::string& bytes, std::size_t body_limit, bool until_close = true) {
  namespace http = boost::beast::http;
  http::parser<IsRequest, http::string_body> parser;
  parser.body_limit(body_limit);
  boost::beast::error_code ec;
  std::size_t used = 0;
  // Bounded: each put() consumes bytes or fails. The header is parsed with
  // the parser not eager, then the body eagerly, as base/beast_capped_read.h
  // does (an eager header parse loses the body_limit error in Boost 1.74).
  for (int i = 0; i < 1024 && used < bytes.size() && !parser.is_done(); ++i) {
    parser.eager(parser.is_header_done());
    std::size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) ec = {};
    if (ec) return std::nullopt;
    if (n == 0) break;
    used += n;
  }
  // Nothing read is no message (a socket read says end_of_stream), whatever
  // put_eof() would say of an untouched parser.
  if (!parser.got_some()) return std::nullopt;
  if (!parser.is_done()) {
    if (!until_close) return std::nullopt;
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return std::nullopt;
  }
  return parser.release();
}

}  // namespace idemproof::fuzz
