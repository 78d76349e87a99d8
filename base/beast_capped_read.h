// async_read_capped: http::async_read that keeps the parser's body_limit.
//
// Boost 1.74's basic_parser drops its own body_limit error when the header
// and the first body bytes arrive in one read and the parser is eager
// (http::async_read makes it eager): finish_header() sets the error, put()
// loops on into the body and clears it, and a Content-Length body of any size
// is then read whole (a 2 GiB answer grew the harness to 1.5 GB). Reading the
// header first with the parser not eager keeps the error; the body is read
// after, and Beast checks chunked and until-close bodies as they come.
//
// Header-only and Beast-only: base/ links no Boost, its users do.
#pragma once

#include <cstddef>
#include <utility>

#include <boost/asio/compose.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

namespace idemproof {

// REQUIRES: `stream`, `buffer` and `parser` outlive the operation; the parser
// is fresh (nothing of this message parsed yet).
// Completes with http::error::body_limit (header parsed, is_header_done())
// when the declared Content-Length exceeds the parser's body_limit.
template <class Stream, class DynamicBuffer, bool isRequest, class Token>
auto async_read_capped(Stream& stream, DynamicBuffer& buffer, boost::beast::http::basic_parser<isRequest>& parser,
                       Token&& token) {
  namespace http = boost::beast::http;
  enum class Phase { kStart, kHeaderRead, kBodyRead };
  return boost::asio::async_compose<Token, void(boost::beast::error_code, std::size_t)>(
      [&stream, &buffer, &parser, phase = Phase::kStart, header_bytes = std::size_t{0}](
          auto& self, boost::beast::error_code ec = {}, std::size_t n = 0) mutable {
        switch (phase) {
          case Phase::kStart:
            phase = Phase::kHeaderRead;
            parser.eager(false);
            http::async_read_header(stream, buffer, parser, std::move(self));
            return;
          case Phase::kHeaderRead:
            if (ec || parser.is_done()) return self.complete(ec, n);
            phase = Phase::kBodyRead;
            header_bytes = n;
            http::async_read(stream, buffer, parser, std::move(self));
            return;
          case Phase::kBodyRead:
            return self.complete(ec, header_bytes + n);
        }
      },
      token, stream);
}

}  // namespace idemproof
