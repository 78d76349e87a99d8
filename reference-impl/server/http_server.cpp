// idemproof-ref: the HTTP/1.1 front of ReferenceService (Boost.Beast), and
// the door to its h2c front (h2_session.h): a connection that starts with the
// HTTP/2 client preface is handed over there, on the same port.
//
// The only translation unit with Beast in it. Each connection is a Session on
// its own strand; a fully read request is handed to a worker pool (business
// steps block: --business-delay, /_chaos delay_ms) and its answer is posted
// back to the connection's strand, so a slow request never holds up an I/O
// thread. When a burst arrives, reading it is not held up by answering it:
// a request goes to the workers only after the reads already completed in the
// same reactor round ran (--dispatch), and the workers run as SCHED_BATCH
// (--worker-sched), so a woken worker does not preempt an I/O thread.
// SIGTERM/SIGINT: stop accepting, let in-flight answers finish, exit 0.

// Boost 1.74's asio/awaitable.hpp uses std::exchange without <utility> (C++20).
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include "idemproof/ref/batch_job.h"
#include "idemproof/ref/clock.h"
#include "idemproof/ref/effect_store.h"
#include "idemproof/ref/payment_provider.h"
#include "idemproof/ref/postgres_store.h"
#include "base/beast_capped_read.h"
#include "base/problem.h"
#include "base/steady_clock.h"
#include "idemproof/ref/reference_service.h"
#include "idemproof/ref/service_options.h"
#include "idemproof/ref/service_store.h"
#include "idemproof/ref/side_effect_routes.h"
#include "idemproof/ref/stream_consumer.h"
#include "h2_session.h"
#include "server_context.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace idemproof::ref {
namespace {

constexpr auto kDrainTimeout = std::chrono::seconds(2);
constexpr auto kShutdownDeadline = std::chrono::seconds(30);
// serve-before-recovery: how long the store "recovers" while the service already serves.
constexpr auto kRecoveryUnderFlaw = std::chrono::seconds(2);
constexpr std::uint32_t kHeaderLimit = 16 * 1024;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, ServerContext& ctx) : stream_(std::move(socket)), ctx_(ctx), slot_(ctx) {}

  void start() {
    asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::sniff, shared_from_this()));
  }

 private:
  // Reads the connection's first bytes: the HTTP/2 preface hands the socket
  // to an h2c session; anything else stays in buffer_ for Beast's parser, so
  // an HTTP/1.1 client sees no difference.
  void sniff() {
    stream_.expires_after(ctx_.options.io_timeout);
    stream_.async_read_some(buffer_.prepare(8192),
                            beast::bind_front_handler(&Session::on_sniff, shared_from_this()));
  }

  void on_sniff(beast::error_code ec, std::size_t n) {
    if (ec == asio::error::eof) return close();
    if (ec) return;  // timeout, reset, shutdown: the socket dies with this session
    buffer_.commit(n);
    const std::string_view got(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    const std::size_t common = std::min(got.size(), kH2Preface.size());
    if (got.substr(0, common) != kH2Preface.substr(0, common)) return read_request();
    if (got.size() < kH2Preface.size()) return sniff();
    stream_.expires_never();
    start_h2_session(stream_.release_socket(), std::string(got), ctx_, std::move(slot_));
  }

  void read_request() {
    parser_.emplace();
    parser_->body_limit(ctx_.options.body_limit);
    parser_->header_limit(kHeaderLimit);
    stream_.expires_after(ctx_.options.io_timeout);
    async_read_capped(stream_, buffer_, *parser_,
                      beast::bind_front_handler(&Session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      return answer_and_close(problem_response(
          413, "payload-too-large", "Payload too large",
          "the body exceeds " + std::to_string(ctx_.options.body_limit) + " bytes"));
    }
    if (ec == http::error::header_limit) {
      return answer_and_close(problem_response(431, "headers-too-large",
                                               "Request header fields too large",
                                               "the header exceeds 16 KiB"));
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return close();
    if (ec && ec.category() == beast::http::make_error_code(http::error::bad_method).category()) {
      return answer_and_close(problem_response(400, "bad-request", "Bad request",
                                               "malformed HTTP/1.1 request: " + ec.message()));
    }
    if (ec) return;  // timeout, reset, shutdown: the socket dies with this session

    const std::int64_t arrival_ns = steady_now_ns();
    auto message = parser_->release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    const bool keep_alive = message.keep_alive();
    const unsigned version = message.version();

    ++ctx_.in_flight;
    run_business_step(ctx_, stream_.get_executor(), std::move(request),
                      [self = shared_from_this(), arrival_ns, keep_alive, version](HttpResponse answer) {
                        self->write(std::move(answer), arrival_ns, keep_alive, version, /*counted=*/true);
                      },
                      stream_.socket().native_handle());
  }

  void write(HttpResponse answer, std::optional<std::int64_t> arrival_ns, bool keep_alive,
             unsigned version, bool counted) {
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(answer.status));
    for (auto& [name, value] : answer.headers) response_.insert(name, value);
    if (ctx_.options.report_arrival && arrival_ns) {
      response_.set("X-Arrival-Ns", std::to_string(*arrival_ns));
    }
    response_.keep_alive(keep_alive && !ctx_.stopping.load());
    response_.body() = std::move(answer.body);
    response_.prepare_payload();
    stream_.expires_after(ctx_.options.io_timeout);
    http::async_write(stream_, response_,
                      beast::bind_front_handler(&Session::on_write, shared_from_this(), counted));
  }

  void on_write(bool counted, beast::error_code ec, std::size_t) {
    if (counted) --ctx_.in_flight;
    if (ec) return;
    if (response_.need_eof()) return close();
    read_request();
  }

  // For errors found while reading: answer, then close without a reset (the
  // unread rest of the request is drained so the client sees the answer).
  void answer_and_close(HttpResponse answer) {
    write(std::move(answer), std::nullopt, /*keep_alive=*/false, 11, /*counted=*/false);
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    drain();
  }

  void drain() {
    stream_.expires_after(kDrainTimeout);
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (!ec) self->drain();
                            });
  }

  beast::tcp_stream stream_;
  ServerContext& ctx_;
  ConnectionSlot slot_;  // handed to the h2c session with the socket
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::array<char, 8192> scratch_{};
};

// The business-step threads: an io_context run by `count` threads, each made
// SCHED_BATCH first when asked (see ServiceOptions::batch_workers).
class WorkerPool {
 public:
  WorkerPool(unsigned count, bool batch) : idle_guard_(asio::make_work_guard(context_)) {
    for (unsigned i = 0; i < count; ++i) {
      threads_.emplace_back([this, batch] {
        if (batch) {
          const sched_param none{};
          if (int err = pthread_setschedparam(pthread_self(), SCHED_BATCH, &none); err != 0) {
            std::cerr << "idemproof-ref: SCHED_BATCH for a worker: " << std::strerror(err) << "\n";
          }
        }
        context_.run();
      });
    }
  }
  ~WorkerPool() { stop_and_join(); }

  asio::io_context& context() { return context_; }
  // Queued business steps that have not started are dropped (as on shutdown).
  void stop_and_join() {
    context_.stop();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  asio::io_context context_;
  asio::executor_work_guard<asio::io_context::executor_type> idle_guard_;
  std::vector<std::thread> threads_;
};

// A line on stderr at most once a minute, saying how many it stood for since
// the last one (near a limit the same event repeats: one line each would
// flood the log).
class OncePerMinuteNote {
 public:
  // `line` now if a minute has passed since the last one said, else counted.
  void note(const std::string& line, const char* counted_as) {
    ++since_said_;
    const auto now = std::chrono::steady_clock::now();
    if (said_at_ && now - *said_at_ < std::chrono::seconds(60)) return;
    std::cerr << "idemproof-ref: " << line;
    if (said_at_) std::cerr << " (" << since_said_ << " " << counted_as << " since the last such line)";
    std::cerr << "\n";
    said_at_ = now;
    since_said_ = 0;
  }

 private:
  std::optional<std::chrono::steady_clock::time_point> said_at_;
  std::uint64_t since_said_ = 0;
};

// Accepts connections. Out of descriptors (EMFILE/ENFILE, or the kernel out
// of socket memory), an accept fails at once while the connection stays
// queued, so accepting again at once spins a core and starves the sessions
// that could free one: it waits instead, 10 ms doubling to 200 ms (back to
// 10 ms after an accept succeeds), and says so on stderr at most once a
// minute (near the limit, accepts succeed and fail in turns: one line each
// would flood the log). With --max-connections open (HTTP/1.1 and h2c, each
// session's ConnectionSlot), a new connection is closed as soon as it is
// accepted, said on stderr as rarely.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& ioc, tcp::acceptor acceptor, ServerContext& ctx)
      : ioc_(ioc), acceptor_(std::move(acceptor)), backoff_timer_(acceptor_.get_executor()), ctx_(ctx) {}

  void accept() {
    acceptor_.async_accept(asio::make_strand(ioc_),
                           beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
  }

  void stop() {
    asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
      beast::error_code ignored;
      self->acceptor_.close(ignored);
      self->backoff_timer_.cancel();
    });
  }

 private:
  static constexpr auto kFirstBackoff = std::chrono::milliseconds(10);
  static constexpr auto kLongestBackoff = std::chrono::milliseconds(200);

  static bool out_of_resources(const beast::error_code& ec) {
    return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
           ec == asio::error::no_memory ||
           ec == beast::error_code(ENFILE, asio::error::get_system_category());
  }

  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open()) return;
    if (out_of_resources(ec)) return back_off(ec);
    if (!ec) {
      backoff_ = std::chrono::milliseconds(0);
      if (static_cast<std::size_t>(ctx_.connections.load()) >= ctx_.options.max_connections) {
        refuse(socket);
      } else {
        std::make_shared<Session>(std::move(socket), ctx_)->start();
      }
    }
    accept();
  }

  // --max-connections are open: this one is closed at once, unread.
  void refuse(tcp::socket& socket) {
    beast::error_code ignored;
    socket.close(ignored);
    refused_note_.note(std::to_string(ctx_.options.max_connections) +
                           " connections open (--max-connections): closing new ones at once",
                       "connections closed");
  }

  void back_off(const beast::error_code& ec) {
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kLongestBackoff);
    backoff_note_.note("cannot accept a connection: " + ec.message() +
                           "; accepting again after a pause, 10 ms doubling to 200 ms",
                       "failed accepts");
    backoff_timer_.expires_after(backoff_);
    backoff_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (wait_ec || !self->acceptor_.is_open()) return;  // stopped
      self->accept();
    });
  }

  asio::io_context& ioc_;
  tcp::acceptor acceptor_;
  asio::steady_timer backoff_timer_;  // on the acceptor's strand
  std::chrono::milliseconds backoff_{0};  // 0: the last accept succeeded
  OncePerMinuteNote backoff_note_;
  OncePerMinuteNote refused_note_;
  ServerContext& ctx_;
};

// Runs the TTL sweep every interval on a worker thread.
class SweepSchedule {
 public:
  SweepSchedule(asio::io_context& ioc, ServerContext& ctx, Nanos interval)
      : timer_(ioc), ctx_(ctx), interval_(interval) {}

  void arm() {
    timer_.expires_after(interval_);
    timer_.async_wait([this](beast::error_code ec) {
      if (ec || ctx_.stopping) return;
      asio::post(ctx_.workers, [this] {
        try {
          ctx_.service.sweep_expired();
        } catch (const std::exception& e) {
          std::cerr << "idemproof-ref: sweep failed: " << e.what() << "\n";
        }
      });
      arm();
    });
  }
  void cancel() { timer_.cancel(); }

 private:
  asio::steady_timer timer_;
  ServerContext& ctx_;
  Nanos interval_;
};

int serve(const ServiceOptions& options) {
  ServiceStore store(options);
  SystemClock clock;
  ReferenceService service(options.service, store.store(), clock);

  // Side effects: payments through the provider, callbacks, the queue inbox.
  // With --store they live in its PostgreSQL database, else in the --db file.
  auto effects = store.postgres() ? std::make_unique<EffectStore>(*store.postgres())
                                  : std::make_unique<EffectStore>(options.db);
  std::unique_ptr<HttpPaymentProvider> provider;
  if (!options.payment_provider.empty()) {
    provider = std::make_unique<HttpPaymentProvider>(
        options.payment_provider,
        std::chrono::duration_cast<std::chrono::milliseconds>(options.provider_timeout));
  }
  SideEffectRoutes side_effects(options.service, store.store(), *effects, clock, provider.get());
  service.add_extension(side_effects);
  // Before the first request: what a crash left pending is settled by asking.
  try {
    side_effects.reconcile_pending();
  } catch (const std::exception& e) {
    std::cerr << "idemproof-ref: reconciliation failed: " << e.what() << "\n";
  }
  // Batch jobs: range markers in tables of their own, never swept.
  auto batch_store = store.postgres() ? std::make_unique<RangeMarkerStore>(*store.postgres())
                                      : std::make_unique<RangeMarkerStore>(options.db);
  BatchRoutes batch(BatchConfig{options.batch_partition_rows, 1'000'000,
                                batch_discipline_for(options.service.flaw)},
                    options.service, store.store(), *batch_store, clock);
  service.add_extension(batch);
  std::unique_ptr<StreamConsumer> consumer;
  if (!options.redis.empty()) {
    consumer = std::make_unique<StreamConsumer>(options, side_effects);
    consumer->start();
  }

  // The flaw serve-before-recovery: it listens before its store is recovered
  // (kRecoveryUnderFlaw after the listening line), and serves meanwhile.
  const bool serves_before_recovery = options.service.flaw == Flaw::serve_before_recovery;
  service.set_recovering(serves_before_recovery);

  asio::io_context ioc(static_cast<int>(options.threads));
  tcp::acceptor acceptor(asio::make_strand(ioc));
  const tcp::endpoint endpoint(asio::ip::make_address(options.host), options.port);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  const auto bound = acceptor.local_endpoint();
  std::cout << "listening on " << bound.address().to_string() << ":" << bound.port() << std::endl;

  WorkerPool workers(options.workers, options.batch_workers);
  ServerContext ctx{service, options, workers.context(), ioc};
  auto listener = std::make_shared<Listener>(ioc, std::move(acceptor), ctx);
  listener->accept();
  SweepSchedule sweep(ioc, ctx, options.effective_sweep_interval());
  sweep.arm();
  asio::steady_timer recovery(ioc);
  if (serves_before_recovery) {
    recovery.expires_after(kRecoveryUnderFlaw);
    recovery.async_wait([&service](beast::error_code) { service.set_recovering(false); });
  }

  asio::steady_timer drain_timer(ioc);
  const auto give_up_at = std::make_shared<std::chrono::steady_clock::time_point>();
  std::function<void()> stop_when_drained = [&] {
    if (ctx.in_flight.load() == 0 || std::chrono::steady_clock::now() > *give_up_at) {
      ioc.stop();
      return;
    }
    drain_timer.expires_after(std::chrono::milliseconds(10));
    drain_timer.async_wait([&](beast::error_code) { stop_when_drained(); });
  };
  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code ec, int) {
    if (ec) return;
    ctx.stopping = true;
    listener->stop();
    sweep.cancel();
    *give_up_at = std::chrono::steady_clock::now() + kShutdownDeadline;
    stop_when_drained();
  });

  std::vector<std::thread> io_threads;
  for (unsigned i = 1; i < options.threads; ++i) io_threads.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : io_threads) t.join();
  if (consumer) consumer->stop();
  workers.stop_and_join();
  return 0;
}

}  // namespace
}  // namespace idemproof::ref

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto command_line = idemproof::ref::parse_command_line(argc, argv);
  if (!command_line.options) return command_line.exit_code;
  try {
    return idemproof::ref::serve(*command_line.options);
  } catch (const std::exception& e) {
    std::cerr << "idemproof-ref: " << e.what() << "\n";
    return 1;
  }
}
