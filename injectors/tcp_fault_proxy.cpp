// The proxy's connections are C++20 coroutines on one io_context run by one
// thread, so the connection table and `closing` need no locks; the armed
// rules and the counters are shared with the caller's thread. One sweep
// coroutine every few milliseconds enforces every deadline (connect, write,
// idle) and ends the faults whose window has passed.
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange

#include "injectors/tcp_fault_proxy.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "injectors/asio_names.h"
#include "injectors/proxy_listener.h"
#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

namespace {
using namespace asio_names;  // asio, tcp, error_code, kAwait
using Task = asio::awaitable<void>;

constexpr std::chrono::milliseconds kTick{5};  // the sweep's and a held pump's period
constexpr std::size_t kMaxDelayed = 4 << 20;    // bytes latency may hold per connection and direction

const char* DirectionName(int dir) { return dir == 0 ? "service->store" : "store->service"; }

std::string Millis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

struct Conn {
  Conn(asio::io_context& io, tcp::socket s, std::uint64_t n)
      : id(n), client(std::move(s)), upstream(io), last_ns(steady_now_ns()) {}
  const std::uint64_t id;
  tcp::socket client, upstream;
  std::int64_t last_ns;                        // last byte either way (the idle deadline)
  std::int64_t connect_since = 0;              // connecting upstream since (0 = not)
  std::array<std::int64_t, 2> write_since{};   // a write pending since, per direction (0 = none)
  std::map<std::int64_t, std::array<std::int64_t, 2>> counted;  // cut rule id -> bytes since arming
  std::set<std::int64_t> held;                 // pause rule ids whose hold is recorded
  // latency: chunks waiting for their time, per direction, in order; a
  // writer coroutine (Drain) owns the direction's writes while `draining`.
  struct Delayed {
    std::vector<char> bytes;
    std::int64_t due_ns;
    bool close_after;  // a cut-after ends the connection once this is written
  };
  std::array<std::deque<Delayed>, 2> delayed;
  std::array<std::size_t, 2> delayed_bytes{};
  std::array<bool, 2> draining{};
  std::array<bool, 2> eof_after_drain{};
  std::set<std::int64_t> slowed;               // latency rule ids whose delay is recorded
  int eofs = 0;
  bool closed = false;
};

}  // namespace

struct TcpFaultProxy::Impl {
  Impl(TcpProxySettings s, FaultEventLog* e) : settings(std::move(s)), events(e) {}

  TcpProxySettings settings;
  FaultEventLog* events;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::endpoint upstream;
  Endpoint bound;
  bool started = false;
  bool healed = false;
  std::promise<void> stopped;
  std::thread thread;

  std::mutex rules_mu;
  std::vector<std::shared_ptr<TcpFaultRule>> rules;  // guarded by rules_mu
  std::int64_t next_rule_id = 1;                     // guarded by rules_mu

  // The proxy's thread only.
  bool closing = false;
  std::uint64_t next_conn = 1;
  std::map<std::uint64_t, std::shared_ptr<Conn>> conns;

  std::atomic<std::int64_t> accepted{0}, open{0}, up_bytes{0}, down_bytes{0};

  std::vector<std::shared_ptr<TcpFaultRule>> InForce() {
    const std::int64_t now = steady_now_ns();
    std::lock_guard lock(rules_mu);
    std::vector<std::shared_ptr<TcpFaultRule>> out;
    for (const auto& r : rules)
      if (r->in_force(now)) out.push_back(r);
    return out;
  }

  void Record(const TcpFaultRule& r, const char* phase, std::string detail) {
    if (events == nullptr) return;
    FaultEvent e;
    e.time_ns = steady_now_ns();
    e.fault = r.fault->kind();
    e.name = r.settings.name;
    e.phase = phase;
    e.detail = std::move(detail);
    events->record(std::move(e));
  }

  void Close(Conn& c, bool reset) {
    if (c.closed) return;
    c.closed = true;
    error_code ec;
    for (tcp::socket* s : {&c.client, &c.upstream}) {
      if (!s->is_open()) continue;
      if (reset) s->set_option(asio::socket_base::linger(true, 0), ec);  // close sends RST
      s->close(ec);
    }
    conns.erase(c.id);
    --open;
  }

  Task Sleep(std::chrono::nanoseconds d) {
    asio::steady_timer t(io);
    t.expires_after(d);
    error_code ec;
    co_await t.async_wait(asio::redirect_error(kAwait, ec));
  }

  // The longest latency in force for direction `dir`, null when none.
  std::shared_ptr<TcpFaultRule> SlowestLatency(const std::vector<std::shared_ptr<TcpFaultRule>>& rules, int dir) {
    std::shared_ptr<TcpFaultRule> slow;
    for (const auto& r : rules)
      if (r->effect.latency.count() > 0 && (dir == 0 ? r->effect.latency_upstream : r->effect.latency_downstream) &&
          (!slow || r->effect.latency > slow->effect.latency))
        slow = r;
    return slow;
  }

  // The reading side of `dir` ended: pass the half-close on.
  void PassEof(Conn& c, int dir) {
    error_code ignored;
    (dir == 0 ? c.upstream : c.client).shutdown(tcp::socket::shutdown_send, ignored);
    if (++c.eofs == 2) Close(c, false);
  }

  // Writes the chunks latency holds for `dir`, each once it is due, or at
  // once when no latency is in force any more (a heal flushes). A closed
  // connection (a reset, the proxy's heal) drops what is left.
  Task Drain(std::shared_ptr<Conn> c, int dir) {
    tcp::socket& to = dir == 0 ? c->upstream : c->client;
    while (!c->delayed[dir].empty()) {
      const std::int64_t due = c->delayed[dir].front().due_ns;
      for (;;) {
        if (c->closed || closing) co_return;
        const std::int64_t now = steady_now_ns();
        if (now >= due || !SlowestLatency(InForce(), dir)) break;
        c->last_ns = now;  // held, not idle
        co_await Sleep(std::min<std::chrono::nanoseconds>(std::chrono::nanoseconds(due - now), kTick));
      }
      Conn::Delayed d = std::move(c->delayed[dir].front());
      c->delayed[dir].pop_front();
      c->delayed_bytes[dir] -= d.bytes.size();
      if (!d.bytes.empty()) {
        error_code ec;
        c->write_since[dir] = steady_now_ns();
        co_await asio::async_write(to, asio::buffer(d.bytes), asio::redirect_error(kAwait, ec));
        c->write_since[dir] = 0;
        if (c->closed) co_return;
        if (ec) {
          Close(*c, false);
          co_return;
        }
        (dir == 0 ? up_bytes : down_bytes) += static_cast<std::int64_t>(d.bytes.size());
      }
      if (d.close_after) {
        Close(*c, false);
        co_return;
      }
    }
    c->draining[dir] = false;
    if (c->eof_after_drain[dir] && !c->closed) PassEof(*c, dir);
  }

  // Copies one direction (0: service -> store, 1: store -> service).
  Task Pump(std::shared_ptr<Conn> c, int dir) {
    tcp::socket& from = dir == 0 ? c->client : c->upstream;
    tcp::socket& to = dir == 0 ? c->upstream : c->client;
    std::array<char, 16384> buf;
    for (;;) {
      error_code ec;
      std::size_t n = co_await from.async_read_some(asio::buffer(buf), asio::redirect_error(kAwait, ec));
      if (c->closed) co_return;
      if (ec) {
        if (ec == asio::error::eof) {  // pass the half-close on, after what latency holds
          if (c->draining[dir])
            c->eof_after_drain[dir] = true;
          else
            PassEof(*c, dir);
        } else {
          Close(*c, false);
        }
        co_return;
      }
      c->last_ns = steady_now_ns();
      const std::int64_t read_ns = c->last_ns;
      // A pause holds the bytes as long as it is in force (its window, its
      // heal or the proxy's heal ends that).
      for (;;) {
        std::shared_ptr<TcpFaultRule> pause;
        for (const auto& r : InForce())
          if (r->effect.pause) pause = r;
        if (!pause || c->closed || closing) break;
        if (c->held.insert(pause->id.load()).second) {
          ++pause->injected;
          Record(*pause, "injected",
                 "held connection " + std::to_string(c->id) + " (" + DirectionName(dir) + ", " +
                     std::to_string(n) + " bytes waiting)");
        }
        co_await Sleep(kTick);
        c->last_ns = steady_now_ns();  // held, not idle
      }
      if (c->closed) co_return;
      // cut-after: forward up to the first limit, then close.
      std::size_t pass = n;
      std::shared_ptr<TcpFaultRule> cutter;
      const auto rules = InForce();
      for (const auto& r : rules) {
        if (!r->effect.cut_after || !(dir == 0 ? r->effect.cut_upstream : r->effect.cut_downstream)) continue;
        const std::int64_t left = std::max<std::int64_t>(0, *r->effect.cut_after - c->counted[r->id.load()][dir]);
        if (left < static_cast<std::int64_t>(pass) || (left == 0 && !cutter)) {
          pass = static_cast<std::size_t>(left);
          cutter = r;
        }
      }
      for (const auto& r : rules)
        if (r->effect.cut_after && (dir == 0 ? r->effect.cut_upstream : r->effect.cut_downstream))
          c->counted[r->id.load()][dir] += static_cast<std::int64_t>(pass);
      // latency: the chunk waits its turn behind what is held, then its delay.
      if (auto slow = SlowestLatency(rules, dir); slow || c->draining[dir]) {
        if (slow && c->slowed.insert(slow->id.load()).second) {
          ++slow->injected;
          Record(*slow, "injected",
                 "delayed connection " + std::to_string(c->id) + " (" + DirectionName(dir) + ", " +
                     Millis(slow->effect.latency) + " per chunk)");
        }
        c->delayed[dir].push_back(Conn::Delayed{std::vector<char>(buf.data(), buf.data() + pass),
                                                read_ns + (slow ? slow->effect.latency.count() : 0), cutter != nullptr});
        c->delayed_bytes[dir] += pass;
        if (!c->draining[dir]) {
          c->draining[dir] = true;
          asio::co_spawn(io, Drain(c, dir), asio::detached);
        }
        if (cutter) {
          ++cutter->injected;
          Record(*cutter, "injected",
                 "cut connection " + std::to_string(c->id) + " after " +
                     std::to_string(c->counted[cutter->id.load()][dir]) + " bytes " + DirectionName(dir) + " (" +
                     std::to_string(n - pass) + " bytes dropped)");
          co_return;  // Drain closes it once the rest is written
        }
        // Bounded: read no more while the held bytes are over the limit.
        while (c->delayed_bytes[dir] > kMaxDelayed && !c->closed && !closing) co_await Sleep(kTick);
        if (c->closed) co_return;
        continue;
      }
      if (pass > 0) {
        c->write_since[dir] = steady_now_ns();
        co_await asio::async_write(to, asio::buffer(buf.data(), pass), asio::redirect_error(kAwait, ec));
        c->write_since[dir] = 0;
        if (c->closed) co_return;
        if (ec) {
          Close(*c, false);
          co_return;
        }
        (dir == 0 ? up_bytes : down_bytes) += static_cast<std::int64_t>(pass);
      }
      if (cutter) {
        ++cutter->injected;
        Record(*cutter, "injected",
               "cut connection " + std::to_string(c->id) + " after " + std::to_string(c->counted[cutter->id.load()][dir]) +
                   " bytes " + DirectionName(dir) + " (" + std::to_string(n - pass) + " bytes dropped)");
        Close(*c, false);
        co_return;
      }
    }
  }

  Task Serve(std::shared_ptr<Conn> c) {
    c->connect_since = steady_now_ns();
    error_code ec;
    co_await c->upstream.async_connect(upstream, asio::redirect_error(kAwait, ec));
    c->connect_since = 0;
    if (c->closed) co_return;
    if (ec) {
      Close(*c, false);  // the store is down: the service sees its connection end
      co_return;
    }
    error_code ignored;
    c->client.set_option(tcp::no_delay(true), ignored);
    c->upstream.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(io, Pump(c, 0), asio::detached);
    asio::co_spawn(io, Pump(c, 1), asio::detached);
  }

  Task Accept() {
    for (;;) {
      tcp::socket socket(io);
      error_code ec;
      co_await acceptor.async_accept(socket, asio::redirect_error(kAwait, ec));
      if (closing || !acceptor.is_open()) co_return;
      if (ec) {
        co_await Sleep(std::chrono::milliseconds(1));  // e.g. EMFILE: do not spin
        continue;
      }
      ++accepted;
      ++open;
      auto c = std::make_shared<Conn>(io, std::move(socket), next_conn++);
      conns[c->id] = c;
      std::shared_ptr<TcpFaultRule> refuser;
      for (const auto& r : InForce())
        if (r->effect.admit != TcpFaultEffect::Admit::kForward) refuser = r;
      if (refuser) {
        const bool rst = refuser->effect.admit == TcpFaultEffect::Admit::kReset;
        ++refuser->injected;
        Record(*refuser, "injected",
               std::string(rst ? "reset" : "refused") + " new connection " + std::to_string(c->id) +
                   (rst ? " (RST)" : " (closed at once)"));
        Close(*c, rst);
        continue;
      }
      asio::co_spawn(io, Serve(c), asio::detached);
    }
  }

  // Every deadline, and the end of every window.
  Task Sweep() {
    while (!closing) {
      co_await Sleep(kTick);
      const std::int64_t now = steady_now_ns();
      std::vector<std::shared_ptr<Conn>> late;
      for (const auto& [id, c] : conns) {
        const bool connect_late = c->connect_since != 0 && now - c->connect_since > settings.connect_timeout.count();
        const bool write_late = (c->write_since[0] != 0 && now - c->write_since[0] > settings.io_timeout.count()) ||
                                (c->write_since[1] != 0 && now - c->write_since[1] > settings.io_timeout.count());
        const bool idle = now - c->last_ns > settings.idle_timeout.count();
        if (connect_late || write_late || idle) late.push_back(c);
      }
      for (const auto& c : late) Close(*c, false);
      std::vector<std::shared_ptr<TcpFaultRule>> over;
      {
        std::lock_guard lock(rules_mu);
        for (const auto& r : rules)
          if (r->window && now >= r->armed_ns.load() + r->window->count()) over.push_back(r);
        for (const auto& r : over) std::erase(rules, r);
      }
      for (const auto& r : over)
        if (r->end()) Record(*r, "heal", "window of " + Millis(*r->window) + " ended");
    }
  }
};

TcpFaultProxy::TcpFaultProxy(TcpProxySettings settings, FaultEventLog* events)
    : impl_(std::make_unique<Impl>(std::move(settings), events)) {}

TcpFaultProxy::~TcpFaultProxy() { heal(); }

Status TcpFaultProxy::start() {
  Impl& p = *impl_;
  if (p.started) return Status(StatusCode::kInternal, "tcp proxy started twice");
  auto listener = OpenProxyListener(p.acceptor, p.settings.listen, p.settings.upstream);
  if (!listener.ok()) return listener.status();
  p.upstream = listener->upstream;
  p.bound = listener->bound;
  p.work.emplace(asio::make_work_guard(p.io));
  asio::co_spawn(p.io, p.Accept(), asio::detached);
  asio::co_spawn(p.io, p.Sweep(), asio::detached);
  p.started = true;
  p.thread = std::thread([&p] {
    for (;;) {
      try {
        p.io.run();
        break;
      } catch (...) {
        // A completion handler threw; keep serving the other connections.
      }
    }
    p.stopped.set_value();
  });
  return Status::Ok();
}

Endpoint TcpFaultProxy::endpoint() const { return impl_->bound; }

void TcpFaultProxy::arm(std::shared_ptr<TcpFaultRule> rule) {
  Impl& p = *impl_;
  {
    std::lock_guard lock(p.rules_mu);
    rule->id = p.next_rule_id++;
    rule->armed_ns = steady_now_ns();
    p.rules.push_back(rule);
  }
  p.Record(*rule, "start", rule->window ? "in force for " + Millis(*rule->window) : "in force until healed");
  if (rule->effect.reset_open && p.started && !p.healed) {
    asio::post(p.io, [&p, rule] {
      std::vector<std::shared_ptr<Conn>> all;
      for (const auto& [id, c] : p.conns) all.push_back(c);
      for (const auto& c : all) p.Close(*c, /*reset=*/true);
      if (!all.empty()) {
        ++rule->injected;
        p.Record(*rule, "injected", "reset " + std::to_string(all.size()) + " open connection(s) (RST)");
      }
    });
  }
}

bool TcpFaultProxy::disarm(const std::shared_ptr<TcpFaultRule>& rule) {
  Impl& p = *impl_;
  {
    std::lock_guard lock(p.rules_mu);
    std::erase(p.rules, rule);
  }
  if (!rule->end()) return false;
  p.Record(*rule, "heal", "healed");
  return true;
}

bool TcpFaultProxy::heal() noexcept {
  Impl& p = *impl_;
  if (!p.started || p.healed) return true;
  p.healed = true;
  bool drained = true;
  try {
    asio::post(p.io, [&p] {
      p.closing = true;
      error_code ec;
      p.acceptor.close(ec);
      std::vector<std::shared_ptr<Conn>> all;
      for (const auto& [id, c] : p.conns) all.push_back(c);
      for (const auto& c : all) p.Close(*c, false);
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
  std::vector<std::shared_ptr<TcpFaultRule>> left;
  {
    std::lock_guard lock(p.rules_mu);
    left.swap(p.rules);
  }
  try {
    for (const auto& r : left)
      if (r->end()) p.Record(*r, "heal", "proxy healed");
  } catch (...) {
    // Healing must not throw; a lost heal event is the lesser harm.
  }
  return drained;
}

TcpProxyCounters TcpFaultProxy::counters() const {
  const Impl& p = *impl_;
  return TcpProxyCounters{p.accepted.load(), p.open.load(), p.up_bytes.load(), p.down_bytes.load()};
}

}  // namespace idemproof::injectors
