// The tcp fault tests' rig (tcp_fault_test.cpp, tcp_fault_recipe_test.cpp):
// a real TCP echo server on loopback, a client with a deadline on every
// wait, a TcpFaultProxy between them with its event log, and the builders
// of tcp faults from YAML through the tcp registry. Test-only (Catch2).
#pragma once

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "injectors/fault_event.h"
#include "injectors/registry.h"
#include "injectors/tcp_fault_injector.h"
#include "injectors/tcp_fault_proxy.h"
#include "support/loopback_listener.h"

namespace idemproof::tcp_rig {

using namespace idemproof::injectors;
using namespace std::chrono_literals;

// Echoes every byte back until EOF; each connection on its thread, all
// joined by the destructor (polls of 20 ms, so a stop is seen at once).
class EchoServer {
 public:
  EchoServer() {
    fd_ = idemproof::testkit::listen_loopback(&port_);
    REQUIRE(fd_ >= 0);
    accept_ = std::thread([this] { AcceptLoop(); });
  }
  ~EchoServer() {
    stop_ = true;
    accept_.join();
    for (auto& t : conns_) t.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      conns_.emplace_back([this, c] {
        char buf[4096];
        while (!stop_) {
          pollfd q{c, POLLIN, 0};
          if (::poll(&q, 1, 20) <= 0) continue;
          ssize_t n = ::recv(c, buf, sizeof buf, 0);
          if (n <= 0) break;
          if (::send(c, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
        }
        ::close(c);
      });
    }
  }
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_;
  std::vector<std::thread> conns_;
};

// A client connection with deadlines on every wait.
class Client {
 public:
  explicit Client(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    timeval tv{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Client() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& s) { return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }

  struct Read {
    std::string bytes;
    enum { kTimeout, kEof, kReset, kOk } end = kOk;
  };
  // Up to `want` bytes, until `deadline` passed, EOF or an error.
  Read Recv(std::size_t want, std::chrono::milliseconds deadline) {
    Read r;
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (r.bytes.size() < want) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        r.end = Read::kTimeout;
        return r;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, std::min(sizeof buf, want - r.bytes.size()), 0);
      if (n == 0) {
        r.end = Read::kEof;
        return r;
      }
      if (n < 0) {
        r.end = errno == ECONNRESET ? Read::kReset : Read::kEof;
        return r;
      }
      r.bytes.append(buf, static_cast<std::size_t>(n));
    }
    return r;
  }
  // Sends `s` and reads it back within 2 s.
  bool Echoes(const std::string& s) { return Send(s) && Recv(s.size(), 2000ms).bytes == s; }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

inline std::unique_ptr<Injector> Build(const std::string& yaml) {
  Registry r;
  register_builtin_tcp_faults(r);
  auto built = r.build(YAML::Load(yaml));
  REQUIRE(built.ok());
  return std::move(built.value());
}

inline idemproof::Status BuildError(const std::string& yaml) {
  Registry r;
  register_builtin_tcp_faults(r);
  auto built = r.build(YAML::Load(yaml));
  REQUIRE_FALSE(built.ok());
  return built.status();
}

// Waits (at most 2 s) until `log` holds an event of `phase`; its detail.
inline std::string AwaitEvent(const FaultEventLog& log, const std::string& phase) {
  for (int i = 0; i < 400; ++i) {
    for (const auto& e : log.snapshot())
      if (e.phase == phase) return e.detail;
    std::this_thread::sleep_for(5ms);
  }
  return "<no " + phase + " event>";
}

struct Rig {
  EchoServer echo;
  FaultEventLog events;
  TcpFaultProxy proxy{{{"127.0.0.1", 0}, {"127.0.0.1", echo.port()}}, &events};
  Rig() { REQUIRE(proxy.start().ok()); }
  std::uint16_t port() const { return proxy.endpoint().port; }
  InjectorContext context() { return InjectorContext{nullptr, nullptr, &proxy}; }
};

}  // namespace idemproof::tcp_rig
