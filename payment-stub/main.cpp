// idemproof-stub: the fake payment provider as a process (Boost.Beast,
// HTTP/1.1, one thread per connection: a stub serves a handful of callers).
// The first stdout line is "listening on 127.0.0.1:PORT"; SIGTERM/SIGINT exit 0.
// This translation unit carries out a reply's disposition: holding a
// connection unanswered, and the SIGSTOP/SIGKILL of the caller's process.

// Boost 1.74's asio/awaitable.hpp uses std::exchange without <utility> (C++20).
#include <utility>

#include <poll.h>
#include <signal.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "provider_stub.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace idemproof::stub {
namespace {

http::response<http::string_body> to_beast(const HttpResponse& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> out;
  out.version(version);
  out.result(static_cast<unsigned>(r.status));
  for (const auto& [name, value] : r.headers) out.insert(name, value);
  out.keep_alive(keep_alive);
  out.body() = r.body;
  out.prepare_payload();
  return out;
}

// Waits until the peer closes or `for_` passes.
void hold(tcp::socket& socket, std::chrono::milliseconds for_) {
  const auto until = std::chrono::steady_clock::now() + for_;
  char buf[256];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{socket.native_handle(), POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (poll(&p, 1, static_cast<int>(std::max<long>(1, left.count()))) <= 0) continue;
    beast::error_code ec;
    if (socket.read_some(asio::buffer(buf), ec) == 0 || ec) return;
  }
}

void serve_connection(tcp::socket socket, ProviderStub& stub) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  for (;;) {
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) break;
    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    for (const auto& f : req) request.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    request.body = req.body();
    StubReply reply = stub.handle(request);
    const bool keep_alive = req.keep_alive();
    switch (reply.disposition) {
      case Disposition::answer: {
        auto res = to_beast(reply.response, req.version(), keep_alive);
        http::write(socket, res, ec);
        if (ec || !keep_alive) goto done;
        continue;
      }
      case Disposition::hold:
        hold(socket, reply.hold_for);
        goto done;
      case Disposition::kill_then_close:
        ::kill(static_cast<pid_t>(reply.pid), SIGKILL);
        goto done;
      case Disposition::stop_answer_kill: {
        // Stopped first, the caller cannot read the answer before it dies.
        ::kill(static_cast<pid_t>(reply.pid), SIGSTOP);
        auto res = to_beast(reply.response, req.version(), false);
        http::write(socket, res, ec);
        ::kill(static_cast<pid_t>(reply.pid), SIGKILL);
        goto done;
      }
    }
  }
done:
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

}  // namespace
}  // namespace idemproof::stub

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"idemproof-stub: a fake payment provider with a ledger and faults"};
  std::string host = "127.0.0.1";
  unsigned short port = 0;
  bool ignore_keys = false;
  std::string key_header = "Idempotency-Key";
  app.add_option("--host", host, "address to bind");
  app.add_option("--port", port, "0 picks a free port");
  app.add_option("--key-header", key_header, "header carrying the caller's idempotency key");
  app.add_flag("--ignore-keys", ignore_keys, "every charge commits a new effect, keys or not");
  CLI11_PARSE(app, argc, argv);

  try {
    idemproof::stub::ProviderStub stub(!ignore_keys, key_header);
    asio::io_context ioc;
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address(host), port));
    std::cout << "listening on " << acceptor.local_endpoint().address().to_string() << ":"
              << acceptor.local_endpoint().port() << std::endl;
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([](beast::error_code, int) { std::_Exit(0); });
    std::thread signal_thread([&ioc] { ioc.run(); });
    signal_thread.detach();
    for (;;) {
      tcp::socket socket(ioc);
      beast::error_code ec;
      acceptor.accept(socket, ec);
      if (ec) continue;
      std::thread(idemproof::stub::serve_connection, std::move(socket), std::ref(stub)).detach();
    }
  } catch (const std::exception& e) {
    std::cerr << "idemproof-stub: " << e.what() << "\n";
    return 1;
  }
}
