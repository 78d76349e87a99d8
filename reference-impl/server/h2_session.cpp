#include "h2_session.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <sys/types.h>

#include <nghttp2/nghttp2.h>

#include "base/problem.h"
#include "base/steady_clock.h"

namespace idemproof::ref {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr auto kReadTimeout = std::chrono::seconds(30);
constexpr auto kTick = std::chrono::milliseconds(250);  // how soon SIGTERM's GOAWAY goes out
constexpr std::uint32_t kMaxConcurrentStreams = 128;
constexpr std::size_t kHeaderLimit = 16 * 1024;
constexpr std::size_t kWriteChunk = 64 * 1024;

// One request in ctx.in_flight while its holder lives.
class InFlight {
 public:
  explicit InFlight(ServerContext& ctx) : ctx_(ctx) { ++ctx_.in_flight; }
  ~InFlight() { --ctx_.in_flight; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  ServerContext& ctx_;
};

struct Stream {
  HttpRequest request;
  std::size_t header_bytes = 0;
  bool answered = false;  // a response is submitted: further frames are ignored
  std::optional<InFlight> counted;
  std::string answer_body;  // the data provider's source, alive until the stream closes
  std::size_t answer_sent = 0;
};

bool connection_specific(std::string_view name) {
  return name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
         name == "transfer-encoding" || name == "upgrade" || name == "content-length";
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

class H2Session : public std::enable_shared_from_this<H2Session> {
 public:
  H2Session(tcp::socket socket, ServerContext& ctx)
      : socket_(std::move(socket)), ctx_(ctx), tick_(socket_.get_executor()) {}
  ~H2Session() {
    if (session_ != nullptr) nghttp2_session_del(session_);
  }
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  tcp::socket::executor_type executor() { return socket_.get_executor(); }

  // REQUIRES: on the socket's strand.
  void start(const std::string& received) {
    if (!make_session()) return close();
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, kMaxConcurrentStreams}};
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1);
    last_read_ = std::chrono::steady_clock::now();
    arm_tick();
    if (!feed(received.data(), received.size())) return;
    read();
  }

 private:
  bool make_session() {
    nghttp2_session_callbacks* callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) return false;
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &H2Session::on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, &H2Session::on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &H2Session::on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &H2Session::on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &H2Session::on_stream_close);
    const int made = nghttp2_session_server_new(&session_, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    return made == 0;
  }

  void read() {
    socket_.async_read_some(asio::buffer(in_), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
      if (ec) return self->close();
      self->last_read_ = std::chrono::steady_clock::now();
      if (self->feed(self->in_.data(), n)) self->read();
    });
  }

  // Parses `n` received bytes (the callbacks stamp and dispatch), then sends
  // what they submitted. False once the connection is closed.
  bool feed(const char* data, std::size_t n) {
    if (nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), n) < 0) {
      close();
      return false;
    }
    go_away_if_stopping();
    flush();
    return !closed_;
  }

  // Writes what nghttp2 has queued, one write at a time; closes once the
  // session wants neither to read nor to write (after GOAWAY, both sides done).
  void flush() {
    if (writing_ || closed_) return;
    out_.clear();
    while (out_.size() < kWriteChunk) {
      const std::uint8_t* data = nullptr;
      const auto n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) return close();
      if (n == 0) break;
      out_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    if (out_.empty()) {
      if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0) close();
      return;
    }
    writing_ = true;
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) return self->close();
      self->flush();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    tick_.cancel();
  }

  void go_away(std::uint32_t error_code) {
    if (goaway_sent_) return;
    goaway_sent_ = true;
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(session_), error_code,
                          nullptr, 0);
  }
  void go_away_if_stopping() {
    if (ctx_.stopping.load()) go_away(NGHTTP2_NO_ERROR);
  }

  // Every kTick: SIGTERM's GOAWAY, and the read timeout (30 s without a
  // frame while no stream is open).
  void arm_tick() {
    tick_.expires_after(kTick);
    tick_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      if (self->streams_.empty() && std::chrono::steady_clock::now() - self->last_read_ >= kReadTimeout) {
        self->go_away(NGHTTP2_NO_ERROR);
      }
      self->go_away_if_stopping();
      self->flush();
      if (!self->closed_) self->arm_tick();
    });
  }

  // Submits `answer` on stream `id` (X-Arrival-Ns when asked and known).
  void respond(std::int32_t id, Stream& stream, HttpResponse answer, std::optional<std::int64_t> arrival_ns) {
    stream.answered = true;
    std::vector<std::pair<std::string, std::string>> fields;
    fields.emplace_back(":status", std::to_string(answer.status));
    for (auto& [name, value] : answer.headers) {
      std::string n = lower(name);
      if (!connection_specific(n)) fields.emplace_back(std::move(n), std::move(value));
    }
    fields.emplace_back("content-length", std::to_string(answer.body.size()));
    if (ctx_.options.report_arrival && arrival_ns) fields.emplace_back("x-arrival-ns", std::to_string(*arrival_ns));
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : fields) {
      nva.push_back({reinterpret_cast<std::uint8_t*>(n.data()), reinterpret_cast<std::uint8_t*>(v.data()), n.size(),
                     v.size(), NGHTTP2_NV_FLAG_NONE});  // nghttp2 copies them
    }
    stream.answer_body = std::move(answer.body);
    stream.answer_sent = 0;
    nghttp2_data_provider body{};
    body.source.ptr = &stream;
    body.read_callback = &H2Session::read_body;
    nghttp2_submit_response(session_, id, nva.data(), nva.size(), stream.answer_body.empty() ? nullptr : &body);
  }

  // The worker's answer, back on the strand.
  void on_answer(std::int32_t id, HttpResponse answer, std::int64_t arrival_ns) {
    if (closed_) return;
    auto it = streams_.find(id);
    if (it == streams_.end()) return;  // reset by the client meanwhile
    respond(id, *it->second, std::move(answer), arrival_ns);
    go_away_if_stopping();
    flush();
  }

  void dispatch(std::int32_t id, Stream& stream) {
    stream.counted.emplace(ctx_);
    auto& request = stream.request;
    run_business_step(ctx_, socket_.get_executor(), std::move(request),
                      [self = shared_from_this(), id, arrival_ns = steady_now_ns()](HttpResponse answer) {
                        self->on_answer(id, std::move(answer), arrival_ns);
                      });
  }

  static H2Session& of(void* user) { return *static_cast<H2Session*>(user); }
  Stream* find(std::int32_t id) {
    auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : it->second.get();
  }

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      of(user).streams_[frame->hd.stream_id] = std::make_unique<Stream>();
    }
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                       const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
    Stream* stream = of(user).find(frame->hd.stream_id);
    if (stream == nullptr) return 0;
    stream->header_bytes += namelen + valuelen;
    if (stream->header_bytes > kHeaderLimit) return 0;  // answered 431 at END_STREAM
    const std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":method") {
      stream->request.method = std::move(v);
    } else if (n == ":path") {
      stream->request.target = std::move(v);
    } else if (n == ":authority") {
      stream->request.headers.emplace_back("host", std::move(v));
    } else if (!n.empty() && n[0] != ':') {
      stream->request.headers.emplace_back(std::string(n), std::move(v));
    }
    return 0;
  }

  static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len,
                           void* user) {
    H2Session& self = of(user);
    Stream* stream = self.find(id);
    if (stream == nullptr || stream->answered) return 0;
    if (stream->request.body.size() + len > self.ctx_.options.body_limit) {
      // Answered now; nghttp2 resets the rest of the upload (NO_ERROR).
      stream->request.body.clear();
      self.respond(id, *stream,
                   problem_response(413, "payload-too-large", "Payload too large",
                                    "the body exceeds " + std::to_string(self.ctx_.options.body_limit) + " bytes"),
                   std::nullopt);
      return 0;
    }
    stream->request.body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  // A request is complete when its END_STREAM is parsed: stamp, dispatch.
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
      return 0;
    }
    H2Session& self = of(user);
    Stream* stream = self.find(frame->hd.stream_id);
    if (stream == nullptr || stream->answered) return 0;
    if (stream->header_bytes > kHeaderLimit) {
      self.respond(frame->hd.stream_id, *stream,
                   problem_response(431, "headers-too-large", "Request header fields too large",
                                    "the header exceeds 16 KiB"),
                   std::nullopt);
      return 0;
    }
    self.dispatch(frame->hd.stream_id, *stream);
    return 0;
  }

  static int on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t, void* user) {
    of(user).streams_.erase(id);  // its in-flight count with it
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                                        std::uint32_t* flags, nghttp2_data_source* source, void*) {
    auto* stream = static_cast<Stream*>(source->ptr);
    const std::size_t n = std::min(length, stream->answer_body.size() - stream->answer_sent);
    std::memcpy(buf, stream->answer_body.data() + stream->answer_sent, n);
    stream->answer_sent += n;
    if (stream->answer_sent == stream->answer_body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  tcp::socket socket_;
  ServerContext& ctx_;
  asio::steady_timer tick_;
  nghttp2_session* session_ = nullptr;
  std::map<std::int32_t, std::unique_ptr<Stream>> streams_;  // open request streams
  std::array<char, 64 * 1024> in_{};
  std::string out_;  // the write in progress
  bool writing_ = false;
  bool closed_ = false;
  bool goaway_sent_ = false;
  std::chrono::steady_clock::time_point last_read_;
};

}  // namespace

void start_h2_session(tcp::socket socket, std::string received, ServerContext& ctx) {
  auto session = std::make_shared<H2Session>(std::move(socket), ctx);
  asio::dispatch(session->executor(), [session, received = std::move(received)] { session->start(received); });
}

}  // namespace idemproof::ref
