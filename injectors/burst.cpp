#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange

#include "injectors/burst.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <functional>
#include <condition_variable>
#include <memory>
#include <thread>
#include <bit>

#include <liburing.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include "base/beast_capped_read.h"
#include "base/header_list.h"
#include "base/tls_client.h"
#include "base/thread_annotations.h"

namespace idemproof::injectors {

namespace {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

struct Connection {
  explicit Connection(asio::io_context& io) : socket(io) {}
  tcp::socket socket;
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  bool connected = false;
  bool prefix_written = false;
  bool done = false;  // the current phase's operation completed
};

// Runs one phase: `start(i, done)` begins an async operation on connection i
// that calls done(error) when it completes. At the deadline, every connection
// still busy is closed so its operation completes with an error.
void run_phase(asio::io_context& io, std::vector<std::unique_ptr<Connection>>& conns,
               const std::vector<std::size_t>& which, std::chrono::nanoseconds timeout,
               const std::function<void(std::size_t, std::function<void(error_code)>)>& start,
               const std::function<void(std::size_t, error_code)>& finish) {
  if (which.empty()) return;
  std::size_t pending = which.size();
  asio::steady_timer deadline(io);
  deadline.expires_after(timeout);
  deadline.async_wait([&](error_code ec) {
    if (ec) return;  // cancelled: every operation completed in time
    for (std::size_t i : which) {
      if (!conns[i]->done) {
        error_code ignored;
        conns[i]->socket.close(ignored);
      }
    }
  });
  for (std::size_t i : which) {
    conns[i]->done = false;
    start(i, [&, i](error_code ec) {
      conns[i]->done = true;
      finish(i, ec);
      if (--pending == 0) deadline.cancel();
    });
  }
  io.run();
  io.restart();
}

// The target's arrival stamp in the declared header (case-insensitive name).
std::optional<std::int64_t> arrival_of(const HeaderList& headers, const std::string& name) {
  if (name.empty()) return std::nullopt;
  for (const auto& [k, v] : headers) {
    if (equals_ignoring_case(k, name)) {
      std::int64_t n = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc() && p == v.data() + v.size()) return n;
    }
  }
  return std::nullopt;
}

using ResponseParser = http::response_parser<http::string_body>;

void take_answer(ResponseParser& parser, BurstAnswer& a, error_code ec) {
  if (ec == http::error::body_limit && parser.is_header_done()) {
    // Answered, but past max_body: keep the status, headers and what was read.
    auto& res = parser.get();
    a.outcome = BurstOutcome::kAnswered;
    a.answered_ns = steady_now_ns();
    a.status = static_cast<int>(res.result_int());
    for (const auto& f : res) a.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    a.body = std::move(res.body());
    a.body_truncated = true;
    if (auto length = parser.content_length()) {
      a.body_size = *length;
      a.body_size_exact = true;
    } else {
      a.body_size = a.body.size() + 1;  // more than what was kept
    }
    return;
  }
  if (ec) {
    a.outcome = BurstOutcome::kNoAnswer;
    a.error = "read: " + ec.message();
    return;
  }
  auto res = parser.release();
  a.outcome = BurstOutcome::kAnswered;
  a.answered_ns = steady_now_ns();
  a.status = static_cast<int>(res.result_int());
  for (const auto& f : res) a.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  a.body = std::move(res.body());
}

void start_read(Connection& c, std::size_t max_body, const std::function<void(error_code)>& done) {
  c.parser.body_limit(max_body);
  async_read_capped(c.socket, c.buffer, c.parser, [done](error_code ec, std::size_t) { done(ec); });
}

std::vector<std::size_t> indices_where(const std::vector<std::unique_ptr<Connection>>& conns,
                                       bool Connection::*flag) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < conns.size(); ++i) {
    if ((*conns[i]).*flag) out.push_back(i);
  }
  return out;
}

// The final bytes of one request: written at the release.
struct FinalWrite {
  int fd;
  const char* data;
  std::size_t size;
};

struct Released {
  BurstRelease how = BurstRelease::kSendLoop;
  std::vector<int> written;            // bytes written per request, or -errno
  std::vector<std::int64_t> sent_ns;   // when each write was known done
  std::optional<std::int64_t> spread_ns;
};

// One send() per request in a tight loop; nothing else runs between them. The
// spread is last - first of the clock read after each send.
Released release_send_loop(const std::vector<FinalWrite>& finals) {
  Released out;
  out.how = BurstRelease::kSendLoop;
  for (const auto& f : finals) {
    const ssize_t sent = ::send(f.fd, f.data, f.size, MSG_NOSIGNAL | MSG_DONTWAIT);
    out.sent_ns.push_back(steady_now_ns());
    out.written.push_back(sent < 0 ? -errno : static_cast<int>(sent));
  }
  if (out.sent_ns.size() >= 2) out.spread_ns = out.sent_ns.back() - out.sent_ns.front();
  return out;
}

// Every send queued first, then one io_uring_submit() runs them back to back
// inside the kernel (a writable socket's send completes inline), so this
// thread cannot be preempted between two of them. The individual send times
// are not visible; the spread reported is the duration of the submit, an upper
// bound. Falls back to the send loop where io_uring is unavailable (an old
// kernel, a seccomp filter, io_uring_disabled).
Released release_io_uring(const std::vector<FinalWrite>& finals, std::chrono::nanoseconds timeout) {
  // One ring per thread, kept: setting one up costs more than the release.
  struct Ring {
    io_uring ring{};
    unsigned entries = 0;
    ~Ring() {
      if (entries) io_uring_queue_exit(&ring);
    }
  };
  thread_local Ring kept;
  // Nothing to release (every connect or prefix write failed): no ring is
  // needed, and an uninitialised one must never reach io_uring_submit().
  if (finals.empty()) {
    Released nothing;
    nothing.how = BurstRelease::kIoUring;
    return nothing;
  }
  if (kept.entries < finals.size()) {
    if (kept.entries) io_uring_queue_exit(&kept.ring);
    kept.entries = 0;
    const unsigned entries = std::max(64u, static_cast<unsigned>(std::bit_ceil(finals.size())));
    if (io_uring_queue_init(entries, &kept.ring, 0) != 0) return release_send_loop(finals);
    kept.entries = entries;
  }
  io_uring& ring = kept.ring;
  Released out;
  out.how = BurstRelease::kIoUring;
  out.written.assign(finals.size(), -EIO);
  for (std::size_t k = 0; k < finals.size(); ++k) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_send(sqe, finals[k].fd, finals[k].data, finals[k].size, MSG_NOSIGNAL | MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, k);
  }
  const std::int64_t before = steady_now_ns();
  const int submitted = io_uring_submit(&ring);
  const std::int64_t after = steady_now_ns();
  if (submitted != static_cast<int>(finals.size())) {
    // Nothing or only part went to the kernel: what was not submitted is not
    // sent; the loop cannot help after a partial submit, so report it as is.
    if (submitted <= 0) return release_send_loop(finals);
  }
  for (int k = 0; k < submitted; ++k) {
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec deadline{};
    deadline.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    deadline.tv_nsec = (timeout - std::chrono::seconds(deadline.tv_sec)).count();
    if (io_uring_wait_cqe_timeout(&ring, &cqe, &deadline) != 0) break;  // unknown: stays -EIO
    out.written[io_uring_cqe_get_data64(cqe)] = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
  }
  out.sent_ns.assign(finals.size(), after);
  if (finals.size() >= 2) out.spread_ns = after - before;
  return out;
}

void fire_synchronized(const std::vector<std::string>& requests, const BurstOptions& o,
                       const std::vector<tcp::endpoint>& targets, BurstResult& result) {
  const std::size_t n = requests.size();
  asio::io_context io(1);
  std::vector<std::unique_ptr<Connection>> conns;
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < n; ++i) {
    conns.push_back(std::make_unique<Connection>(io));
    all.push_back(i);
  }
  run_phase(io, conns, all, o.connect_timeout,
      [&](std::size_t i, auto done) { conns[i]->socket.async_connect(targets[i], done); },
      [&](std::size_t i, error_code ec) {
        if (ec) {
          result.answers[i].error = "connect: " + ec.message();
          return;
        }
        conns[i]->connected = true;
        error_code ignored;
        conns[i]->socket.set_option(tcp::no_delay(true), ignored);
      });
  run_phase(io, conns, indices_where(conns, &Connection::connected), o.write_timeout,
      [&](std::size_t i, auto done) {
        const std::string& r = requests[i];
        asio::async_write(conns[i]->socket, asio::buffer(r.data(), r.size() - o.final_bytes),
                          [done](error_code ec, std::size_t) { done(ec); });
      },
      [&](std::size_t i, error_code ec) {
        if (ec) result.answers[i].error = "write: " + ec.message();
        conns[i]->prefix_written = !ec;
      });
  std::this_thread::sleep_for(o.settle);
  // Start the reads before the release (their first recv() finds nothing and
  // parks on epoll), so nothing but send() runs between the first and the last
  // final write, and the harness takes no CPU from the target afterwards until
  // answers come in.
  const auto ready = indices_where(conns, &Connection::prefix_written);
  std::size_t pending = ready.size();
  asio::steady_timer deadline(io);
  for (std::size_t i : ready) {
    Connection& c = *conns[i];
    c.done = false;
    start_read(c, o.max_body, [&, i](error_code ec) {
      conns[i]->done = true;
      if (conns[i]->prefix_written) take_answer(conns[i]->parser, result.answers[i], ec);
      if (--pending == 0) deadline.cancel();
    });
  }
  std::vector<FinalWrite> finals;
  finals.reserve(ready.size());
  for (std::size_t i : ready) {
    const std::string& r = requests[i];
    finals.push_back({conns[i]->socket.native_handle(), r.data() + r.size() - o.final_bytes, o.final_bytes});
  }
  const Released released = o.release == BurstRelease::kIoUring ? release_io_uring(finals, o.write_timeout) : release_send_loop(finals);
  result.release = released.how;
  result.harness_spread_ns = released.spread_ns;
  for (std::size_t k = 0; k < ready.size(); ++k) {
    const std::size_t i = ready[k];
    const int written = released.written[k];
    result.answers[i].sent_ns = released.sent_ns[k];
    if (written != static_cast<int>(o.final_bytes)) {
      // The request never went out complete: the target cannot have run it.
      result.answers[i].sent_ns = 0;
      result.answers[i].error = written < 0 ? "write final bytes: " + std::string(std::strerror(-written))
                                            : "write final bytes: partial";
      conns[i]->prefix_written = false;
    }
  }
  for (std::size_t i : ready) {
    if (!conns[i]->prefix_written) {
      error_code ignored;
      conns[i]->socket.close(ignored);  // completes its read with an error, ignored above
    }
  }
  if (pending > 0) {
    deadline.expires_after(o.read_timeout);
    deadline.async_wait([&](error_code ec) {
      if (ec) return;
      for (std::size_t i : ready) {
        if (!conns[i]->done) {
          error_code ignored;
          conns[i]->socket.close(ignored);
        }
      }
    });
    io.run();
    io.restart();
  }
  for (auto& c : conns) {
    error_code ignored;
    c->socket.close(ignored);
  }
}

// --- Last-byte sync over TLS -------------------------------------------------
// One OpenSSL connection per request on a non-blocking socket, driven by
// poll() with the phase's deadline (the same phases as above: connect and
// handshake, prefix, settle, release, read).

using Deadline = std::chrono::steady_clock::time_point;

// Waits until `fd` is ready for `events` or the deadline passes.
bool wait_fd(int fd, short events, Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(1, left.count()))) > 0;
}

struct TlsConnection {
  int fd = -1;
  SSL* ssl = nullptr;
  BIO* socket_bio = nullptr;  // the SSL's rbio, and its wbio but at the sealing
  std::string final_record;   // the final bytes sealed as TLS record(s)
  ResponseParser parser;
  std::string in;             // plaintext read, not yet parsed
  bool ready = false;         // prefix written, final record sealed
  bool done = false;
  ~TlsConnection() {
    if (ssl != nullptr) SSL_free(ssl);  // frees the BIOs it holds
    if (fd >= 0) ::close(fd);
  }
};

// Drives a non-blocking SSL call until it succeeds, fails, or the deadline.
// Returns > 0 on success.
template <typename Call>
int drive(TlsConnection& c, Deadline deadline, Call call) {
  while (true) {
    const int r = call();
    if (r > 0) return r;
    const int err = SSL_get_error(c.ssl, r);
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0 || !wait_fd(c.fd, events, deadline)) return events == 0 ? -1 : 0;
  }
}

// Connects, shakes hands and writes the prefix; seals the final bytes.
// Leaves c.ready false and the answer's error set on any failure.
void tls_prepare(TlsConnection& c, SSL_CTX* ctx, const tcp::endpoint& target, const std::string& request,
                 const BurstOptions& o, const std::string& host, BurstAnswer& a) {
  const Deadline connect_by = std::chrono::steady_clock::now() + o.connect_timeout;
  c.fd = ::socket(target.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) {
    a.error = std::string("connect: ") + std::strerror(errno);
    return;
  }
  if (::connect(c.fd, target.data(), static_cast<socklen_t>(target.size())) != 0 && errno != EINPROGRESS) {
    a.error = std::string("connect: ") + std::strerror(errno);
    return;
  }
  int soerr = 0;
  socklen_t len = sizeof soerr;
  if (!wait_fd(c.fd, POLLOUT, connect_by) || ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 ||
      soerr != 0) {
    a.error = std::string("connect: ") + (soerr != 0 ? std::strerror(soerr) : "timed out");
    return;
  }
  const int one = 1;
  ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c.ssl = SSL_new(ctx);
  c.socket_bio = BIO_new_socket(c.fd, BIO_NOCLOSE);
  SSL_set0_rbio(c.ssl, c.socket_bio);
  BIO_up_ref(c.socket_bio);
  SSL_set0_wbio(c.ssl, c.socket_bio);
  if (Status named = PrepareTlsClient(c.ssl, *o.tls, host); !named.ok()) {
    a.error = named.message();
    return;
  }
  ERR_clear_error();
  if (drive(c, connect_by, [&] { return SSL_connect(c.ssl); }) <= 0) {
    a.error = TlsHandshakeError(c.ssl);
    return;
  }
  const Deadline write_by = std::chrono::steady_clock::now() + o.write_timeout;
  const std::size_t prefix = request.size() - o.final_bytes;
  for (std::size_t off = 0; off < prefix;) {
    const int n = drive(c, write_by, [&] {
      return SSL_write(c.ssl, request.data() + off, static_cast<int>(std::min<std::size_t>(prefix - off, 1 << 14)));
    });
    if (n <= 0) {
      a.error = OpenSslErrors("write: TLS");
      return;
    }
    off += static_cast<std::size_t>(n);
  }
  // Seal the final bytes into a record now, into memory: the release writes
  // its bytes as they are, with no TLS work between two connections' writes.
  BIO* sealed = BIO_new(BIO_s_mem());
  BIO_up_ref(c.socket_bio);               // kept for the reads' alerts and close
  SSL_set0_wbio(c.ssl, sealed);           // drops the wbio's reference to the socket
  const int n = SSL_write(c.ssl, request.data() + prefix, static_cast<int>(o.final_bytes));
  char* bytes = nullptr;
  const long size = BIO_get_mem_data(sealed, &bytes);
  if (n == static_cast<int>(o.final_bytes) && size > 0) c.final_record.assign(bytes, static_cast<std::size_t>(size));
  SSL_set0_wbio(c.ssl, c.socket_bio);     // frees `sealed`
  if (c.final_record.empty()) {
    a.error = OpenSslErrors("write: TLS sealing the final bytes");
    return;
  }
  c.ready = true;
}

void fire_synchronized_tls(const std::vector<std::string>& requests, const BurstOptions& o,
                           const std::vector<tcp::endpoint>& targets, BurstResult& result) {
  const std::size_t n = requests.size();
  static constexpr char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  auto made = MakeTlsClientContext(*o.tls, std::string_view(kHttp11, sizeof kHttp11));
  if (!made.ok()) {
    for (auto& a : result.answers) a.error = made.status().message();
    return;
  }
  SSL_CTX* ctx = made->get();
  std::vector<std::unique_ptr<TlsConnection>> conns;
  for (std::size_t i = 0; i < n; ++i) {
    conns.push_back(std::make_unique<TlsConnection>());
    const Endpoint& e = o.targets.empty() ? o.target : o.targets[i];
    tls_prepare(*conns[i], ctx, targets[i], requests[i], o, e.host, result.answers[i]);
  }
  std::this_thread::sleep_for(o.settle);
  std::vector<std::size_t> ready;
  std::vector<FinalWrite> finals;
  for (std::size_t i = 0; i < n; ++i) {
    if (!conns[i]->ready) continue;
    ready.push_back(i);
    finals.push_back({conns[i]->fd, conns[i]->final_record.data(), conns[i]->final_record.size()});
  }
  const Released released = o.release == BurstRelease::kIoUring ? release_io_uring(finals, o.write_timeout)
                                                                 : release_send_loop(finals);
  result.release = released.how;
  result.harness_spread_ns = released.spread_ns;
  std::vector<std::size_t> reading;
  for (std::size_t k = 0; k < ready.size(); ++k) {
    const std::size_t i = ready[k];
    TlsConnection& c = *conns[i];
    if (released.written[k] != static_cast<int>(c.final_record.size())) {
      // A partial record is no request: the target cannot have run it.
      result.answers[i].error = released.written[k] < 0
                                    ? "write final bytes: " + std::string(std::strerror(-released.written[k]))
                                    : "write final bytes: partial";
      continue;
    }
    result.answers[i].sent_ns = released.sent_ns[k];
    c.parser.body_limit(o.max_body);
    c.parser.eager(true);
    reading.push_back(i);
  }
  // Reads: every answer in one poll loop, under one deadline.
  const Deadline read_by = std::chrono::steady_clock::now() + o.read_timeout;
  std::size_t open = reading.size();
  while (open > 0) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> which;
    for (std::size_t i : reading) {
      if (conns[i]->done) continue;
      // Plaintext OpenSSL already holds needs no wait.
      fds.push_back({conns[i]->fd, static_cast<short>(SSL_pending(conns[i]->ssl) > 0 ? 0 : POLLIN), 0});
      which.push_back(i);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(read_by - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    const bool any_pending = std::any_of(fds.begin(), fds.end(), [](const pollfd& p) { return p.events == 0; });
    if (::poll(fds.data(), fds.size(), any_pending ? 0 : static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (std::size_t k = 0; k < which.size(); ++k) {
      if (fds[k].events != 0 && fds[k].revents == 0) continue;
      TlsConnection& c = *conns[which[k]];
      BurstAnswer& a = result.answers[which[k]];
      char chunk[16384];
      error_code ec;
      bool finished = false;
      while (!finished) {
        const int r = SSL_read(c.ssl, chunk, sizeof chunk);
        if (r <= 0) {
          const int err = SSL_get_error(c.ssl, r);
          if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
          // The peer closed (or broke) the connection: the answer ends here.
          c.parser.put_eof(ec);
          if (!ec && !c.parser.is_done()) ec = http::error::partial_message;
          if (ec && err != SSL_ERROR_ZERO_RETURN && err != SSL_ERROR_SYSCALL) ec = asio::error::connection_reset;
          finished = true;
          break;
        }
        c.in.append(chunk, static_cast<std::size_t>(r));
        while (!c.in.empty() && !c.parser.is_done()) {
          const std::size_t used = c.parser.put(asio::buffer(c.in), ec);
          c.in.erase(0, used);
          if (ec == http::error::need_more) {
            ec = {};
            break;
          }
          if (ec) break;
        }
        if (ec || c.parser.is_done()) finished = true;
      }
      if (finished) {
        c.done = true;
        --open;
        take_answer(c.parser, a, ec);
      }
    }
  }
  for (std::size_t i : reading) {
    if (!conns[i]->done) result.answers[i].error = "read: timed out";
  }
  conns.clear();  // every SSL before the context `made` holds
}

// The naive threads' start line: each arrives, then all go at once. Not
// std::latch: libstdc++ 12's latch (atomic wait on a proxy word) was seen to
// miss its wake-up and hang every waiter.
class StartLine {
 public:
  explicit StartLine(std::size_t runners) : waiting_(runners) {}
  void arrive_and_wait() {
    base::MutexLock lock(mu_);
    if (--waiting_ == 0) return go_.notify_all();
    // The predicate runs with mu_ held (the analysis cannot see through the wait).
    go_.wait(lock, [this]() NO_THREAD_SAFETY_ANALYSIS { return waiting_ == 0; });
  }

 private:
  base::Mutex mu_;
  std::condition_variable_any go_;
  std::size_t waiting_ GUARDED_BY(mu_);
};

// One naive client: connect, write everything, read; each with a deadline.
void fire_one_naive(const std::string& request, const BurstOptions& o, const tcp::endpoint& target,
                    StartLine& go, BurstAnswer& answer) {
  asio::io_context io(1);
  std::vector<std::unique_ptr<Connection>> conns;
  conns.push_back(std::make_unique<Connection>(io));
  Connection& c = *conns.front();
  const std::vector<std::size_t> only{0};
  go.arrive_and_wait();
  run_phase(io, conns, only, o.connect_timeout,
      [&](std::size_t, auto done) { c.socket.async_connect(target, done); },
      [&](std::size_t, error_code ec) {
        if (ec) answer.error = "connect: " + ec.message();
        c.connected = !ec;
      });
  if (!c.connected) return;
  error_code ignored;
  c.socket.set_option(tcp::no_delay(true), ignored);
  run_phase(io, conns, only, o.write_timeout,
      [&](std::size_t, auto done) {
        asio::async_write(c.socket, asio::buffer(request), [done](error_code ec, std::size_t) { done(ec); });
      },
      [&](std::size_t, error_code ec) {
        if (ec) answer.error = "write: " + ec.message();
        c.prefix_written = !ec;
        if (!ec) answer.sent_ns = steady_now_ns();
      });
  if (!c.prefix_written) return;
  run_phase(io, conns, only, o.read_timeout,
      [&](std::size_t, auto done) { start_read(c, o.max_body, done); },
      [&](std::size_t, error_code ec) { take_answer(c.parser, answer, ec); });
  c.socket.close(ignored);
}

}  // namespace

const char* to_string(BurstRelease release) {
  return release == BurstRelease::kIoUring ? "io_uring" : "send-loop";
}

const char* to_string(BurstMode mode) {
  return mode == BurstMode::kLastByte ? "last-byte-sync" : "naive-threads";
}

Result<BurstMode> parse_burst_mode(const std::string& text) {
  if (text == "sync" || text == "last-byte" || text == "last-byte-sync") return BurstMode::kLastByte;
  if (text == "threads" || text == "naive" || text == "naive-threads") return BurstMode::kThreads;
  return Status(StatusCode::kInvalidConfig, "burst mode '" + text + "': expected sync or threads");
}

const char* to_string(BurstOutcome outcome) {
  switch (outcome) {
    case BurstOutcome::kAnswered: return "answered";
    case BurstOutcome::kNotSent: return "not_sent";
    case BurstOutcome::kNoAnswer: return "no_answer";
  }
  return "unknown";
}

std::size_t BurstResult::count(BurstOutcome outcome) const {
  return static_cast<std::size_t>(std::count_if(answers.begin(), answers.end(),
                                                [outcome](const BurstAnswer& a) { return a.outcome == outcome; }));
}

Result<BurstResult> fire_burst(const std::vector<std::string>& requests, const BurstOptions& o) {
  if (requests.empty()) return Status(StatusCode::kInvalidConfig, "a burst needs at least one request");
  if (o.final_bytes == 0) return Status(StatusCode::kInvalidConfig, "final_bytes must be >= 1");
  for (const auto& r : requests) {
    if (r.size() <= o.final_bytes) {
      return Status(StatusCode::kInvalidConfig, "a request is shorter than final_bytes + 1");
    }
  }
  if (!o.targets.empty() && o.targets.size() != requests.size())
    return Status(StatusCode::kInvalidConfig, "a burst's targets must be one per request");
  std::vector<tcp::endpoint> targets;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const Endpoint& e = o.targets.empty() ? o.target : o.targets[i];
    error_code ec;
    const auto address = asio::ip::make_address(e.host, ec);
    if (ec) return Status(StatusCode::kUnavailable, "burst target '" + e.host + "': " + ec.message());
    targets.emplace_back(address, e.port);
  }

  BurstResult result;
  result.mode = o.mode;
  result.answers.resize(requests.size());
  if (o.tls && o.mode != BurstMode::kLastByte)
    return Status(StatusCode::kUnsupported, "naive-thread bursts over TLS: use the libcurl client's concurrent sends");
  if (o.mode == BurstMode::kLastByte && o.tls) {
    fire_synchronized_tls(requests, o, targets, result);
  } else if (o.mode == BurstMode::kLastByte) {
    fire_synchronized(requests, o, targets, result);
  } else {
    StartLine go(requests.size());
    std::vector<std::jthread> threads;
    threads.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      threads.emplace_back([&, i] { fire_one_naive(requests[i], o, targets[i], go, result.answers[i]); });
    }
  }  // jthreads join here
  for (auto& a : result.answers) {
    if (a.outcome != BurstOutcome::kAnswered && a.sent_ns != 0) a.outcome = BurstOutcome::kNoAnswer;
    a.arrival_ns = arrival_of(a.headers, o.arrival_header);
  }

  std::vector<std::int64_t> sent, arrived;
  for (const auto& a : result.answers) {
    if (a.sent_ns) sent.push_back(a.sent_ns);
    if (a.arrival_ns) arrived.push_back(*a.arrival_ns);
  }
  if (!result.harness_spread_ns && sent.size() >= 2) {
    result.harness_spread_ns = *std::max_element(sent.begin(), sent.end()) - *std::min_element(sent.begin(), sent.end());
  }
  if (arrived.size() >= 2) {
    result.target_spread_ns = *std::max_element(arrived.begin(), arrived.end()) - *std::min_element(arrived.begin(), arrived.end());
  }
  return result;
}

std::string format_request(const RequestSnapshot& r, const std::string& host) {
  auto has = [&r](std::string_view name) {
    return std::any_of(r.headers.begin(), r.headers.end(),
                       [name](const auto& h) { return equals_ignoring_case(h.first, name); });
  };
  std::string out = r.method + " " + (r.target.empty() ? "/" : r.target) + " HTTP/1.1\r\n";
  if (!has("Host")) out += "Host: " + host + "\r\n";
  for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
  if (!has("Content-Length") && !has("Transfer-Encoding") &&
      (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH")) {
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  }
  out += "\r\n";
  out += r.body;
  return out;
}

}  // namespace idemproof::injectors
