// LocalHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 for the client tests,
// with a behaviour per test: answer (keep-alive), stay silent after reading
// the request, reset the connection after reading it, or answer the first
// request of each connection and reset on the second, or answer a body of
// kBigBody bytes (keep-alive; the client may abort it). It counts accepted
// connections and requests. Plain POSIX sockets, one thread per connection;
// every wait is bounded by poll() timeouts, Stop() joins every thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace idemproof::testing {

class LocalHttpServer {
 public:
  enum class Behaviour { kAnswer, kSilent, kReset, kResetSecond, kAnswerBig };
  static constexpr std::size_t kBigBody = 64 * 1024;

  explicit LocalHttpServer(Behaviour behaviour);
  ~LocalHttpServer();  // Stop()

  int port() const { return port_; }
  std::string url(const std::string& path = "/") const;
  int connections() const { return connections_.load(); }
  int requests() const { return requests_.load(); }
  // The raw text of every request received (head + body).
  std::vector<std::string> received() const;
  // From now on connections are refused; open ones go on being served.
  void RefuseNewConnections();
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int fd);

  Behaviour behaviour_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> refusing_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::vector<std::string> received_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace idemproof::testing
