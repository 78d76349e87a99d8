#include "h2_arrival_server.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

namespace idemproof::bench {
namespace {

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Conn {
  int fd;
  std::vector<std::string> keep;  // header values alive until sent
};

ssize_t OnSend(nghttp2_session*, const std::uint8_t* data, std::size_t length, int, void* user) {
  auto* c = static_cast<Conn*>(user);
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n = ::send(c->fd, data + done, length - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(length);
}

nghttp2_nv Nv(const char* name, const std::string& value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name)),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), std::strlen(name), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

// The request is complete when its END_STREAM is parsed: stamp and answer.
int OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
    return 0;
  const std::int64_t arrived = NowNs();
  auto* c = static_cast<Conn*>(user);
  c->keep.push_back(std::to_string(arrived));
  static const std::string ok = "200";
  nghttp2_nv nva[] = {Nv(":status", ok), Nv("x-arrival-ns", c->keep.back())};
  nghttp2_submit_response(session, frame->hd.stream_id, nva, 2, nullptr);
  return 0;
}

}  // namespace

H2ArrivalServer::~H2ArrivalServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string H2ArrivalServer::Start() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 16) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return std::string("h2 arrival server: ") + std::strerror(errno);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Run(); });
  return "";
}

void H2ArrivalServer::Run() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) != 1) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Serve(fd);
    ::close(fd);
  }
}

void H2ArrivalServer::Serve(int fd) {
  Conn c{fd, {}};
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_send_callback(cbs, OnSend);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrameRecv);
  nghttp2_session* session = nullptr;
  const int made = nghttp2_session_server_new(&session, cbs, &c);
  nghttp2_session_callbacks_del(cbs);
  if (made != 0) return;
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, 1);
  char buf[65536];
  bool ok = nghttp2_session_send(session) == 0;
  while (ok && !stop_ && (nghttp2_session_want_read(session) || nghttp2_session_want_write(session))) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, 100);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;  // the client closed (or broke) the connection
    ok = nghttp2_session_mem_recv(session, reinterpret_cast<const std::uint8_t*>(buf), static_cast<std::size_t>(n)) >= 0 &&
         nghttp2_session_send(session) == 0;
    c.keep.clear();  // every submitted answer went out in nghttp2_session_send
  }
  nghttp2_session_del(session);
}

}  // namespace idemproof::bench
