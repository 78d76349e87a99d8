// The chaos proxy's upstream in HTTP/2 (ProxySettings::upstream_http2)
// against a real h2c server on loopback: a libnghttp2 server session on a
// blocking socket in a thread of the test (prior knowledge, as haproxy's
// `bind ... proto h2`), and a TLS server that knows no ALPN. The client's
// side stays HTTP/1.1 (libcurl).
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nghttp2/nghttp2.h>

#include "base/header_list.h"
#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "support/loopback_listener.h"
#include "support/reference_process.h"
#include "support/test_client.h"
#include "support/tls_test_server.h"

using namespace idemproof::injectors;
using idemproof::find_header;
using idemproof::HeaderList;
using idemproof::testkit::ClientAnswer;
using idemproof::testkit::header_value;
using idemproof::testkit::listen_loopback;
using idemproof::testkit::TestClient;

namespace {

// An h2c-only server: answers every request 201 with two headers in a fixed
// order and "got N bytes" (or resets its stream, or holds it unanswered
// until the connection closes), and keeps what it read. It
// speaks nothing but HTTP/2: an HTTP/1.1 request is a bad preface to it, and
// it closes the connection. Connections one after the other, each bounded by
// 5 s; stops with the object.
class H2cUpstream {
 public:
  struct Seen {
    HeaderList fields;  // pseudo-headers included, as received
    std::string body;
  };

  enum class Mode { kAnswer, kReset, kHold };
  explicit H2cUpstream(Mode mode = Mode::kAnswer) : mode_(mode) {
    fd_ = listen_loopback(&port_);
    REQUIRE(fd_ >= 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~H2cUpstream() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }
  int connections() const { return connections_; }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  struct Conn {
    H2cUpstream* self = nullptr;
    nghttp2_session* session = nullptr;
    std::map<std::int32_t, Seen> streams;
    std::map<std::int32_t, std::string> answers;  // bodies being sent
    std::map<std::int32_t, std::size_t> answered;
  };

  static int OnHeader(nghttp2_session*, const nghttp2_frame* f, const std::uint8_t* n, std::size_t nl,
                      const std::uint8_t* v, std::size_t vl, std::uint8_t, void* user) {
    static_cast<Conn*>(user)->streams[f->hd.stream_id].fields.emplace_back(
        std::string(reinterpret_cast<const char*>(n), nl), std::string(reinterpret_cast<const char*>(v), vl));
    return 0;
  }
  static int OnData(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* d, std::size_t len,
                    void* user) {
    static_cast<Conn*>(user)->streams[id].body.append(reinterpret_cast<const char*>(d), len);
    return 0;
  }
  static ssize_t ReadAnswer(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length,
                            std::uint32_t* flags, nghttp2_data_source* source, void*) {
    auto* c = static_cast<Conn*>(source->ptr);
    const std::string& body = c->answers[id];
    std::size_t& done = c->answered[id];
    const std::size_t n = std::min(length, body.size() - done);
    std::copy_n(body.data() + done, n, buf);
    done += n;
    if (done == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  static int OnFrameRecv(nghttp2_session* s, const nghttp2_frame* f, void* user) {
    auto* c = static_cast<Conn*>(user);
    const bool request_done = (f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
                              (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (!request_done) return 0;
    const std::int32_t id = f->hd.stream_id;
    {
      std::lock_guard lock(c->self->mu_);
      c->self->seen_.push_back(c->streams[id]);
    }
    if (c->self->mode_ == Mode::kHold) return 0;
    if (c->self->mode_ == Mode::kReset) return nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
    c->answers[id] = "got " + std::to_string(c->streams[id].body.size()) + " bytes";
    const std::string length = std::to_string(c->answers[id].size());
    auto nv = [](const char* n, const std::string& v) {
      return nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(n)),
                        reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), std::strlen(n), v.size(),
                        NGHTTP2_NV_FLAG_NONE};
    };
    const std::string status = "201", first = "1", second = "2", type = "text/plain";
    nghttp2_nv nva[] = {nv(":status", status), nv("x-first", first), nv("x-second", second),
                        nv("content-type", type), nv("content-length", length)};
    nghttp2_data_provider provider{};
    provider.source.ptr = c;
    provider.read_callback = ReadAnswer;
    return nghttp2_submit_response(s, id, nva, 5, &provider);
  }

  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      ++connections_;
      Handle(c);
      ::close(c);
    }
  }

  void Handle(int fd) {
    nghttp2_session_callbacks* cbs = nullptr;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(cbs, OnHeader);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, OnData);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrameRecv);
    Conn c;
    c.self = this;
    nghttp2_session_server_new(&c.session, cbs, &c);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, nullptr, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[16384];
    while (!stop_ && std::chrono::steady_clock::now() < deadline) {
      const std::uint8_t* out = nullptr;
      ssize_t n;
      bool broken = false;
      while ((n = nghttp2_session_mem_send(c.session, &out)) > 0) {
        if (::send(fd, out, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) broken = true;
      }
      if (broken || n < 0) break;
      if (!nghttp2_session_want_read(c.session) && !nghttp2_session_want_write(c.session)) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t got = ::recv(fd, buf, sizeof buf, 0);
      if (got <= 0) break;
      if (nghttp2_session_mem_recv(c.session, reinterpret_cast<std::uint8_t*>(buf), static_cast<std::size_t>(got)) < 0)
        break;  // not HTTP/2 (an HTTP/1.1 request): close
    }
    nghttp2_session_del(c.session);
  }

  Mode mode_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<Seen> seen_;
  std::thread thread_;
};

ProxySettings H2Settings(std::uint16_t upstream_port) {
  ProxySettings s;
  s.upstream = {"127.0.0.1", upstream_port};
  s.upstream_timeout = std::chrono::seconds(5);
  s.upstream_http2 = true;
  return s;
}

}  // namespace

TEST_CASE("upstream_http2: an HTTP/1.1 request goes to an h2c-only upstream as a stream, its answer comes back", "[injectors][proxy][h2]") {
  H2cUpstream upstream;
  std::mutex mu;
  std::vector<UpstreamExchange> record;
  ProxySettings settings = H2Settings(upstream.port());
  settings.on_exchange = [&](const UpstreamExchange& x) {
    std::lock_guard lock(mu);
    record.push_back(x);
  };
  FaultEventLog events;
  ChaosProxy proxy(settings, &events);
  REQUIRE(proxy.start().ok());
  TestClient client;
  // Past the 64 KiB stream window: the body's end goes after a WINDOW_UPDATE.
  const std::string body(100000, 'b');
  const std::string url = "http://" + proxy.endpoint().to_string() + "/orders?i=1";
  for (int i = 0; i < 2; ++i) {
    ClientAnswer a = client.send("POST", url, {"Host: shop.example", "X-Key: k1", "Connection: keep-alive",
                                               "Content-Type: application/octet-stream"},
                                 body);
    REQUIRE(a.answered);
    CHECK(a.status == 201);
    CHECK(a.body == "got 100000 bytes");
    CHECK(header_value(a.headers, "X-First") == "1");
    CHECK(a.headers.find("x-first") < a.headers.find("x-second"));  // in the upstream's order
    CHECK(a.new_connections == (i == 0 ? 1 : 0));  // the client's side kept alive
  }
  CHECK(upstream.connections() == 2);  // one upstream connection per exchange
  auto seen = upstream.seen();
  REQUIRE(seen.size() == 2);
  const HeaderList& f = seen[0].fields;
  CHECK(find_header(f, ":method") == "POST");
  CHECK(find_header(f, ":scheme") == "http");
  CHECK(find_header(f, ":authority") == "shop.example");  // Host's value
  CHECK(find_header(f, ":path") == "/orders?i=1");
  CHECK(find_header(f, "x-key") == "k1");
  CHECK(find_header(f, "content-length") == "100000");
  CHECK_FALSE(find_header(f, "host").has_value());  // HTTP/2 forbids the connection-specific ones
  CHECK_FALSE(find_header(f, "connection").has_value());
  CHECK(seen[0].body == body);
  CHECK(proxy.counters().upstream_sends == 2);
  std::lock_guard lock(mu);
  REQUIRE(record.size() == 2);  // the egress record as over HTTP/1.1
  CHECK(record[0].request.target == "/orders?i=1");
  REQUIRE(record[0].answer.has_value());
  CHECK(record[0].answer->status == 201);
  CHECK(record[0].answer->body == "got 100000 bytes");
  CHECK(record[0].sent_ns > 0);
}

TEST_CASE("upstream_http2: a stream the upstream resets is a 502 that names the code", "[injectors][proxy][h2]") {
  H2cUpstream upstream(H2cUpstream::Mode::kReset);
  FaultEventLog events;
  ChaosProxy proxy(H2Settings(upstream.port()), &events);
  REQUIRE(proxy.start().ok());
  ClientAnswer a = TestClient().send("POST", "http://" + proxy.endpoint().to_string() + "/orders", {}, "{}");
  REQUIRE(a.answered);
  CHECK(a.status == 502);
  CHECK(header_value(a.headers, "X-Idemproof-Proxy") == "upstream-error");
  CHECK(a.body.find("REFUSED_STREAM") != std::string::npos);
  CHECK(upstream.seen().size() == 1);
}

TEST_CASE("upstream_http2: heal closes an exchange the upstream holds, without forcing", "[injectors][proxy][h2]") {
  H2cUpstream upstream(H2cUpstream::Mode::kHold);
  FaultEventLog events;
  ChaosProxy proxy(H2Settings(upstream.port()), &events);  // upstream timeout 5 s, heal_timeout 5 s
  REQUIRE(proxy.start().ok());
  const std::string url = "http://" + proxy.endpoint().to_string() + "/orders";
  auto held = std::async(std::launch::async, [url] { return TestClient().send("POST", url, {}, "{}", 20000); });
  for (int i = 0; i < 2500 && upstream.seen().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  REQUIRE(upstream.seen().size() == 1);  // the stream is open upstream, unanswered
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(proxy.heal());  // drained: the exchange's connection was closed, not left to the timeout
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  REQUIRE(held.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(held.get().status != 201);
}

TEST_CASE("idemproof proxy --upstream-http2 forwards to an h2c-only upstream", "[injectors][proxy][h2]") {
  H2cUpstream upstream;
  idemproof::testkit::ReferenceProcess proxy;  // any child that prints `listening on`
  const std::string binary = std::string(IDEMPROOF_BINARY_DIR) + "/harness/cli/idemproof";
  REQUIRE(proxy.start_command({binary, "proxy", "--upstream", "127.0.0.1:" + std::to_string(upstream.port()),
                               "--upstream-http2"}) == "");
  ClientAnswer a = TestClient().send("POST", "http://127.0.0.1:" + std::to_string(proxy.port()) + "/x", {}, "abc");
  REQUIRE(a.answered);
  CHECK(a.status == 201);
  CHECK(a.body == "got 3 bytes");
  const int status = proxy.stop();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}


TEST_CASE("upstream_http2 over TLS: a server that does not select h2 in ALPN is a 502 saying so", "[injectors][proxy][h2]") {
  idemproof::testkit::NoAlpnTlsServer server;
  ProxySettings settings = H2Settings(server.port());
  settings.upstream_tls = idemproof::TlsOptions{"", /*insecure=*/true, ""};
  FaultEventLog events;
  ChaosProxy proxy(settings, &events);
  REQUIRE(proxy.start().ok());
  ClientAnswer a = TestClient().send("POST", "http://" + proxy.endpoint().to_string() + "/orders", {}, "{}");
  REQUIRE(a.answered);
  // The server's side of the handshake may end a moment after the proxy's.
  for (int i = 0; i < 2500 && !server.handshaken(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(server.handshaken());
  CHECK(a.status == 502);
  CHECK(header_value(a.headers, "X-Idemproof-Proxy") == "upstream-error");
  CHECK(a.body.find("did not select h2 in ALPN (it selected no protocol)") != std::string::npos);
  CHECK(proxy.counters().upstream_sends == 0);  // nothing was written to it
}
