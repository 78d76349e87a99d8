// The reference's h2c front against clients that stall (issue #43): the real
// idemproof-ref process, HTTP/2 frames written by hand over loopback sockets
// (prior knowledge), the frames it sends back read by their 9-byte headers.
// A request stream left unfinished, an answer the client does not take, many
// idle connections, SIGTERM with such streams open; HTTP/1.1 under the same
// --io-timeout; the caps on streams and connections.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "http_client.h"
#include "service_process.h"
#include "temp_dir.h"

using namespace idemproof::ref::testing;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// RFC 9113 §6: frame types, flags, settings and error codes used here.
constexpr std::uint8_t kHeadersFrame = 0x1;
constexpr std::uint8_t kRstStreamFrame = 0x3;
constexpr std::uint8_t kSettingsFrame = 0x4;
constexpr std::uint8_t kGoawayFrame = 0x7;
constexpr std::uint8_t kEndStream = 0x1;
constexpr std::uint8_t kEndHeaders = 0x4;
constexpr std::uint16_t kInitialWindowSize = 0x4;
constexpr std::uint32_t kNoError = 0x0;
constexpr std::uint32_t kRefusedStream = 0x7;
constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

std::string be(std::uint64_t value, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

std::uint32_t be32(std::string_view b) {
  return (static_cast<std::uint32_t>(static_cast<unsigned char>(b[0])) << 24) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(b[1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(b[2])) << 8) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[3]));
}

std::string frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream, std::string_view payload) {
  return be(payload.size(), 3) + static_cast<char>(type) + static_cast<char>(flags) + be(stream, 4) +
         std::string(payload);
}

// The preface and a SETTINGS frame with `settings` (id, value).
std::string client_start(const std::vector<std::pair<std::uint16_t, std::uint32_t>>& settings = {}) {
  std::string payload;
  for (const auto& [id, value] : settings) payload += be(id, 2) + be(value, 4);
  return std::string(kPreface) + frame(kSettingsFrame, 0, 0, payload);
}

// An HPACK integer with an N-bit prefix (RFC 7541 §5.1).
void hpack_integer(std::string& out, std::uint8_t first, int prefix_bits, std::size_t value) {
  const std::size_t max = (std::size_t{1} << prefix_bits) - 1;
  if (value < max) {
    out += static_cast<char>(first | value);
    return;
  }
  out += static_cast<char>(first | max);
  for (value -= max; value >= 128; value /= 128) out += static_cast<char>((value % 128) | 0x80);
  out += static_cast<char>(value);
}

// A HEADERS frame of a request on `stream`, every field a literal without
// indexing (RFC 7541 §6.2.2), END_STREAM when `end_stream`.
std::string request_headers(std::uint32_t stream, std::string_view method, std::string_view path, bool end_stream) {
  const std::vector<std::pair<std::string_view, std::string_view>> fields{
      {":method", method}, {":scheme", "http"}, {":path", path}, {":authority", "127.0.0.1"},
      {"idempotency-key", "h2-stall"}, {"content-type", "application/json"}};
  std::string block;
  for (const auto& [name, value] : fields) {
    block += '\0';
    hpack_integer(block, 0, 7, name.size());
    block += name;
    hpack_integer(block, 0, 7, value.size());
    block += value;
  }
  return frame(kHeadersFrame, static_cast<std::uint8_t>(kEndHeaders | (end_stream ? kEndStream : 0)), stream,
               block);
}

struct Frame {
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t stream = 0;
  std::string payload;
  // RST_STREAM's error code, or GOAWAY's.
  std::uint32_t error_code() const {
    if (type == kRstStreamFrame && payload.size() >= 4) return be32(payload);
    if (type == kGoawayFrame && payload.size() >= 8) return be32(std::string_view(payload).substr(4));
    return 0xffffffff;
  }
};

// A loopback connection read with deadlines: the bytes received, and whether
// the peer closed it (FIN or reset).
class Wire {
 public:
  explicit Wire(int port) : fd_(connect_loopback(port)) {}
  ~Wire() {
    if (fd_ >= 0) ::close(fd_);
  }
  Wire(const Wire&) = delete;
  Wire& operator=(const Wire&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool peer_closed() const { return peer_closed_; }
  const std::string& received() const { return in_; }  // not yet taken as frames

  bool send(std::string_view bytes) {
    return fd_ >= 0 && ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  // Reads what arrives within `wait` (returning at the first bytes). False
  // when nothing came: closed by the peer, or `wait` passed.
  bool read_some(std::chrono::milliseconds wait) {
    if (fd_ < 0 || peer_closed_) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
    char buf[16 * 1024];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      peer_closed_ = true;
      return false;
    }
    in_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  // The next whole frame within `wait`; nullopt when none came in time or
  // the peer closed first.
  std::optional<Frame> next_frame(std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    while (true) {
      if (in_.size() >= 9) {
        const std::size_t length = (static_cast<std::size_t>(static_cast<unsigned char>(in_[0])) << 16) |
                                   (static_cast<std::size_t>(static_cast<unsigned char>(in_[1])) << 8) |
                                   static_cast<unsigned char>(in_[2]);
        if (in_.size() >= 9 + length) {
          Frame f{static_cast<std::uint8_t>(in_[3]), static_cast<std::uint8_t>(in_[4]),
                  be32(std::string_view(in_).substr(5)) & 0x7fffffff, in_.substr(9, length)};
          in_.erase(0, 9 + length);
          return f;
        }
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || !read_some(left)) return std::nullopt;
    }
  }

  // Frames until one `wanted` holds for, within `wait`.
  template <class Wanted>
  std::optional<Frame> frame_where(Wanted wanted, std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      auto f = next_frame(std::max(left, 0ms));
      if (!f || wanted(*f)) return f;
    }
  }

  // Reads (and drops) what comes until the peer closes, within `wait`.
  bool wait_closed(std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    while (!peer_closed_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      read_some(left);
      in_.clear();
    }
    return true;
  }

 private:
  int fd_;
  std::string in_;
  bool peer_closed_ = false;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::string> args_for(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--port", "0", "--db", dir.file("ref.db")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("h2c: a request stream left unfinished is reset at --io-timeout, its idle connection closed",
          "[h2][timeout][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--io-timeout", "1s"}));
  Wire wire(service.port());
  REQUIRE(wire.connected());
  // Stream 1: a POST whose body never comes. Stream 3: a whole GET, answered.
  REQUIRE(wire.send(client_start() + request_headers(1, "POST", "/orders", false) +
                    request_headers(3, "GET", "/healthz", true)));
  const auto start = Clock::now();
  const auto answered = wire.frame_where([](const Frame& f) { return f.type == kHeadersFrame && f.stream == 3; }, 5s);
  CHECK(answered.has_value());

  const auto reset = wire.frame_where([](const Frame& f) { return f.type == kRstStreamFrame && f.stream == 1; }, 10s);
  const double reset_after = seconds_since(start);
  std::cout << "h2c: the unfinished stream reset after " << reset_after << " s (--io-timeout 1s)\n";
  REQUIRE(reset.has_value());
  CHECK(reset->error_code() == kRefusedStream);  // nothing was executed: a retry is safe
  CHECK(reset_after >= 0.9);  // not before the timeout
  CHECK(reset_after < 5.0);   // generous: a loaded machine

  // No stream left, no progress: GOAWAY, then the server closes.
  const auto goaway = wire.frame_where([](const Frame& f) { return f.type == kGoawayFrame; }, 5s);
  REQUIRE(goaway.has_value());
  CHECK(goaway->error_code() == kNoError);
  CHECK(wire.wait_closed(5s));
  std::cout << "h2c: the connection closed after " << seconds_since(start) << " s\n";
}

TEST_CASE("HTTP/1.1: a partial request is dropped at --io-timeout", "[h2][timeout][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--io-timeout", "1s"}));
  Wire wire(service.port());
  REQUIRE(wire.connected());
  REQUIRE(wire.send("POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\n{\"biz"));
  const auto start = Clock::now();
  CHECK(wire.wait_closed(10s));
  const double closed_after = seconds_since(start);
  std::cout << "HTTP/1.1: the partial request dropped after " << closed_after << " s (--io-timeout 1s)\n";
  CHECK(closed_after >= 0.9);
  CHECK(closed_after < 5.0);
}

TEST_CASE("h2c: 400 idle connections with unfinished streams are closed and their descriptors freed",
          "[h2][timeout][slow]") {
  constexpr int kConnections = 400;
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--io-timeout", "3s"}));
  const int before = open_descriptors(service.pid()).count;

  std::vector<std::unique_ptr<Wire>> wires;
  const auto start = Clock::now();
  for (int i = 0; i < kConnections; ++i) {
    auto wire = std::make_unique<Wire>(service.port());
    REQUIRE(wire->connected());
    REQUIRE(wire->send(client_start() + request_headers(1, "POST", "/orders", false)));
    wires.push_back(std::move(wire));
  }
  // Every connection accepted and held (they are still open on this side).
  int peak = before;
  for (auto deadline = Clock::now() + 5s; Clock::now() < deadline && peak < before + kConnections;) {
    peak = open_descriptors(service.pid()).count;
    if (peak < before + kConnections) std::this_thread::sleep_for(20ms);
  }
  std::cout << "h2c: " << kConnections << " connections opened in " << seconds_since(start) << " s\n";

  // The server lets them go by itself: this side keeps every socket open.
  int after = peak;
  const auto deadline = start + 20s;
  while (Clock::now() < deadline && after > before + 2) {
    std::this_thread::sleep_for(100ms);
    after = open_descriptors(service.pid()).count;
  }
  const double freed_after = seconds_since(start);
  std::cout << "h2c: /proc/PID/fd " << before << " before, " << peak << " with " << kConnections
            << " connections, " << after << " " << freed_after << " s after the first (--io-timeout 3s)\n";
  CHECK(peak >= before + kConnections);
  CHECK(after <= before + 2);
  // And this side saw each closed (one deadline for all of them).
  int closed = 0;
  const auto closed_by = Clock::now() + 5s;
  for (auto& wire : wires) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(closed_by - Clock::now());
    closed += wire->wait_closed(std::max(left, 1ms)) ? 1 : 0;
  }
  CHECK(closed == kConnections);
}

TEST_CASE("h2c: SIGTERM with streams the client holds up exits within a second", "[h2][sigterm][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir));  // the default --io-timeout (30 s): only SIGTERM's grace ends them
  Wire wire(service.port());
  REQUIRE(wire.connected());
  // A window of 0: stream 1's answer (a body) cannot be sent. Stream 3: a
  // POST whose body never comes.
  REQUIRE(wire.send(client_start({{kInitialWindowSize, 0}}) + request_headers(1, "GET", "/healthz", true) +
                    request_headers(3, "POST", "/orders", false)));
  // Stream 1 is answered (its HEADERS) and its body held by flow control.
  REQUIRE(wire.frame_where([](const Frame& f) { return f.type == kHeadersFrame && f.stream == 1; }, 5s));

  const auto start = Clock::now();
  const auto exit_code = service.terminate(10s);
  const double took = seconds_since(start);
  std::cout << "h2c: SIGTERM to exit with two held-up streams: " << took * 1000 << " ms\n";
  CHECK(exit_code == std::optional<int>(0));
  CHECK(took < 3.0);  // within a second on an idle machine; generous for a loaded one
  // It said so: GOAWAY before the close.
  const auto goaway = wire.frame_where([](const Frame& f) { return f.type == kGoawayFrame; }, 2s);
  CHECK(goaway.has_value());
}

TEST_CASE("caps: 128 streams per h2c connection, --max-connections over HTTP/1.1 and h2c together",
          "[h2][caps][slow]") {
  constexpr int kCap = 20;
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--max-connections", std::to_string(kCap)}));

  // One connection opens 129 streams whose bodies never come: the 129th is
  // refused (SETTINGS_MAX_CONCURRENT_STREAMS 128), the others stay open.
  auto many_streams = std::make_unique<Wire>(service.port());
  REQUIRE(many_streams->connected());
  std::string burst = client_start();
  for (std::uint32_t id = 1; id <= 257; id += 2) burst += request_headers(id, "POST", "/orders", false);
  REQUIRE(many_streams->send(burst));
  const auto refused = many_streams->frame_where([](const Frame& f) { return f.type == kRstStreamFrame; }, 5s);
  REQUIRE(refused.has_value());
  CHECK(refused->stream == 257);
  CHECK(refused->error_code() == kRefusedStream);

  // kCap connections in all: 9 more h2c and 10 HTTP/1.1, each answered once.
  std::vector<std::unique_ptr<Wire>> open;
  open.push_back(std::move(many_streams));
  const auto h2_answered = [](Wire& wire) {
    return wire.send(client_start() + request_headers(1, "GET", "/healthz", true)) &&
           wire.frame_where([](const Frame& f) { return f.type == kHeadersFrame && f.stream == 1; }, 5s);
  };
  const auto http1_answered = [](Wire& wire) {
    if (!wire.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) return false;
    for (auto deadline = Clock::now() + 5s; Clock::now() < deadline;) {
      if (wire.received().find("\"ok\"") != std::string::npos) return true;
      if (!wire.read_some(100ms) && wire.peer_closed()) return false;
    }
    return false;
  };
  for (int i = 1; i < kCap; ++i) {
    auto wire = std::make_unique<Wire>(service.port());
    REQUIRE(wire->connected());
    REQUIRE((i < kCap / 2 ? h2_answered(*wire) : http1_answered(*wire)));
    open.push_back(std::move(wire));
  }

  // One more, h2c or HTTP/1.1: closed at once, unanswered.
  const auto start = Clock::now();
  Wire extra_h2(service.port());
  REQUIRE(extra_h2.connected());
  extra_h2.send(client_start() + request_headers(1, "GET", "/healthz", true));
  CHECK_FALSE(extra_h2.frame_where([](const Frame&) { return true; }, 3s).has_value());  // not even SETTINGS
  CHECK(extra_h2.peer_closed());
  Wire extra_http1(service.port());
  REQUIRE(extra_http1.connected());
  CHECK_FALSE(http1_answered(extra_http1));
  CHECK(extra_http1.peer_closed());
  std::cout << "caps: connections past --max-connections " << kCap << " closed within "
            << seconds_since(start) << " s\n";

  // One of them leaves (an HTTP/1.1 one): a new connection is served again.
  open.back().reset();
  bool served = false;
  for (auto deadline = Clock::now() + 10s; !served && Clock::now() < deadline;) {
    Wire again(service.port());
    served = again.connected() && h2_answered(again);
    if (!served) std::this_thread::sleep_for(50ms);
  }
  CHECK(served);
}
