#include "relay_floor.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>

namespace idemproof::bench {

namespace {

constexpr std::string_view kRequest = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
constexpr std::string_view kAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// Every blocking call below ends within this deadline (SO_RCVTIMEO/SNDTIMEO).
void bound_socket(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const timeval deadline{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof deadline);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof deadline);
}

int listen_loopback(sockaddr_in& addr) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  bound_socket(fd);  // accept() waits at most the deadline too
  return fd;
}

int dial(const sockaddr_in& addr) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  bound_socket(fd);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int accept_one(int listener) {
  const int fd = accept(listener, nullptr, nullptr);
  if (fd >= 0) bound_socket(fd);
  return fd;
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one message of exactly `size` bytes (requests and answers are fixed).
bool recv_exactly(int fd, char* buf, std::size_t size) {
  while (size > 0) {
    const ssize_t n = recv(fd, buf, size, 0);
    if (n <= 0) return false;
    buf += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

double round_trip_us(int fd, bool& ok) {
  char buf[256];
  const auto start = std::chrono::steady_clock::now();
  ok = ok && send_all(fd, kRequest.data(), kRequest.size()) && recv_exactly(fd, buf, kAnswer.size());
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

RelayFloor measure_relay_floor(int requests) {
  RelayFloor out;
  sockaddr_in responder_addr{}, relay_addr{};
  const int responder_listener = listen_loopback(responder_addr);
  const int relay_listener = listen_loopback(relay_addr);
  if (responder_listener < 0 || relay_listener < 0) return out;

  // Two connections reach the responder: the caller's direct one and the relay's.
  std::thread responder([&] {
    std::thread second;
    for (int k = 0; k < 2; ++k) {
      const int fd = accept_one(responder_listener);
      if (fd < 0) break;
      auto serve = [fd] {
        char buf[256];
        while (recv_exactly(fd, buf, kRequest.size()) && send_all(fd, kAnswer.data(), kAnswer.size())) {
        }
        close(fd);
      };
      if (k == 0) second = std::thread(serve);
      else serve();
    }
    if (second.joinable()) second.join();
  });
  std::thread relay([&] {
    const int client = accept_one(relay_listener);
    const int upstream = dial(responder_addr);
    char buf[256];
    while (client >= 0 && upstream >= 0 && recv_exactly(client, buf, kRequest.size()) &&
           send_all(upstream, buf, kRequest.size()) && recv_exactly(upstream, buf, kAnswer.size()) &&
           send_all(client, buf, kAnswer.size())) {
    }
    if (client >= 0) close(client);
    if (upstream >= 0) close(upstream);
  });

  const int direct = dial(responder_addr);
  const int relayed = dial(relay_addr);
  out.ok = direct >= 0 && relayed >= 0;
  for (int i = 0; out.ok && i < requests + 20; ++i) {
    // Alternate which goes first, as the proxy table does.
    const bool relay_first = i % 2 == 0;
    const double a = round_trip_us(relay_first ? relayed : direct, out.ok);
    const double b = round_trip_us(relay_first ? direct : relayed, out.ok);
    if (i < 20) continue;  // warm-up
    out.relayed_us.push_back(relay_first ? a : b);
    out.direct_us.push_back(relay_first ? b : a);
  }
  // Closing the caller's ends lets each thread's next recv() fail and return.
  if (direct >= 0) close(direct);
  if (relayed >= 0) close(relayed);
  relay.join();
  responder.join();
  close(responder_listener);
  close(relay_listener);
  return out;
}

}  // namespace idemproof::bench
