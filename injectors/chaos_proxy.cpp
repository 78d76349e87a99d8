// The proxy's sessions are C++20 coroutines on one io_context run by one
// thread: every session, timer and upstream leg lives on that thread, so the
// bookkeeping below (closers, `closing`) needs no locks. Only the armed rules
// and the counters are shared with the caller's thread.
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange

#include "injectors/chaos_proxy.h"

#include <array>
#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "injectors/fault_event.h"
#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

namespace {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
template <typename T>
using Task = asio::awaitable<T>;
constexpr auto kAwait = asio::use_awaitable;
}  // namespace

struct ChaosProxy::Impl {
  Impl(ProxySettings s, FaultEventLog* e) : settings(std::move(s)), events(e) {}

  ProxySettings settings;
  FaultEventLog* events;
  tcp::endpoint upstream;
  Endpoint bound;
  bool started = false;
  bool healed = false;
  std::promise<void> stopped;
  std::thread thread;

  std::mutex rules_mu;
  std::vector<std::shared_ptr<ProxyFaultRule>> rules;
  std::atomic<std::int64_t> accepted{0}, open{0}, requests{0}, sends{0}, injected{0};

  // Touched only on the proxy thread (or after it was joined).
  bool closing = false;
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, std::function<void()>> closers;

  // Declared last, destroyed first: coroutine frames still alive when the
  // io_context dies (forced heal) unregister from `closers` above.
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;

  std::shared_ptr<ProxyFaultRule> pick(const Request& req) {
    std::lock_guard lock(rules_mu);
    for (const auto& rule : rules) {
      const auto method = req.method_string();
      const auto target = req.target();
      if (rule->selector.select(std::string_view(method.data(), method.size()),
                                std::string_view(target.data(), target.size()))) {
        return rule;
      }
    }
    return nullptr;
  }
  void record(FaultEvent event) {
    if (events) events->record(std::move(event));
  }
};

namespace {

using Impl = ChaosProxy::Impl;

// Registers how to close one socket or timer, so heal() can reach it.
class Tracked {
 public:
  Tracked(Impl& p, std::function<void()> close) : p_(p) {
    if (p.closing) {
      close();
    } else {
      id_ = ++p.next_id;
      p.closers.emplace(id_, std::move(close));
    }
  }
  ~Tracked() {
    if (id_) p_.closers.erase(id_);
  }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;

 private:
  Impl& p_;
  std::uint64_t id_ = 0;
};

struct UpstreamConn {
  explicit UpstreamConn(Impl& p)
      : stream(p.io), tracked(p, [this] { close(); }) {}
  void close() {
    error_code ec;
    stream.socket().close(ec);
    connected = false;
    buffer.clear();
  }
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool connected = false;
  Tracked tracked;
};

struct Exchange {
  std::optional<Response> response;
  std::string error;
  bool timed_out = false;
  std::int64_t done_ns = 0;
};

HeaderList headers_of(const http::fields& fields) {
  HeaderList out;
  for (const auto& f : fields) out.emplace_back(std::string(f.name_string()), std::string(f.value()));
  return out;
}

RequestSnapshot snapshot(const Request& r) {
  return {std::string(r.method_string()), std::string(r.target()), headers_of(r), r.body()};
}

AnswerSnapshot snapshot(const Response& r, std::int64_t time_ns) {
  return {static_cast<int>(r.result_int()), headers_of(r), r.body(), time_ns};
}

Response gateway_error(const Exchange& ex, unsigned version) {
  Response r{ex.timed_out ? http::status::gateway_timeout : http::status::bad_gateway, version};
  r.set(http::field::content_type, "text/plain");
  r.set("X-Idemproof-Proxy", "upstream-error");
  r.body() = ex.error;
  r.prepare_payload();
  return r;
}

// One request/answer on `c`, connecting first if needed; never throws.
Task<Exchange> exchange(Impl& p, UpstreamConn& c, Request req) {
  Exchange out;
  error_code ec;
  if (p.closing) {
    out.error = "proxy is healing";
    co_return out;
  }
  if (!c.connected) {
    c.stream.expires_after(p.settings.upstream_timeout);
    co_await c.stream.async_connect(p.upstream, asio::redirect_error(kAwait, ec));
    if (ec) {
      out.error = "upstream connect: " + ec.message();
      out.timed_out = ec == beast::error::timeout;
      c.close();
      co_return out;
    }
    c.stream.socket().set_option(tcp::no_delay(true), ec);
    c.connected = true;
  }
  const bool head = req.method() == http::verb::head;
  req.keep_alive(true);
  c.stream.expires_after(p.settings.upstream_timeout);
  co_await http::async_write(c.stream, req, asio::redirect_error(kAwait, ec));
  if (ec) {
    out.error = "upstream write: " + ec.message();
    out.timed_out = ec == beast::error::timeout;
    c.close();
    co_return out;
  }
  ++p.sends;
  http::response_parser<http::string_body> parser;
  parser.body_limit(p.settings.body_limit);
  if (head) parser.skip(true);
  co_await http::async_read(c.stream, c.buffer, parser, asio::redirect_error(kAwait, ec));
  if (ec) {
    out.error = "upstream read: " + ec.message();
    out.timed_out = ec == beast::error::timeout;
    c.close();
    co_return out;
  }
  c.stream.expires_never();
  out.response = parser.release();
  out.done_ns = steady_now_ns();
  if (!out.response->keep_alive()) c.close();
  co_return out;
}

Task<bool> answer(Impl& p, beast::tcp_stream& client, Response res, bool keep_alive) {
  res.keep_alive(keep_alive);
  error_code ec;
  client.expires_after(p.settings.upstream_timeout);
  co_await http::async_write(client, res, asio::redirect_error(kAwait, ec));
  client.expires_never();
  co_return !ec;
}

Task<void> sleep_for(Impl& p, std::chrono::nanoseconds d) {
  if (p.closing) co_return;
  asio::steady_timer timer(p.io);
  Tracked tracked(p, [&timer] { timer.cancel(); });
  timer.expires_after(d);
  error_code ec;
  co_await timer.async_wait(asio::redirect_error(kAwait, ec));
}

// Concurrent upstream copies of one request, each on its own connection.
struct Flight {
  struct Leg {
    explicit Leg(Impl& p) : conn(p) {}
    UpstreamConn conn;
    Exchange result;
    bool done = false;
  };
  explicit Flight(Impl& p)
      : impl(p),
        signal(std::make_shared<asio::steady_timer>(p.io)),
        tracked(p, [t = signal.get()] { t->cancel(); }) {}

  void launch(const Request& req) {
    auto leg = std::make_shared<Leg>(impl);
    legs.push_back(leg);
    asio::co_spawn(impl.io, run(impl, leg, req, signal), [](std::exception_ptr) {});
  }
  // Owns the leg and the signal, so a session that left early (heal) leaves
  // nothing dangling.
  static Task<void> run(Impl& p, std::shared_ptr<Leg> leg, Request req,
                        std::shared_ptr<asio::steady_timer> signal) {
    leg->result = co_await exchange(p, leg->conn, std::move(req));
    leg->done = true;
    signal->cancel();
  }
  // What a session waits for. Plain values on purpose: GCC 12 destroys a
  // closure passed by value to a coroutine twice (its captured shared_ptrs
  // were released early), so no predicates are passed into coroutines here.
  enum class Until { kLegDone, kAllDone, kAnyAnswer };

  bool satisfied(Until what, std::size_t leg) const {
    switch (what) {
      case Until::kLegDone: return legs[leg]->done;
      case Until::kAllDone: return all_done();
      case Until::kAnyAnswer:
        for (const auto& l : legs) {
          if (l->done && l->result.response) return true;
        }
        return all_done();
    }
    return true;
  }
  bool all_done() const {
    for (const auto& l : legs) {
      if (!l->done) return false;
    }
    return true;
  }
  // Waits until `what` holds or `deadline`; false when the deadline passed first.
  Task<bool> wait(Until what, std::size_t leg, std::chrono::steady_clock::time_point deadline) {
    while (!satisfied(what, leg)) {
      if (impl.closing || std::chrono::steady_clock::now() >= deadline) co_return satisfied(what, leg);
      signal->expires_at(deadline);
      error_code ec;
      co_await signal->async_wait(asio::redirect_error(kAwait, ec));
    }
    co_return true;
  }
  // Waits for every leg; each is bounded by the upstream timeout.
  Task<void> drain() {
    co_await wait(Until::kAllDone, 0, std::chrono::steady_clock::now() + 2 * impl.settings.upstream_timeout);
  }
  // The legs' results in launch order.
  std::vector<Exchange> take_results() {
    std::vector<Exchange> out;
    out.reserve(legs.size());
    for (const auto& leg : legs) out.push_back(std::move(leg->result));
    return out;
  }

  Impl& impl;
  std::shared_ptr<asio::steady_timer> signal;
  Tracked tracked;
  std::vector<std::shared_ptr<Leg>> legs;
};

void close_client(beast::tcp_stream& client, bool reset) {
  error_code ec;
  if (reset) {
    client.socket().set_option(asio::socket_base::linger(true, 0), ec);
  } else {
    client.socket().shutdown(tcp::socket::shutdown_both, ec);
  }
  client.socket().close(ec);
}

std::string millis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration<double, std::milli>(d).count()) + "ms";
}

// Applies `rule` to one exchange; false when the client connection must end.
Task<bool> inject(Impl& p, const ProxyFaultRule& rule, beast::tcp_stream& client,
                  UpstreamConn& primary, Request req, bool keep_alive) {
  const ProxyFaultSpec& spec = rule.spec;
  FaultEvent ev;
  ev.time_ns = steady_now_ns();
  ev.fault = to_string(spec.kind);
  ev.name = rule.selector.settings().name;
  ev.phase = "injected";
  ev.request = snapshot(req);
  const unsigned version = req.version();

  switch (spec.kind) {
    case ProxyFaultKind::kReset: {
      ev.detail = "reset the client connection before forwarding";
      p.record(std::move(ev));
      close_client(client, /*reset=*/true);
      co_return false;
    }
    case ProxyFaultKind::kDelay: {
      if (!spec.response_side) co_await sleep_for(p, spec.duration);
      Exchange ex = co_await exchange(p, primary, std::move(req));
      if (spec.response_side) co_await sleep_for(p, spec.duration);
      ev.upstream_sends = 1;
      ev.detail = std::string("delayed the ") + (spec.response_side ? "answer" : "request") +
                  " by " + millis(spec.duration);
      Response res = ex.response ? std::move(*ex.response) : gateway_error(ex, version);
      ev.client_answer = snapshot(res, steady_now_ns());
      p.record(std::move(ev));
      if (p.closing) co_return false;
      co_return co_await answer(p, client, std::move(res), keep_alive) && ex.response;
    }
    case ProxyFaultKind::kDropResponse: {
      Exchange ex = co_await exchange(p, primary, std::move(req));
      ev.upstream_sends = 1;
      if (ex.response) {
        ev.upstream.push_back(snapshot(*ex.response, ex.done_ns));
      } else {
        ev.detail = ex.error + "; ";
      }
      ev.detail += spec.hold ? "held the client connection without an answer"
                             : "closed the client connection without an answer";
      p.record(std::move(ev));
      if (spec.hold && !p.closing) {
        // Wait for the client to give up (EOF), heal, or the hold limit.
        Tracked tracked(p, [&client] { error_code e; client.socket().close(e); });
        std::array<char, 512> sink;
        client.expires_after(spec.hold_limit);
        for (;;) {
          error_code ec;
          co_await client.async_read_some(asio::buffer(sink), asio::redirect_error(kAwait, ec));
          if (ec || p.closing) break;
        }
      }
      close_client(client, /*reset=*/false);
      co_return false;
    }
    case ProxyFaultKind::kReplayUpstream: {
      std::vector<Exchange> all;
      if (!spec.replay_after) {
        for (int i = 0; i <= spec.times && !p.closing; ++i) all.push_back(co_await exchange(p, primary, req));
      } else {
        Flight flight(p);
        for (int i = 0; i <= spec.times && !p.closing; ++i) {
          flight.launch(req);
          if (i == spec.times) break;
          co_await flight.wait(Flight::Until::kLegDone, flight.legs.size() - 1,
                               std::chrono::steady_clock::now() + *spec.replay_after);
        }
        co_await flight.drain();
        all = flight.take_results();
      }
      ev.upstream_sends = static_cast<std::int64_t>(all.size());
      Exchange last;
      last.error = "proxy is healing";
      if (!all.empty()) {
        last = std::move(all.back());
        all.pop_back();
      }
      ev.detail = "sent the request upstream " + std::to_string(ev.upstream_sends) +
                  " times; the client got the last answer";
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i].response) {
          ev.upstream.push_back(snapshot(*all[i].response, all[i].done_ns));
        } else {
          ev.detail += "; copy " + std::to_string(i + 1) + ": " + all[i].error;
        }
      }
      Response res = last.response ? std::move(*last.response) : gateway_error(last, version);
      ev.client_answer = snapshot(res, steady_now_ns());
      p.record(std::move(ev));
      if (p.closing) co_return false;
      co_return co_await answer(p, client, std::move(res), keep_alive) && last.response;
    }
    case ProxyFaultKind::kHedge: {
      Flight flight(p);
      for (int i = 0; i < spec.copies; ++i) flight.launch(req);
      co_await flight.wait(Flight::Until::kAnyAnswer, 0,
                           std::chrono::steady_clock::now() + 2 * p.settings.upstream_timeout);
      std::shared_ptr<Flight::Leg> first;
      for (const auto& l : flight.legs) {
        if (l->done && l->result.response && (!first || l->result.done_ns < first->result.done_ns)) first = l;
      }
      bool ok = false;
      Response res = first ? *first->result.response
                           : gateway_error(flight.legs.front()->result, version);
      ev.client_answer = snapshot(res, steady_now_ns());
      if (!p.closing) ok = co_await answer(p, client, std::move(res), keep_alive) && first;
      co_await flight.drain();
      ev.upstream_sends = spec.copies;
      for (const auto& l : flight.legs) {
        if (l != first && l->result.response) ev.upstream.push_back(snapshot(*l->result.response, l->result.done_ns));
      }
      ev.detail = "sent " + std::to_string(spec.copies) + " copies at once; the client got the first answer";
      p.record(std::move(ev));
      co_return ok;
    }
  }
  co_return false;
}

Task<bool> forward(Impl& p, beast::tcp_stream& client, UpstreamConn& primary, Request req,
                   bool keep_alive) {
  const unsigned version = req.version();
  RequestSnapshot shot = snapshot(req);
  Exchange ex = co_await exchange(p, primary, std::move(req));
  if (ex.response) co_return co_await answer(p, client, std::move(*ex.response), keep_alive);
  FaultEvent ev;
  ev.time_ns = steady_now_ns();
  ev.fault = "upstream-error";
  ev.name = "upstream-error";
  ev.phase = "error";
  ev.detail = ex.error;
  ev.request = std::move(shot);
  ev.upstream_sends = 1;
  Response res = gateway_error(ex, version);
  ev.client_answer = snapshot(res, steady_now_ns());
  p.record(std::move(ev));
  if (!p.closing) co_await answer(p, client, std::move(res), false);
  co_return false;
}

Task<void> session(Impl& p, tcp::socket socket) {
  ++p.open;
  struct OpenCount {
    Impl& p;
    ~OpenCount() { --p.open; }
  } open_count{p};
  beast::tcp_stream client(std::move(socket));
  Tracked tracked(p, [&client] { error_code e; client.socket().close(e); });
  error_code ec;
  client.socket().set_option(tcp::no_delay(true), ec);
  UpstreamConn primary(p);
  beast::flat_buffer buffer;
  while (!p.closing) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(p.settings.body_limit);
    client.expires_after(p.settings.client_idle_timeout);
    co_await http::async_read(client, buffer, parser, asio::redirect_error(kAwait, ec));
    if (ec) break;
    client.expires_never();
    ++p.requests;
    Request req = parser.release();
    const bool keep_alive = req.keep_alive();
    std::shared_ptr<ProxyFaultRule> rule = p.pick(req);
    bool go_on = false;
    if (rule) {
      ++p.injected;
      go_on = co_await inject(p, *rule, client, primary, std::move(req), keep_alive);
    } else {
      go_on = co_await forward(p, client, primary, std::move(req), keep_alive);
    }
    if (!go_on || !keep_alive) break;
  }
  close_client(client, /*reset=*/false);
}

Task<void> accept_loop(Impl& p) {
  for (;;) {
    tcp::socket socket(p.io);
    error_code ec;
    co_await p.acceptor.async_accept(socket, asio::redirect_error(kAwait, ec));
    if (p.closing || !p.acceptor.is_open()) co_return;
    if (ec) {
      co_await sleep_for(p, std::chrono::milliseconds(1));  // e.g. EMFILE: do not spin
      continue;
    }
    ++p.accepted;
    asio::co_spawn(p.io, session(p, std::move(socket)), [](std::exception_ptr) {});
  }
}

}  // namespace

ChaosProxy::ChaosProxy(ProxySettings settings, FaultEventLog* events)
    : impl_(std::make_unique<Impl>(std::move(settings), events)) {}

ChaosProxy::~ChaosProxy() { heal(); }

Status ChaosProxy::start() {
  Impl& p = *impl_;
  if (p.started) return Status(StatusCode::kInternal, "proxy started twice");
  error_code ec;
  const auto listen_addr = asio::ip::make_address(p.settings.listen.host, ec);
  if (ec) return Status(StatusCode::kUnavailable, "listen address '" + p.settings.listen.host + "': " + ec.message());
  const auto upstream_addr = asio::ip::make_address(p.settings.upstream.host, ec);
  if (ec) return Status(StatusCode::kUnavailable, "upstream address '" + p.settings.upstream.host + "': " + ec.message());
  p.upstream = tcp::endpoint(upstream_addr, p.settings.upstream.port);
  const tcp::endpoint listen(listen_addr, p.settings.listen.port);
  p.acceptor.open(listen.protocol(), ec);
  if (!ec) p.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) p.acceptor.bind(listen, ec);
  if (!ec) p.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    p.acceptor.close(ignored);
    return Status(StatusCode::kUnavailable, "listen on " + p.settings.listen.to_string() + ": " + ec.message());
  }
  p.bound = Endpoint{p.settings.listen.host, p.acceptor.local_endpoint().port()};
  p.work.emplace(asio::make_work_guard(p.io));
  asio::co_spawn(p.io, accept_loop(p), [](std::exception_ptr) {});
  p.started = true;
  p.thread = std::thread([&p] {
    for (;;) {
      try {
        p.io.run();
        break;
      } catch (...) {
        // A completion handler threw; keep serving the other sessions.
      }
    }
    p.stopped.set_value();
  });
  return Status::Ok();
}

Endpoint ChaosProxy::endpoint() const { return impl_->bound; }

void ChaosProxy::arm(std::shared_ptr<ProxyFaultRule> rule) {
  std::lock_guard lock(impl_->rules_mu);
  impl_->rules.push_back(std::move(rule));
}

void ChaosProxy::disarm(const std::shared_ptr<ProxyFaultRule>& rule) {
  std::lock_guard lock(impl_->rules_mu);
  std::erase(impl_->rules, rule);
}

bool ChaosProxy::running() const { return impl_->started && !impl_->healed; }

bool ChaosProxy::heal() noexcept {
  Impl& p = *impl_;
  if (!p.started || p.healed) return true;
  p.healed = true;
  bool drained = true;
  try {
    asio::post(p.io, [&p] {
      p.closing = true;
      error_code ec;
      p.acceptor.close(ec);
      auto closers = p.closers;  // closing may unregister entries
      for (auto& [id, close] : closers) close();
      p.work.reset();
    });
    auto stopped = p.stopped.get_future();
    drained = stopped.wait_for(p.settings.heal_timeout) == std::future_status::ready;
    if (!drained) p.io.stop();
  } catch (...) {
    drained = false;
    p.io.stop();
  }
  if (p.thread.joinable()) p.thread.join();
  std::lock_guard lock(p.rules_mu);
  p.rules.clear();
  return drained;
}

ProxyCounters ChaosProxy::counters() const {
  const Impl& p = *impl_;
  return ProxyCounters{p.accepted.load(), p.open.load(), p.requests.load(), p.sends.load(),
                       p.injected.load()};
}

}  // namespace idemproof::injectors
