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

using Clock = std::chrono::steady_clock;

constexpr auto kLongestTick = std::chrono::milliseconds(250);  // how soon SIGTERM's GOAWAY goes out
// After SIGTERM, what waits on the client (a request not fully sent, an answer
// not taken) gets this long, so a stalled client cannot hold the exit.
constexpr auto kStopGrace = std::chrono::milliseconds(500);
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

// What a stream waits for.
enum class Phase {
  reading,      // the rest of the request (until END_STREAM): the client
  in_business,  // the business step: the service (no deadline here, as HTTP/1.1)
  answering,    // the answer is submitted; the client takes it (flow control)
  reset,        // reset by this side; nghttp2 closes it once RST_STREAM is out
};

struct Stream {
  HttpRequest request;
  std::size_t header_bytes = 0;
  Phase phase = Phase::reading;  // past reading, further request frames are ignored
  Clock::time_point since;       // when `phase` began
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
  H2Session(tcp::socket socket, ServerContext& ctx, ConnectionSlot slot)
      : socket_(std::move(socket)), ctx_(ctx), slot_(std::in_place, std::move(slot)), tick_(socket_.get_executor()) {}
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
    last_progress_ = Clock::now();
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
    write_started_ = Clock::now();
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) return self->close();
      self->flush();
    });
  }

  // Drops the connection and its streams, their in-flight counts with them;
  // a stream in a business step keeps its count until the step ends (as an
  // HTTP/1.1 request whose client left).
  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    tick_.cancel();
    slot_.reset();
    std::erase_if(streams_, [](const auto& entry) { return entry.second->phase != Phase::in_business; });
  }

  void go_away(std::uint32_t error_code) {
    if (goaway_sent_) return;
    goaway_sent_ = true;
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(session_), error_code,
                          nullptr, 0);
  }
  void go_away_if_stopping() {
    if (!ctx_.stopping.load()) return;
    if (!stop_seen_) stop_seen_ = Clock::now();
    go_away(NGHTTP2_NO_ERROR);
  }

  // The deadline of what has waited on the client since `since`:
  // --io-timeout, cut to kStopGrace (from `since` or SIGTERM, the later).
  Clock::time_point client_deadline(Clock::time_point since) const {
    auto deadline = since + ctx_.options.io_timeout;
    if (stop_seen_) deadline = std::min(deadline, std::max(since, *stop_seen_) + kStopGrace);
    return deadline;
  }

  // Resets stream `id` (RST_STREAM `error_code`); its in-flight count ends now,
  // the Stream (the answer's data source) when nghttp2 closes it.
  void reset(std::int32_t id, Stream& stream, std::uint32_t error_code) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, error_code);
    stream.phase = Phase::reset;
    stream.counted.reset();
  }

  // Every tick (kLongestTick, or a quarter of --io-timeout when shorter):
  //  - SIGTERM's GOAWAY;
  //  - a stream whose request is not all in, or whose answer is not all
  //    taken, within its deadline is reset: REFUSED_STREAM while reading
  //    (nothing was executed, a retry is safe), CANCEL while answering;
  //  - a write the client does not take within its deadline closes the
  //    connection;
  //  - no stream left and no progress (a stream opened or closed, a request
  //    frame, an answer submitted; not PING or SETTINGS) for --io-timeout:
  //    GOAWAY, closed once it is out.
  void on_tick() {
    const auto now = Clock::now();
    go_away_if_stopping();
    for (auto& [id, stream] : streams_) {
      if (stream->phase != Phase::reading && stream->phase != Phase::answering) continue;
      if (now >= client_deadline(stream->since)) {
        reset(id, *stream, stream->phase == Phase::reading ? NGHTTP2_REFUSED_STREAM : NGHTTP2_CANCEL);
      }
    }
    if (writing_ && now >= client_deadline(write_started_)) return close();
    // A stream reset here stays in streams_ until its RST_STREAM is out: the
    // closing GOAWAY (nothing is sent after it) waits for the next tick.
    if (streams_.empty() && !goaway_sent_ && now - last_progress_ >= ctx_.options.io_timeout) {
      goaway_sent_ = true;
      nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
    }
    flush();
  }

  void arm_tick() {
    const auto period = std::clamp<Clock::duration>(ctx_.options.io_timeout / 4, std::chrono::milliseconds(1),
                                                    kLongestTick);
    tick_.expires_after(period);
    tick_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      self->on_tick();
      if (!self->closed_) self->arm_tick();
    });
  }

  // Submits `answer` on stream `id` (X-Arrival-Ns when asked and known).
  void respond(std::int32_t id, Stream& stream, HttpResponse answer, std::optional<std::int64_t> arrival_ns) {
    stream.phase = Phase::answering;
    stream.since = last_progress_ = Clock::now();
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
    if (closed_) {
      streams_.erase(id);  // nowhere to answer; its in-flight count ends
      return;
    }
    auto it = streams_.find(id);
    if (it == streams_.end() || it->second->phase != Phase::in_business) return;  // reset meanwhile
    respond(id, *it->second, std::move(answer), arrival_ns);
    go_away_if_stopping();
    flush();
  }

  void dispatch(std::int32_t id, Stream& stream) {
    stream.phase = Phase::in_business;
    stream.since = Clock::now();
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
      H2Session& self = of(user);
      auto stream = std::make_unique<Stream>();
      stream->since = self.last_progress_ = Clock::now();
      self.streams_[frame->hd.stream_id] = std::move(stream);
    }
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                       const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
    Stream* stream = of(user).find(frame->hd.stream_id);
    if (stream == nullptr || stream->phase != Phase::reading) return 0;
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
    if (stream == nullptr || stream->phase != Phase::reading) return 0;
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

  // A request frame is progress; a request is complete when its END_STREAM is
  // parsed: stamp, dispatch.
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
    H2Session& self = of(user);
    Stream* stream = self.find(frame->hd.stream_id);
    if (stream == nullptr || stream->phase != Phase::reading) return 0;
    self.last_progress_ = Clock::now();
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
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
    // Its in-flight count ends with it; a stream this side reset is no progress.
    H2Session& self = of(user);
    const auto it = self.streams_.find(id);
    if (it == self.streams_.end()) return 0;
    if (it->second->phase != Phase::reset) self.last_progress_ = Clock::now();
    self.streams_.erase(it);
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
  std::optional<ConnectionSlot> slot_;  // until close()
  asio::steady_timer tick_;
  nghttp2_session* session_ = nullptr;
  std::map<std::int32_t, std::unique_ptr<Stream>> streams_;  // open request streams
  std::array<char, 64 * 1024> in_{};
  std::string out_;  // the write in progress
  bool writing_ = false;
  bool closed_ = false;
  bool goaway_sent_ = false;
  Clock::time_point last_progress_;  // see on_tick
  Clock::time_point write_started_;  // of the write in progress
  std::optional<Clock::time_point> stop_seen_;  // when this session first saw ctx.stopping
};

}  // namespace

void start_h2_session(tcp::socket socket, std::string received, ServerContext& ctx, ConnectionSlot slot) {
  auto session = std::make_shared<H2Session>(std::move(socket), ctx, std::move(slot));
  asio::dispatch(session->executor(), [session, received = std::move(received)] { session->start(received); });
}

}  // namespace idemproof::ref
