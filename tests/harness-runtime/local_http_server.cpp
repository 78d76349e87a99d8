#include "local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace idemproof::testing {

LocalHttpServer::LocalHttpServer(Behaviour behaviour) : behaviour_(behaviour) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

LocalHttpServer::~LocalHttpServer() { Stop(); }

std::string LocalHttpServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<std::string> LocalHttpServer::received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

void LocalHttpServer::Stop() {
  if (stop_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  ::close(listen_fd_);
}

void LocalHttpServer::RefuseNewConnections() {
  refusing_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);  // Linux: stops listening; connects get RST
}

void LocalHttpServer::AcceptLoop() {
  while (!stop_.load()) {
    if (refusing_.load()) {
      ::usleep(20'000);
      continue;
    }
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    connections_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void LocalHttpServer::Serve(int fd) {
  std::string buffer;
  int on_this_connection = 0;
  while (!stop_.load()) {
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 50);
    if (ready == 0) continue;
    char chunk[4096];
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    // One complete request: head, then Content-Length bytes of body.
    auto head_end = buffer.find("\r\n\r\n");
    if (head_end == std::string::npos) continue;
    std::size_t body_len = 0;
    auto cl = buffer.find("Content-Length: ");
    if (cl != std::string::npos && cl < head_end) body_len = std::stoul(buffer.substr(cl + 16));
    if (buffer.size() < head_end + 4 + body_len) continue;
    std::string request = buffer.substr(0, head_end + 4 + body_len);
    buffer.erase(0, head_end + 4 + body_len);
    requests_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      received_.push_back(request);
    }
    if (behaviour_ == Behaviour::kSilent) {
      while (!stop_.load()) {
        pollfd q{fd, POLLIN, 0};
        if (::poll(&q, 1, 50) > 0) {
          char c;
          if (::read(fd, &c, 1) <= 0) break;
        }
      }
      break;
    }
    ++on_this_connection;
    if (behaviour_ == Behaviour::kReset || (behaviour_ == Behaviour::kResetSecond && on_this_connection == 2)) {
      linger l{1, 0};  // close with RST
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      break;
    }
    if (behaviour_ == Behaviour::kAnswerBig) {
      const std::string big = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                              std::to_string(kBigBody) + "\r\n\r\n" + std::string(kBigBody, 'b');
      // MSG_NOSIGNAL: a client that cut the body closes early; no SIGPIPE.
      if (::send(fd, big.data(), big.size(), MSG_NOSIGNAL) < 0) break;
      continue;
    }
    const std::string body = "{\"echo\":" + std::to_string(request.size()) + "}";
    const std::string answer = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                               "X-Test: yes\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body;
    if (::write(fd, answer.data(), answer.size()) < 0) break;
  }
  ::close(fd);
}

}  // namespace idemproof::testing
