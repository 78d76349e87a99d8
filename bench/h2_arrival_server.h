// H2ArrivalServer: a loopback h2c server (HTTP/2 by prior knowledge) for the
// bench's spread table: it records when each stream's END_STREAM frame was
// parsed (steady clock: when the request's last byte was read) and answers
// 200 with `x-arrival-ns`, as the reference's --report-arrival does over
// HTTP/1.1. No application behind it: the arrival spread of a single-packet
// burst here is the server's parse loop, which is the point of the attack.
//
// Thread-safety: Start() and the destructor from one thread; one serving
// thread inside, one connection at a time, every wait bounded (100 ms polls).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace idemproof::bench {

class H2ArrivalServer {
 public:
  H2ArrivalServer() = default;
  ~H2ArrivalServer();
  H2ArrivalServer(const H2ArrivalServer&) = delete;
  H2ArrivalServer& operator=(const H2ArrivalServer&) = delete;

  // Listens on 127.0.0.1 (a free port). Empty on success, else why not.
  std::string Start();
  std::uint16_t port() const { return port_; }

 private:
  void Run();
  void Serve(int fd);

  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace idemproof::bench
