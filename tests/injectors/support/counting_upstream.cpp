#include <utility>

#include "support/counting_upstream.h"

#include <chrono>
#include <list>
#include <mutex>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace idemproof::testkit {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct CountingUpstream::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::uint16_t port = acceptor.local_endpoint().port();
  std::thread accept_thread;
  std::mutex mu;
  std::list<std::shared_ptr<tcp::socket>> sockets;
  std::list<std::thread> threads;
  std::vector<std::string> targets;
  std::atomic<std::int64_t> requests{0}, answered{0}, connections{0};
  std::atomic<bool> stopping{false};

  void serve(std::shared_ptr<tcp::socket> socket) {
    beast::flat_buffer buffer;
    beast::error_code ec;
    for (;;) {
      http::request<http::string_body> req;
      http::read(*socket, buffer, req, ec);
      if (ec) break;
      const std::int64_t n = ++requests;
      const auto arrival = std::chrono::steady_clock::now().time_since_epoch();
      {
        std::lock_guard lock(mu);
        targets.push_back(std::string(req.method_string()) + " " + std::string(req.target()));
      }
      if (auto d = req.find("X-Upstream-Delay-Ms"); d != req.end()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(std::string(d->value()))));
      }
      http::response<http::string_body> res{http::status::ok, req.version()};
      res.set(http::field::content_type, "application/json");
      res.set("X-Arrival-Ns", std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(arrival).count()));
      res.body() = nlohmann::json{{"n", n}, {"method", std::string(req.method_string())},
                                  {"target", std::string(req.target())}, {"body", req.body()}}.dump();
      if (auto mib = req.find("X-Upstream-Oversize-Mib"); mib != req.end()) {
        // Header and the whole declared body in one write, so a reader's
        // first read holds both (where Boost 1.74's eager parser loses its
        // body_limit error).
        const std::size_t size = std::stoul(std::string(mib->value())) << 20;
        const std::string raw = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                                std::to_string(size) + "\r\n\r\n" + std::string(size, 'y');
        boost::asio::write(*socket, boost::asio::buffer(raw), ec);
        if (!ec) ++answered;
        break;
      }
      if (req.find("X-Upstream-Unframed") != req.end()) {
        // As an HTTP/1.0 server without Content-Length: the body ends when
        // the connection closes.
        const std::string raw = "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + res.body();
        boost::asio::write(*socket, boost::asio::buffer(raw), ec);
        if (!ec) ++answered;
        break;
      }
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(*socket, res, ec);
      if (ec) break;
      ++answered;
      if (!req.keep_alive()) break;
    }
    // Closed here, under the lock, and only here: stop() may shut this
    // socket down from its own thread, and a close racing that is a data race.
    std::lock_guard lock(mu);
    socket->shutdown(tcp::socket::shutdown_both, ec);
    socket->close(ec);
    sockets.remove(socket);
  }
};

CountingUpstream::CountingUpstream() : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.accept_thread = std::thread([&p] {
    for (;;) {
      auto socket = std::make_shared<tcp::socket>(p.io);
      beast::error_code ec;
      p.acceptor.accept(*socket, ec);
      if (p.stopping) break;
      if (ec) continue;
      ++p.connections;
      std::lock_guard lock(p.mu);
      p.sockets.push_back(socket);
      p.threads.emplace_back([&p, socket] { p.serve(socket); });
    }
  });
}

CountingUpstream::~CountingUpstream() { stop(); }

void CountingUpstream::stop() {
  Impl& p = *impl_;
  if (p.stopping.exchange(true)) return;
  beast::error_code ec;
  // Wake the blocking accept() with a connection of our own, then close.
  {
    tcp::socket poke(p.io);
    poke.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), p.port), ec);
  }
  p.accept_thread.join();
  p.acceptor.close(ec);
  std::list<std::thread> threads;
  {
    std::lock_guard lock(p.mu);
    // Only shut down: each serving thread closes its own socket.
    for (auto& s : p.sockets) s->shutdown(tcp::socket::shutdown_both, ec);
    threads.swap(p.threads);
  }
  for (auto& t : threads) t.join();
}

std::uint16_t CountingUpstream::port() const { return impl_->port; }
std::int64_t CountingUpstream::requests() const { return impl_->requests; }
std::int64_t CountingUpstream::answered() const { return impl_->answered; }
std::int64_t CountingUpstream::connections() const { return impl_->connections; }
std::vector<std::string> CountingUpstream::targets() const {
  std::lock_guard lock(impl_->mu);
  return impl_->targets;
}

}  // namespace idemproof::testkit
