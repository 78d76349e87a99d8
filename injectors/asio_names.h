// The short names the injectors' Asio/Beast translation units use.
// Private to injectors/; include it only from .cpp files, inside no namespace.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>
#include <boost/system/error_code.hpp>

namespace idemproof::injectors::asio_names {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
constexpr auto kAwait = asio::use_awaitable;
}  // namespace idemproof::injectors::asio_names
