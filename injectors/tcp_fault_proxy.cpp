// The proxy's connections are C++20 coroutines on one io_context run by one
// thread, so the connection table and `closing` need no locks; the armed
// rules and the counters are shared with the caller's thread. One sweep
// coroutine every few milliseconds enforces every deadline (connect, write,
// idle) and ends the faults whose window has passed. The faults act through
// the means below (ArmAct, AcceptAct, ChunkAct: tcp_fault.h's TcpArm,
// TcpAccept, TcpChunk); what they decide, this file carries out.
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange

#include "injectors/tcp_fault_proxy.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "base/thread_annotations.h"
#include "injectors/asio_names.h"
#include "injectors/proxy_listener.h"
#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

namespace {
using namespace asio_names;  // asio, tcp, error_code, kAwait
using Task = asio::awaitable<void>;

constexpr std::chrono::milliseconds kTick{5};  // the sweep's and a held pump's period
constexpr std::size_t kMaxDelayed = 4 << 20;    // bytes latency may hold per connection and direction

using Rule = std::shared_ptr<TcpFaultRule>;

struct Conn final : TcpLink {
  Conn(TcpFaultProxy::Impl& p, tcp::socket s, std::uint64_t n);
  std::uint64_t id() const override { return serial; }
  void close(bool reset) override;
  bool closed() const override { return ended; }

  TcpFaultProxy::Impl& proxy;
  const std::uint64_t serial;
  tcp::socket client, upstream;
  std::int64_t last_ns;                        // last byte either way (the idle deadline)
  std::int64_t connect_since = 0;              // connecting upstream since (0 = not)
  std::array<std::int64_t, 2> write_since{};   // a write pending since, per direction (0 = none)
  // Each fault's marks on this connection (TcpChunk::first_on_link, counted).
  struct Marks {
    bool seen = false;
    std::array<std::int64_t, 2> counted{};
    std::any state;
  };
  std::map<std::int64_t, Marks> marks;  // by rule id
  // Delayed chunks waiting for their time, per direction, in order; a
  // writer coroutine (Drain) owns the direction's writes while `draining`.
  struct Delayed {
    std::vector<char> bytes;
    std::int64_t due_ns;
    bool close_after;  // a cut ends the connection once this is written
    std::vector<Rule> by;  // the faults that delayed it: their end writes it at once
  };
  std::array<std::deque<Delayed>, 2> delayed;
  std::array<std::size_t, 2> delayed_bytes{};
  std::array<bool, 2> draining{};
  std::array<bool, 2> eof_after_drain{};
  int eofs = 0;
  bool ended = false;
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

  base::Mutex rules_mu;
  std::vector<Rule> rules GUARDED_BY(rules_mu);  // in arming order
  std::int64_t next_rule_id GUARDED_BY(rules_mu) = 1;

  // The proxy's thread only.
  bool closing = false;
  std::uint64_t next_conn = 1;
  std::map<std::uint64_t, std::shared_ptr<Conn>> conns;

  std::atomic<std::int64_t> accepted{0}, open{0}, up_bytes{0}, down_bytes{0};

  // The first rule in force armed after rule id `after` (0: the first of all).
  Rule NextInForce(std::int64_t after) {
    const std::int64_t now = steady_now_ns();
    base::MutexLock lock(rules_mu);
    for (const auto& r : rules)
      if (r->id.load() > after && r->in_force(now)) return r;
    return nullptr;
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
  void RecordAct(TcpFaultRule& r, std::string detail) {
    ++r.injected;
    Record(r, "injected", std::move(detail));
  }

  void Close(Conn& c, bool reset) {
    if (c.ended) return;
    c.ended = true;
    error_code ec;
    for (tcp::socket* s : {&c.client, &c.upstream}) {
      if (!s->is_open()) continue;
      if (reset) s->set_option(asio::socket_base::linger(true, 0), ec);  // close sends RST
      s->close(ec);
    }
    conns.erase(c.serial);
    --open;
  }

  Task Sleep(std::chrono::nanoseconds d) {
    asio::steady_timer t(io);
    t.expires_after(d);
    error_code ec;
    co_await t.async_wait(asio::redirect_error(kAwait, ec));
  }

  // The reading side of `dir` ended: pass the half-close on.
  void PassEof(Conn& c, int dir) {
    error_code ignored;
    (dir == 0 ? c.upstream : c.client).shutdown(tcp::socket::shutdown_send, ignored);
    if (++c.eofs == 2) Close(c, false);
  }

  // Writes the chunks held for `dir`, each once it is due, or at once when
  // none of the faults that delayed it is in force any more (a heal
  // flushes). A closed connection (a reset, the proxy's heal) drops what is left.
  Task Drain(std::shared_ptr<Conn> c, int dir) {
    tcp::socket& to = dir == 0 ? c->upstream : c->client;
    while (!c->delayed[dir].empty()) {
      for (;;) {
        if (c->ended || closing) co_return;
        const Conn::Delayed& next = c->delayed[dir].front();
        const std::int64_t now = steady_now_ns();
        if (now >= next.due_ns ||
            std::none_of(next.by.begin(), next.by.end(), [now](const Rule& r) { return r->in_force(now); }))
          break;
        c->last_ns = now;  // held, not idle
        co_await Sleep(std::min<std::chrono::nanoseconds>(std::chrono::nanoseconds(next.due_ns - now), kTick));
      }
      Conn::Delayed d = std::move(c->delayed[dir].front());
      c->delayed[dir].pop_front();
      c->delayed_bytes[dir] -= d.bytes.size();
      if (!d.bytes.empty()) {
        error_code ec;
        c->write_since[dir] = steady_now_ns();
        co_await asio::async_write(to, asio::buffer(d.bytes), asio::redirect_error(kAwait, ec));
        c->write_since[dir] = 0;
        if (c->ended) co_return;
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
    if (c->eof_after_drain[dir] && !c->ended) PassEof(*c, dir);
  }

  Task Pump(std::shared_ptr<Conn> c, int dir);

  Task Serve(std::shared_ptr<Conn> c) {
    c->connect_since = steady_now_ns();
    error_code ec;
    co_await c->upstream.async_connect(upstream, asio::redirect_error(kAwait, ec));
    c->connect_since = 0;
    if (c->ended) co_return;
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

  Task Accept();
  void Arm(const Rule& rule);

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
      std::vector<Rule> over;
      {
        base::MutexLock lock(rules_mu);
        for (const auto& r : rules)
          if (r->window && now >= r->armed_ns.load() + r->window->count()) over.push_back(r);
        for (const auto& r : over) std::erase(rules, r);
      }
      for (const auto& r : over)
        if (r->end()) Record(*r, "heal", "window of " + TcpMillis(*r->window) + " ended");
    }
  }
};

namespace {

Conn::Conn(TcpFaultProxy::Impl& p, tcp::socket s, std::uint64_t n)
    : proxy(p), serial(n), client(std::move(s)), upstream(p.io), last_ns(steady_now_ns()) {}

void Conn::close(bool reset) { proxy.Close(*this, reset); }

// TcpArm: the connections open when `rule` was armed (kept alive while it acts).
class ArmAct final : public TcpArm {
 public:
  ArmAct(TcpFaultProxy::Impl& p, Rule r) : p_(p), rule_(std::move(r)) {
    for (const auto& [id, c] : p_.conns) open_.push_back(c);
  }
  void record(std::string detail) override { p_.RecordAct(*rule_, std::move(detail)); }
  std::vector<TcpLink*> open_links() override {
    std::vector<TcpLink*> out;
    for (const auto& c : open_)
      if (!c->ended) out.push_back(c.get());
    return out;
  }

 private:
  TcpFaultProxy::Impl& p_;
  Rule rule_;
  std::vector<std::shared_ptr<Conn>> open_;
};

// TcpAccept: one connection just accepted, offered to each fault in force.
class AcceptAct final : public TcpAccept {
 public:
  AcceptAct(TcpFaultProxy::Impl& p, std::shared_ptr<Conn> c) : p_(p), c_(std::move(c)) {}
  void record(std::string detail) override { p_.RecordAct(*rule, std::move(detail)); }
  TcpLink& link() override { return *c_; }
  Rule rule;  // the fault acting now

 private:
  TcpFaultProxy::Impl& p_;
  std::shared_ptr<Conn> c_;
};

// TcpChunk: one chunk read, offered to each fault in force; what they
// decided (cut, delay, hold) is read back by Pump.
class ChunkAct final : public TcpChunk {
 public:
  ChunkAct(TcpFaultProxy::Impl& p, std::shared_ptr<Conn> c, int dir, char* data, std::size_t n)
      : keep(n), p_(p), c_(std::move(c)), dir_(dir), data_(data), read_(n) {}
  void record(std::string detail) override { p_.RecordAct(*rule, std::move(detail)); }
  TcpLink& link() override { return *c_; }
  TcpDirection direction() const override { return dir_ == 0 ? TcpDirection::kUpstream : TcpDirection::kDownstream; }
  std::span<char> bytes() override { return {data_, keep}; }
  std::size_t read_size() const override { return read_; }
  bool first_on_link() override { return !std::exchange(c_->marks[rule->id.load()].seen, true); }
  std::int64_t& counted() override { return c_->marks[rule->id.load()].counted[dir_]; }
  std::any& state() override { return c_->marks[rule->id.load()].state; }
  std::int64_t& tally() override { return rule->tally; }
  void replace(std::string bytes) override {
    replacement_ = std::move(bytes);
    data_ = replacement_.data();
    keep = replacement_.size();
  }
  const char* data() const { return data_; }
  void cut(std::size_t at, std::string detail) override {
    if (cutter && at >= keep) return;
    keep = std::min(at, keep);
    cutter = rule;
    cut_detail = std::move(detail);
  }
  void delay(std::chrono::nanoseconds d) override {
    delay_ns = std::max(delay_ns, d.count());
    delayed_by.push_back(rule);
  }
  void hold() override { held = true; }

  Rule rule;  // the fault acting now
  std::size_t keep;
  Rule cutter;
  std::string cut_detail;
  std::int64_t delay_ns = 0;
  std::vector<Rule> delayed_by;
  bool held = false;

 private:
  TcpFaultProxy::Impl& p_;
  std::shared_ptr<Conn> c_;
  const int dir_;
  char* data_;  // the read buffer, or replacement_
  std::string replacement_;
  const std::size_t read_;
};

}  // namespace

// Copies one direction (0: service -> store, 1: store -> service); the
// faults in force act on every chunk, in arming order (one armed while a
// chunk is held acts on it too), then it is written, queued or cut.
Task TcpFaultProxy::Impl::Pump(std::shared_ptr<Conn> c, int dir) {
  tcp::socket& from = dir == 0 ? c->client : c->upstream;
  tcp::socket& to = dir == 0 ? c->upstream : c->client;
  std::array<char, 16384> buf;
  for (;;) {
    error_code ec;
    std::size_t n = co_await from.async_read_some(asio::buffer(buf), asio::redirect_error(kAwait, ec));
    if (c->ended) co_return;
    if (ec) {
      if (ec == asio::error::eof) {  // pass the half-close on, after what is delayed
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
    ChunkAct chunk(*this, c, dir, buf.data(), n);
    for (Rule rule = NextInForce(0); rule && !closing; rule = NextInForce(rule->id.load())) {
      chunk.rule = rule;
      chunk.held = false;
      rule->fault->on_chunk(chunk);
      // A hold lasts as long as its fault is in force (its window, its heal
      // or the proxy's heal ends that).
      while (chunk.held && !c->ended && !closing && rule->in_force(steady_now_ns())) {
        co_await Sleep(kTick);
        c->last_ns = steady_now_ns();  // held, not idle
      }
      if (c->ended) co_return;
    }
    const std::size_t pass = chunk.keep;
    const auto record_cut = [&] { RecordAct(*chunk.cutter, std::move(chunk.cut_detail)); };
    // Delayed: the chunk waits its turn behind what is held, then its delay.
    if (!chunk.delayed_by.empty() || c->draining[dir]) {
      c->delayed[dir].push_back(Conn::Delayed{std::vector<char>(chunk.data(), chunk.data() + pass),
                                              read_ns + chunk.delay_ns, chunk.cutter != nullptr,
                                              std::move(chunk.delayed_by)});
      c->delayed_bytes[dir] += pass;
      if (!c->draining[dir]) {
        c->draining[dir] = true;
        asio::co_spawn(io, Drain(c, dir), asio::detached);
      }
      if (chunk.cutter) {
        record_cut();
        co_return;  // Drain closes it once the rest is written
      }
      // Bounded: read no more while the held bytes are over the limit.
      while (c->delayed_bytes[dir] > kMaxDelayed && !c->ended && !closing) co_await Sleep(kTick);
      if (c->ended) co_return;
      continue;
    }
    if (pass > 0) {
      c->write_since[dir] = steady_now_ns();
      co_await asio::async_write(to, asio::buffer(chunk.data(), pass), asio::redirect_error(kAwait, ec));
      c->write_since[dir] = 0;
      if (c->ended) co_return;
      if (ec) {
        Close(*c, false);
        co_return;
      }
      (dir == 0 ? up_bytes : down_bytes) += static_cast<std::int64_t>(pass);
    }
    if (chunk.cutter) {
      record_cut();
      Close(*c, false);
      co_return;
    }
  }
}

Task TcpFaultProxy::Impl::Accept() {
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
    auto c = std::make_shared<Conn>(*this, std::move(socket), next_conn++);
    conns[c->serial] = c;
    AcceptAct accept(*this, c);
    for (Rule rule = NextInForce(0); rule && !c->ended; rule = NextInForce(rule->id.load())) {
      accept.rule = rule;
      rule->fault->on_accept(accept);
    }
    if (!c->ended) asio::co_spawn(io, Serve(c), asio::detached);
  }
}

void TcpFaultProxy::Impl::Arm(const Rule& rule) {
  ArmAct arm(*this, rule);
  rule->fault->on_arm(arm);
}

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
    base::MutexLock lock(p.rules_mu);
    rule->id = p.next_rule_id++;
    rule->armed_ns = steady_now_ns();
    p.rules.push_back(rule);
  }
  p.Record(*rule, "start", rule->window ? "in force for " + TcpMillis(*rule->window) : "in force until healed");
  if (p.started && !p.healed) asio::post(p.io, [&p, rule] { p.Arm(rule); });
}

bool TcpFaultProxy::disarm(const std::shared_ptr<TcpFaultRule>& rule) {
  Impl& p = *impl_;
  {
    base::MutexLock lock(p.rules_mu);
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
    base::MutexLock lock(p.rules_mu);
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
