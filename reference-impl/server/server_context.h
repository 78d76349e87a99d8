// ServerContext: what every connection of idemproof-ref shares (the service,
// its options, the worker pool, the in-flight count), and the business step
// both transports (HTTP/1.1 in http_server.cpp, h2c in h2_session.cpp) hand
// a fully read request to. Plain Asio: no Beast here.
#pragma once

// Boost 1.74's asio/awaitable.hpp uses std::exchange without <utility> (C++20).
#include <utility>

#include <boost/asio.hpp>

#include <atomic>

#include "base/http_message.h"
#include "idemproof/ref/client_connection.h"
#include "idemproof/ref/reference_service.h"
#include "idemproof/ref/service_options.h"

namespace idemproof::ref {

struct ServerContext {
  ReferenceService& service;
  const ServiceOptions& options;
  boost::asio::io_context& workers;
  boost::asio::io_context& io;  // the I/O threads' context
  std::atomic<int> in_flight{0};  // requests read whose answer is not yet written
  std::atomic<int> connections{0};  // open client connections, HTTP/1.1 and h2c (ConnectionSlot)
  std::atomic<bool> stopping{false};
};

// One open connection in ctx.connections while its holder lives; it moves
// with the socket when an HTTP/1.1 session hands it to an h2c one.
class ConnectionSlot {
 public:
  explicit ConnectionSlot(ServerContext& ctx) : ctx_(&ctx) { ++ctx_->connections; }
  ~ConnectionSlot() {
    if (ctx_ != nullptr) --ctx_->connections;
  }
  ConnectionSlot(ConnectionSlot&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}
  ConnectionSlot& operator=(ConnectionSlot&&) = delete;
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;

 private:
  ServerContext* ctx_;
};

// Runs service.handle_request(request) on a worker, then answer(response)
// on `reply_on` (the connection's strand). With --dispatch after-reads the
// step is deferred behind the I/O completions already queued (the other reads
// that became ready with this one), so waking a worker does not delay them.
// REQUIRES: called on an I/O thread of ctx.io; `answer` keeps its connection
// alive; the caller counts the request in ctx.in_flight.
template <class Executor, class Answer>
// `client_fd`: the HTTP/1.1 connection's socket, in scope while the handler
// runs (client_connection.h); -1 for none (h2c streams share one).
void run_business_step(ServerContext& ctx, const Executor& reply_on, HttpRequest request, Answer answer,
                       int client_fd = -1) {
  auto step = [&ctx, reply_on, request = std::move(request), answer = std::move(answer), client_fd]() mutable {
    HttpResponse response;
    {
      ScopedClientConnection connection(client_fd);
      response = ctx.service.handle_request(request);
    }
    boost::asio::post(reply_on, [answer = std::move(answer), response = std::move(response)]() mutable {
      answer(std::move(response));
    });
  };
  if (ctx.options.dispatch_after_reads) {
    boost::asio::defer(ctx.io, [&workers = ctx.workers, step = std::move(step)]() mutable {
      boost::asio::post(workers, std::move(step));
    });
  } else {
    boost::asio::post(ctx.workers, std::move(step));
  }
}

}  // namespace idemproof::ref
