#include "clients/h2_burst.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/tls_client.h"
#include "clients/kept_budget.h"
#include "clients/tcp_connect.h"

namespace idemproof::runtime {
namespace {

using std::chrono::nanoseconds;

// The most plaintext OpenSSL seals into one record (its default
// max_send_fragment): one SSL_write of more becomes several records.
constexpr std::size_t kTlsRecordPlaintext = 16384;

// One request's stream: what it sends and what came back.
struct Stream {
  std::size_t index = 0;
  const std::string* body = nullptr;
  std::size_t body_sent = 0;
  bool released = false;  // the final frame may go
  bool held = false;      // everything but the final frame went to the session
  bool final_sent = false;
  std::size_t final_end = 0;  // end offset of the final frame in the release buffer
  int status = 0;
  HttpHeaders headers;
  std::string data;
  std::uint64_t received = 0;
  bool cut = false;  // body went past max_body: reset by us
  bool closed = false;
  std::uint32_t error_code = 0;
  std::int64_t end_ns = 0;
};

struct Conn {
  int fd = -1;
  // https://: OpenSSL over two memory BIOs (owned by ssl), so that this file
  // alone reads and writes the socket and the release stays one send() of
  // bytes sealed beforehand.
  SSL* ssl = nullptr;
  BIO* tls_in = nullptr;   // bytes read from the socket, for OpenSSL
  BIO* tls_out = nullptr;  // bytes OpenSSL made, for the socket
  nghttp2_session* session = nullptr;
  std::string out;   // serialized frames not yet sealed (their plaintext)
  std::string wire;  // bytes for the socket not yet written (TLS records over https://)
  std::size_t max_body = 0;
  std::vector<Stream> streams;
  std::int32_t goaway_last = -1;  // -1: no GOAWAY
  std::string error;              // the connection broke: why

  ~Conn() {
    if (session != nullptr) nghttp2_session_del(session);
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
  }
  Stream* Of(std::int32_t id) { return static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, id)); }
};

std::int64_t Now() { return monotonic_ns(); }

ssize_t OnSend(nghttp2_session*, const std::uint8_t* data, std::size_t length, int, void* user) {
  static_cast<Conn*>(user)->out.append(reinterpret_cast<const char*>(data), length);
  return static_cast<ssize_t>(length);
}

int OnFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* c = static_cast<Conn*>(user);
  if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
    if (Stream* s = c->Of(frame->hd.stream_id)) {
      s->final_sent = true;
      s->final_end = c->out.size();
    }
  }
  return 0;
}

// Before the release: every body byte but the last, then DEFERRED; after
// it: the rest with END_STREAM.
ssize_t ReadBody(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                 nghttp2_data_source* source, void*) {
  auto* s = static_cast<Stream*>(source->ptr);
  const std::size_t size = s->body->size();
  const std::size_t limit = s->released ? size : (size == 0 ? 0 : size - 1);
  const std::size_t n = std::min(length, limit - s->body_sent);
  std::memcpy(buf, s->body->data() + s->body_sent, n);
  s->body_sent += n;
  if (s->released) {
    if (s->body_sent == size) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  if (n == 0) {
    s->held = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  return static_cast<ssize_t>(n);
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
             const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
  auto* c = static_cast<Conn*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  Stream* s = c->Of(frame->hd.stream_id);
  if (s == nullptr) return 0;
  const std::string n(reinterpret_cast<const char*>(name), namelen);
  const std::string v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":status") {
    // An interim 1xx answer's headers are dropped with it.
    s->status = std::atoi(v.c_str());
    s->headers.clear();
  } else if (s->status >= 200) {
    s->headers.emplace_back(n, v);
  }
  return 0;
}

int OnData(nghttp2_session* session, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len,
           void* user) {
  auto* c = static_cast<Conn*>(user);
  Stream* s = c->Of(id);
  if (s == nullptr || s->cut) return 0;
  s->received += len;
  const std::size_t room = c->max_body > s->data.size() ? c->max_body - s->data.size() : 0;
  s->data.append(reinterpret_cast<const char*>(data), std::min(room, len));
  if (len > room) {
    // An endless answer ends here, as HttpClient's transfer abort.
    s->cut = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }
  return 0;
}

int OnClose(nghttp2_session*, std::int32_t id, std::uint32_t error_code, void* user) {
  auto* c = static_cast<Conn*>(user);
  if (Stream* s = c->Of(id)) {
    s->closed = true;
    s->error_code = error_code;
    s->end_ns = Now();
  }
  return 0;
}

int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_GOAWAY) static_cast<Conn*>(user)->goaway_last = frame->goaway.last_stream_id;
  return 0;
}

// Appends what OpenSSL has made (records, alerts) to c.wire.
void TakeTlsOutput(Conn& c) {
  char buf[16384];
  for (int n; (n = BIO_read(c.tls_out, buf, sizeof buf)) > 0;) c.wire.append(buf, static_cast<std::size_t>(n));
}

// Moves c.out to c.wire: as it is (h2c), or sealed by ONE SSL_write into
// as many records as its size needs (one up to 16 KiB).
bool Seal(Conn& c) {
  if (c.ssl == nullptr) {
    c.wire += c.out;
    c.out.clear();
    return true;
  }
  if (!c.out.empty()) {
    // Into memory: never short, never waiting for the socket.
    if (SSL_write(c.ssl, c.out.data(), static_cast<int>(c.out.size())) != static_cast<int>(c.out.size())) {
      c.error = OpenSslErrors("TLS: sealing frames failed");
      return false;
    }
    c.out.clear();
  }
  TakeTlsOutput(c);
  return true;
}

// Writes c.wire whole by `deadline`; counts the send() calls.
bool WriteWire(Conn& c, std::int64_t deadline, int* writes = nullptr) {
  std::size_t done = 0;
  while (done < c.wire.size()) {
    const ssize_t n = ::send(c.fd, c.wire.data() + done, c.wire.size() - done, MSG_NOSIGNAL);
    if (writes != nullptr) ++*writes;
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      c.error = std::string("write failed: ") + std::strerror(errno);
      c.wire.erase(0, done);
      return false;
    }
    const std::int64_t left = deadline - Now();
    pollfd p{c.fd, POLLOUT, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left / 1000000, 1))) < 0) {
      c.error = "write timed out";
      c.wire.erase(0, done);
      return false;
    }
  }
  c.wire.clear();
  return true;
}

// Serializes what the session has to send, seals it over TLS, and writes it.
bool Flush(Conn& c, std::int64_t deadline) {
  if (nghttp2_session_send(c.session) != 0) {
    c.error = "HTTP/2 session failed to send";
    return false;
  }
  return Seal(c) && WriteWire(c, deadline);
}

// Hands `n` bytes the server sent to the session: as they came (h2c), or
// what OpenSSL opens of them (TLS).
bool Feed(Conn& c, const char* bytes, std::size_t n) {
  auto to_session = [&c](const char* data, std::size_t size) {
    if (nghttp2_session_mem_recv(c.session, reinterpret_cast<const std::uint8_t*>(data), size) >= 0) return true;
    c.error = "HTTP/2 protocol error from the server";
    return false;
  };
  if (c.ssl == nullptr) return to_session(bytes, n);
  BIO_write(c.tls_in, bytes, static_cast<int>(n));
  // Bounded: each round opens one record of what came; 16 KiB holds fewer than 1024.
  for (int rounds = 0; rounds < 1024; ++rounds) {
    char plain[16384];
    const int got = SSL_read(c.ssl, plain, sizeof plain);
    if (got > 0) {
      if (!to_session(plain, static_cast<std::size_t>(got))) return false;
      continue;
    }
    const int err = SSL_get_error(c.ssl, got);
    if (err == SSL_ERROR_WANT_READ) break;
    c.error = err == SSL_ERROR_ZERO_RETURN ? "the server closed the TLS connection" : OpenSslErrors("TLS: read failed");
    return false;
  }
  TakeTlsOutput(c);  // what reading made OpenSSL send (a key update's answer)
  return true;
}

// Reads what arrives within `wait_ns` into the session; false when the
// connection ended or broke.
bool Pump(Conn& c, std::int64_t wait_ns) {
  pollfd p{c.fd, POLLIN, 0};
  const int r = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(wait_ns / 1000000, 0)));
  if (r <= 0) return r == 0 || errno == EINTR;
  char buf[16384];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n == 0) {
    c.error = "the server closed the connection";
    return false;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return true;
    c.error = std::string("read failed: ") + std::strerror(errno);
    return false;
  }
  return Feed(c, buf, static_cast<std::size_t>(n));
}

// The TLS handshake on c.fd, by `deadline`, offering only h2 in ALPN. On
// failure c.error says why, and *refused whether the handshake itself
// failed (the peer's certificate, no TLS peer): nothing was sent.
bool Handshake(Conn& c, SSL_CTX* ctx, const TlsOptions& tls, const std::string& host, std::int64_t deadline,
               const std::atomic<bool>* cancel, bool* refused) {
  c.ssl = SSL_new(ctx);
  if (c.ssl == nullptr) {
    c.error = OpenSslErrors("TLS: no session");
    return false;
  }
  c.tls_in = BIO_new(BIO_s_mem());
  c.tls_out = BIO_new(BIO_s_mem());
  SSL_set_bio(c.ssl, c.tls_in, c.tls_out);
  if (Status named = PrepareTlsClient(c.ssl, tls, host); !named.ok()) {
    c.error = named.message();
    *refused = true;
    return false;
  }
  ERR_clear_error();
  // Bounded by the deadline (each wait at most 100 ms) and, beyond it, by rounds.
  bool done = false;
  for (int rounds = 0; !done && rounds < 100000; ++rounds) {
    const int step = SSL_connect(c.ssl);
    TakeTlsOutput(c);
    const bool wrote = WriteWire(c, deadline);  // a failed check's alert goes out too
    if (step == 1) {
      if (!wrote) return false;
      done = true;
      break;
    }
    if (SSL_get_error(c.ssl, step) != SSL_ERROR_WANT_READ) {
      c.error = TlsHandshakeError(c.ssl);
      *refused = true;
      return false;
    }
    if (!wrote) return false;
    if (cancel != nullptr && cancel->load()) {
      c.error = "cancelled";
      return false;
    }
    const std::int64_t left = deadline - Now();
    pollfd p{c.fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(std::clamp<std::int64_t>(left / 1000000, 1, 100))) < 0) break;
    if (p.revents == 0) continue;
    char buf[16384];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      c.error = std::string("TLS: handshake failed: ") +
                (n == 0 ? "the server closed the connection" : std::strerror(errno));
      *refused = true;
      return false;
    }
    if (n > 0) BIO_write(c.tls_in, buf, static_cast<int>(n));
  }
  if (!done) {
    c.error = "TLS: handshake timed out";
    return false;
  }
  const unsigned char* proto = nullptr;
  unsigned int proto_len = 0;
  SSL_get0_alpn_selected(c.ssl, &proto, &proto_len);
  if (proto_len != 2 || std::memcmp(proto, "h2", 2) != 0) {
    c.error = "the server did not select h2 in ALPN (it selected " +
              (proto_len == 0 ? std::string("no protocol")
                              : "'" + std::string(reinterpret_cast<const char*>(proto), proto_len) + "'") +
              "): a single-packet burst needs HTTP/2";
    return false;
  }
  return true;
}


nghttp2_nv Nv(const std::string& name, const std::string& value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

void AllNotSent(H2BurstResult& r, const std::string& why, bool tls_refused = false) {
  for (HttpExchange& e : r.exchanges) {
    if (e.outcome == HttpOutcome::kAnswered || !e.error.empty()) continue;
    e.outcome = HttpOutcome::kNotSent;
    e.error = why;
    e.tls_refused = tls_refused;
    e.start_ns = e.end_ns = Now();
  }
}

}  // namespace

H2BurstResult FireH2Burst(const std::vector<OutgoingRequest>& requests, const H2BurstOptions& options,
                          const std::atomic<bool>* cancel) {
  H2BurstResult r;
  r.streams.resize(requests.size());
  for (const OutgoingRequest& q : requests) {
    HttpExchange e;
    e.request = q;
    r.exchanges.push_back(std::move(e));
  }
  if (requests.empty()) return r;
  const OutgoingRequest& lead = requests.front();
  for (const OutgoingRequest& q : requests) {
    if (q.origin != lead.origin) {
      AllNotSent(r, "a single-packet burst goes on one connection; requests to " + lead.origin + " and " +
                        q.origin);
      return r;
    }
  }
  OriginParts origin;
  if (!SplitOrigin(lead.origin, &origin)) {
    AllNotSent(r, "single-packet HTTP/2 bursts need an http:// or https:// origin: " + lead.url());
    return r;
  }
  // The context first: a CA file that cannot be loaded costs no connection.
  TlsClientContext tls_context;
  if (origin.tls) {
    static constexpr char kOnlyH2[] = {2, 'h', '2'};
    auto made = MakeTlsClientContext(lead.tls, std::string_view(kOnlyH2, sizeof kOnlyH2));
    if (!made.ok()) {
      AllNotSent(r, made.status().message(), /*tls_refused=*/made.status().code() == StatusCode::kInvalidConfig);
      return r;
    }
    tls_context = std::move(made).value();
  }
  Conn c;
  std::string error;
  const auto connect_timeout = std::min<nanoseconds>(options.connect_timeout, lead.timeout);
  c.fd = ConnectTcp(origin.host, origin.port, connect_timeout, &error);
  if (c.fd < 0) {
    AllNotSent(r, error);
    return r;
  }
  if (origin.tls) {
    bool refused = false;
    if (!Handshake(c, tls_context.get(), lead.tls, origin.host, Now() + connect_timeout.count(), cancel, &refused)) {
      AllNotSent(r, c.error, refused);
      return r;
    }
  }
  // The run's budget shared out among the answers (clients/kept_budget.h).
  const std::size_t cap = lead.kept != nullptr ? lead.kept->Reserve(requests.size(), lead.max_body) : lead.max_body;
  c.max_body = cap;
  struct Release {
    const OutgoingRequest& lead;
    std::size_t cap;
    H2BurstResult& r;
    ~Release() {
      if (lead.kept == nullptr) return;
      for (const HttpExchange& e : r.exchanges) lead.kept->Release(cap, e.response_body.size());
    }
  } release_budget{lead, cap, r};

  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_send_callback(cbs, OnSend);
  nghttp2_session_callbacks_set_on_frame_send_callback(cbs, OnFrameSend);
  nghttp2_session_callbacks_set_on_header_callback(cbs, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, OnClose);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrameRecv);
  const int made = nghttp2_session_client_new(&c.session, cbs, &c);
  nghttp2_session_callbacks_del(cbs);
  if (made != 0) {
    AllNotSent(r, "cannot create an HTTP/2 session");
    return r;
  }
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
  nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, settings, 1);

  c.streams.resize(requests.size());
  // tls.server_name stands for the URL's host in :authority too, as libcurl sends it.
  std::string authority = origin.authority;
  if (origin.tls && !lead.tls.server_name.empty())
    authority = lead.tls.server_name + (origin.port_written ? ":" + origin.port : "");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const HttpRequest& m = requests[i].message;
    Stream& s = c.streams[i];
    s.index = i;
    s.body = &m.body;
    const HeaderList fields =
        http2_request_fields(m.method, origin.tls ? "https" : "http", authority, m.target, m.headers, m.body.size());
    std::vector<nghttp2_nv> nva;
    for (const auto& [n, v] : fields) nva.push_back(Nv(n, v));
    nghttp2_data_provider provider{};
    provider.source.ptr = &s;
    provider.read_callback = ReadBody;
    const std::int32_t id = nghttp2_submit_request(c.session, nullptr, nva.data(), nva.size(), &provider, &s);
    if (id < 0) {
      r.exchanges[i].outcome = HttpOutcome::kNotSent;
      r.exchanges[i].error = std::string("HTTP/2 request not submitted: ") + nghttp2_strerror(id);
      continue;
    }
    r.streams[i].stream_id = id;
  }

  // Everything but the final frames; then `settle` with the connection
  // read, so the server has parsed every stream's start.
  const std::int64_t write_deadline = Now() + connect_timeout.count();
  bool ok = Flush(c, write_deadline);
  for (int rounds = 0; ok && rounds < 1000; ++rounds) {
    const bool all_held = std::all_of(c.streams.begin(), c.streams.end(), [&](const Stream& s) {
      return s.held || r.streams[s.index].stream_id == 0;
    });
    if (all_held || Now() > write_deadline) break;
    ok = Pump(c, 10'000'000) && Flush(c, write_deadline);  // flow control: the server's WINDOW_UPDATEs
  }
  const std::int64_t settle_end = Now() + options.settle.count();
  while (ok && Now() < settle_end) ok = Pump(c, std::max<std::int64_t>(settle_end - Now(), 0)) && Flush(c, settle_end + 1'000'000'000);
  if (!ok) {
    AllNotSent(r, "before the release: " + c.error);
    return r;
  }
  if (cancel != nullptr && cancel->load()) {
    AllNotSent(r, "cancelled");
    return r;
  }

  // The release: every stream's final frame serialized into one buffer,
  // sealed by one SSL_write over TLS (one record up to 16 KiB), written by
  // one send() (TCP_NODELAY: it leaves at once, in as few segments as the
  // MSS allows). The sealing comes before the clock starts.
  for (Stream& s : c.streams) {
    if (r.streams[s.index].stream_id == 0) continue;
    s.released = true;
    nghttp2_session_resume_data(c.session, r.streams[s.index].stream_id);
  }
  if (nghttp2_session_send(c.session) != 0) {
    AllNotSent(r, "HTTP/2 session failed to send the final frames");
    return r;
  }
  const std::size_t wire_start = c.wire.size();  // 0: the settle wrote everything before
  if (!Seal(c)) {
    AllNotSent(r, "sealing the final frames: " + c.error);
    return r;
  }
  // Where each record ends on the wire: a stream's final frame counts only
  // once the whole record that holds it arrived (its tag comes last).
  std::vector<std::size_t> record_ends;
  if (c.ssl != nullptr) {
    for (std::size_t at = wire_start; at + 5 <= c.wire.size();) {
      at += 5 + ((static_cast<std::size_t>(static_cast<unsigned char>(c.wire[at + 3])) << 8) |
                 static_cast<unsigned char>(c.wire[at + 4]));
      record_ends.push_back(std::min(at, c.wire.size()));
    }
  }
  r.tls_records = static_cast<int>(record_ends.size());
  auto wire_end_of = [&](std::size_t frame_end) {
    if (c.ssl == nullptr) return wire_start + frame_end;
    if (record_ends.empty()) return c.wire.size();
    return record_ends[std::min((frame_end - 1) / kTlsRecordPlaintext, record_ends.size() - 1)];
  };
  int mss = 0;
  socklen_t mss_len = sizeof mss;
  ::getsockopt(c.fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &mss_len);
  r.mss = mss;
  r.release_bytes = c.wire.size();
  r.segments = mss > 0 ? static_cast<int>((r.release_bytes + static_cast<std::size_t>(mss) - 1) / static_cast<std::size_t>(mss)) : 1;
  const std::int64_t released = Now();
  const std::size_t release_bytes = c.wire.size();
  ok = WriteWire(c, released + connect_timeout.count(), &r.release_writes);
  const std::int64_t release_done = Now();
  r.release_ns = release_done - released;
  const std::size_t written = ok ? release_bytes : release_bytes - c.wire.size();
  for (Stream& s : c.streams) {
    H2StreamPlacement& p = r.streams[s.index];
    if (p.stream_id != 0 && s.final_sent && wire_end_of(s.final_end) <= written)
      p.segment = mss > 0 ? static_cast<int>((wire_end_of(s.final_end) - 1) / static_cast<std::size_t>(mss)) : 0;
    r.exchanges[s.index].start_ns = released;
    if (p.segment >= 0) r.exchanges[s.index].send_attempts = 1;
  }

  // The answers, by the longest request deadline from the release.
  nanoseconds longest{0};
  for (const OutgoingRequest& q : requests) longest = std::max<nanoseconds>(longest, q.timeout);
  const std::int64_t deadline = released + longest.count();
  auto open = [&] {
    return std::any_of(c.streams.begin(), c.streams.end(),
                       [&](const Stream& s) { return r.streams[s.index].segment >= 0 && !s.closed; });
  };
  for (int rounds = 0; ok && open() && rounds < 1'000'000; ++rounds) {
    if (Now() >= deadline || (cancel != nullptr && cancel->load())) break;
    ok = Pump(c, std::min<std::int64_t>(deadline - Now(), 100'000'000)) && Flush(c, deadline);
  }
  const std::string why = !c.error.empty()                                   ? c.error
                          : cancel != nullptr && cancel->load()              ? "cancelled"
                                                                              : "no answer by the deadline";
  for (Stream& s : c.streams) {
    HttpExchange& e = r.exchanges[s.index];
    const H2StreamPlacement& p = r.streams[s.index];
    if (p.stream_id == 0) continue;  // not submitted: already kNotSent
    e.end_ns = s.closed ? s.end_ns : Now();
    const bool refused = s.error_code == NGHTTP2_REFUSED_STREAM ||
                         (c.goaway_last >= 0 && p.stream_id > c.goaway_last && s.status == 0);
    if (p.segment < 0 || refused) {
      e.outcome = HttpOutcome::kNotSent;
      e.error = p.segment < 0 ? "its final frame never went out: " + why : "the server refused the stream unprocessed";
    } else if (s.closed && s.status >= 200 && (s.error_code == NGHTTP2_NO_ERROR || s.cut)) {
      e.outcome = HttpOutcome::kAnswered;
      e.status = s.status;
      e.response_headers = std::move(s.headers);
      e.response_body = std::move(s.data);
      e.body_truncated = s.cut;
      e.body_size = s.received;
      e.body_cut_by_kept = s.cut && cap < lead.max_body;
      if (auto len = e.response_header("content-length"); len && s.cut) {
        e.body_size = std::strtoull(len->c_str(), nullptr, 10);
        e.body_size_exact = true;
      } else {
        e.body_size_exact = !s.cut;
      }
    } else {
      e.outcome = HttpOutcome::kNoAnswer;
      e.error = s.closed ? "stream reset by the server (HTTP/2 error " + std::to_string(s.error_code) + ")" : why;
    }
  }
  return r;
}

}  // namespace idemproof::runtime
