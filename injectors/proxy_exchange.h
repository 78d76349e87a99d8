// ProxyExchange: one client request the chaos proxy has read and handed to a
// proxy fault (proxy_fault.h), with the session's means to act on it: send
// the request upstream, answer the client, wait, close or reset the client's
// connection, and record the fault event.
//
// Below it, what the proxy's sessions and faults share: ProxyLoop (the state
// of one proxy's event loop), Tracked (how heal() reaches a socket or timer),
// UpstreamConn, UpstreamAnswer and the snapshots that go into FaultEvents.
// The proxy's session code is in chaos_proxy.cpp; concurrent upstream copies
// are in upstream_flight.h.
//
// This header is internal to injectors/ (it carries Asio and Beast); the
// public face of the proxy is chaos_proxy.h.
//
// Thread-safety: everything here lives on the proxy's one io_context thread,
// so nothing is locked; only ProxyLoop's counters are read from other
// threads (atomics).
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

// One request/answer on `conn`, connecting first if needed; never throws.
ProxyTask<UpstreamAnswer> send_upstream(ProxyLoop& loop, UpstreamConn& conn, ProxyRequest request);
// Writes `response` to the client; false when the write failed.
ProxyTask<bool> answer_client(ProxyLoop& loop, boost::beast::tcp_stream& client,
                              ProxyResponse response, bool keep_alive);
// Waits `d`, or less when the proxy heals.
ProxyTask<void> sleep_for(ProxyLoop& loop, std::chrono::nanoseconds d);
// Closes the client's connection: an orderly shutdown, or a reset (RST).
void close_client(boost::beast::tcp_stream& client, bool reset);
// 502 (504 when the upstream timed out) with X-Idemproof-Proxy: upstream-error.
ProxyResponse gateway_error(const UpstreamAnswer& failed, unsigned version);

RequestSnapshot snapshot(const ProxyRequest& request);
AnswerSnapshot snapshot(const ProxyResponse& response, std::int64_t time_ns);

class ProxyExchange {
 public:
  // `event` is the fault's event, already stamped (time, fault, name, phase
  // "injected", the request as read).
  ProxyExchange(ProxyLoop& loop, boost::beast::tcp_stream& client, UpstreamConn& primary,
                ProxyRequest request, FaultEvent event);

  // The request as read from the client; a fault may move it out.
  ProxyRequest& request() { return request_; }
  // The client's HTTP version and wish to keep the connection, as read.
  unsigned version() const { return version_; }
  bool keep_alive() const { return keep_alive_; }
  // True once the proxy is healing: answer nothing more, return false.
  bool closing() const { return loop_.closing; }
  // The event the fault fills in and records once with record().
  FaultEvent& event() { return event_; }
  void record() { loop_.record(std::move(event_)); }

  // On the client's own upstream connection.
  ProxyTask<UpstreamAnswer> send_upstream(ProxyRequest request) {
    return injectors::send_upstream(loop_, primary_, std::move(request));
  }
  ProxyTask<bool> answer(ProxyResponse response) {
    return answer_client(loop_, client_, std::move(response), keep_alive_);
  }
  ProxyTask<void> sleep(std::chrono::nanoseconds d) { return sleep_for(loop_, d); }
  ProxyResponse gateway_error(const UpstreamAnswer& failed) const {
    return injectors::gateway_error(failed, version_);
  }

  // For faults that need more: extra upstream connections (UpstreamFlight),
  // the client's socket itself.
  ProxyLoop& loop() { return loop_; }
  boost::beast::tcp_stream& client() { return client_; }

 private:
  ProxyLoop& loop_;
  boost::beast::tcp_stream& client_;
  UpstreamConn& primary_;
  ProxyRequest request_;
  unsigned version_;
  bool keep_alive_;
  FaultEvent event_;
};

}  // namespace idemproof::injectors
