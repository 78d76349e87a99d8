// ProxyLoop and what lives on it: the state one chaos proxy's event loop
// shares (ProxyLoop), how heal() reaches a socket or timer (Tracked), one
// upstream connection (UpstreamConn) and one upstream outcome
// (UpstreamAnswer). Apart from proxy_exchange.h so the HTTP/2 upstream
// (upstream_h2.h) builds on them without the exchange, which calls it.
// Defined in proxy_exchange.cpp.
//
// Internal to injectors/ (it carries Asio and Beast).
// Thread-safety: the proxy's one io_context thread; only ProxyLoop's
// counters are read from other threads (atomics).
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "injectors/fault_event.h"
#include "injectors/proxy_settings.h"

namespace idemproof::injectors {

using ProxyRequest = boost::beast::http::request<boost::beast::http::string_body>;
using ProxyResponse = boost::beast::http::response<boost::beast::http::string_body>;
template <typename T>
using ProxyTask = boost::asio::awaitable<T>;

// The state every session of one proxy shares. Touched only on the proxy's
// thread (or after it was joined), except the counters.
struct ProxyLoop {
  ProxyLoop(ProxySettings s, FaultEventLog* e);

  // Records `event` in the log given at construction, if any.
  void record(FaultEvent event) {
    if (events) events->record(std::move(event));
  }

  ProxySettings settings;
  FaultEventLog* events;
  boost::asio::ip::tcp::endpoint upstream;
  // settings.upstream_tls: the context every upstream connection shakes
  // hands with, or why there is none (a CA file that does not load).
  std::unique_ptr<boost::asio::ssl::context> upstream_tls;
  std::string upstream_tls_error;
  std::atomic<std::int64_t> accepted{0}, open{0}, requests{0}, sends{0}, injected{0};

  bool closing = false;  // heal() has begun: start nothing new
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, std::function<void()>> closers;

  // Declared last, destroyed first: coroutine frames still alive when the
  // io_context dies (forced heal) unregister from `closers` and count down
  // `open` above.
  boost::asio::io_context io{1};
};

// Registers how to close one socket or timer, so heal() can reach it; closes
// at once when the proxy is already healing.
class Tracked {
 public:
  Tracked(ProxyLoop& loop, std::function<void()> close);
  ~Tracked();
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;

 private:
  ProxyLoop& loop_;
  std::uint64_t id_ = 0;
};

// One keep-alive connection to the upstream, connected on first use.
struct UpstreamConn {
  explicit UpstreamConn(ProxyLoop& loop) : stream(loop.io), tracked(loop, [this] { close(); }) {}
  void close();

  boost::beast::tcp_stream stream;
  // Over `stream` when the upstream speaks TLS (ProxyLoop::upstream_tls);
  // made anew by each connection's handshake.
  std::unique_ptr<boost::asio::ssl::stream<boost::beast::tcp_stream&>> tls;
  boost::beast::flat_buffer buffer;
  bool connected = false;
  Tracked tracked;
};

// The outcome of one request sent upstream: an answer, or why there is none.
struct UpstreamAnswer {
  std::optional<ProxyResponse> response;
  std::string error;
  bool timed_out = false;
  std::int64_t done_ns = 0;  // when the answer was fully read
};

}  // namespace idemproof::injectors
