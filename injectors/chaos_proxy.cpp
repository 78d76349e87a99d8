// The proxy's sessions are C++20 coroutines on one io_context run by one
// thread: every session, timer and upstream leg lives on that thread, so the
// bookkeeping in ProxyLoop (closers, `closing`) needs no locks. Only the
// armed rules and the counters are shared with the caller's thread. What a
// fault does to an exchange is in proxy_faults/, one file per fault.
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange

#include "injectors/chaos_proxy.h"

#include <exception>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "base/beast_capped_read.h"
#include "base/thread_annotations.h"
#include "injectors/asio_names.h"
#include "injectors/proxy_listener.h"
#include "injectors/fault_event.h"
#include "injectors/proxy_exchange.h"
#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

namespace {
using namespace asio_names;  // asio, beast, http, tcp, error_code, kAwait
}  // namespace

// ProxyLoop first: its io_context outlives the acceptor and the work guard,
// and the counters and closers outlive the io_context.
struct ChaosProxy::Impl : ProxyLoop {
  Impl(ProxySettings s, FaultEventLog* e) : ProxyLoop(std::move(s), e) {}

  Endpoint bound;
  bool started = false;
  bool healed = false;
  std::promise<void> stopped;
  std::thread thread;

  base::Mutex rules_mu;
  std::vector<std::shared_ptr<ProxyFaultRule>> rules GUARDED_BY(rules_mu);

  tcp::acceptor acceptor{io};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;

  std::shared_ptr<ProxyFaultRule> pick(const ProxyRequest& req) {
    base::MutexLock lock(rules_mu);
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
};

namespace {

using Impl = ChaosProxy::Impl;

// The event of a fault that fired, stamped before the fault acts.
FaultEvent injected_event(const ProxyFaultRule& rule, const ProxyRequest& req) {
  FaultEvent ev;
  ev.time_ns = steady_now_ns();
  ev.fault = rule.fault->kind();
  ev.name = rule.selector.settings().name;
  ev.phase = "injected";
  ev.request = snapshot(req);
  return ev;
}

ProxyTask<bool> forward(Impl& p, beast::tcp_stream& client, UpstreamConn& primary, ProxyRequest req,
                        bool keep_alive) {
  const unsigned version = req.version();
  RequestSnapshot shot = snapshot(req);
  UpstreamAnswer ex = co_await send_upstream(p, primary, std::move(req));
  if (ex.response) co_return co_await answer_client(p, client, std::move(*ex.response), keep_alive);
  FaultEvent ev;
  ev.time_ns = steady_now_ns();
  ev.fault = "upstream-error";
  ev.name = "upstream-error";
  ev.phase = "error";
  ev.detail = ex.error;
  ev.request = std::move(shot);
  ev.upstream_sends = 1;
  ProxyResponse res = gateway_error(ex, version);
  ev.client_answer = snapshot(res, steady_now_ns());
  p.record(std::move(ev));
  if (!p.closing) co_await answer_client(p, client, std::move(res), false);
  co_return false;
}

ProxyTask<void> session(Impl& p, tcp::socket socket) {
  ++p.open;
  struct OpenCount {
    ProxyLoop& p;
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
    co_await async_read_capped(client, buffer, parser, asio::redirect_error(kAwait, ec));
    if (ec) break;
    client.expires_never();
    ++p.requests;
    ProxyRequest req = parser.release();
    const bool keep_alive = req.keep_alive();
    std::shared_ptr<ProxyFaultRule> rule = p.pick(req);
    bool go_on = false;
    if (rule) {
      ++p.injected;
      FaultEvent ev = injected_event(*rule, req);
      ProxyExchange exchange(p, client, primary, std::move(req), std::move(ev));
      go_on = co_await rule->fault->act(exchange);
    } else {
      go_on = co_await forward(p, client, primary, std::move(req), keep_alive);
    }
    if (!go_on || !keep_alive) break;
  }
  close_client(client, /*reset=*/false);
}

ProxyTask<void> accept_loop(Impl& p) {
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
  auto listener = OpenProxyListener(p.acceptor, p.settings.listen, p.settings.upstream);
  if (!listener.ok()) return listener.status();
  p.upstream = listener->upstream;
  p.bound = listener->bound;
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
  base::MutexLock lock(impl_->rules_mu);
  impl_->rules.push_back(std::move(rule));
}

void ChaosProxy::disarm(const std::shared_ptr<ProxyFaultRule>& rule) {
  base::MutexLock lock(impl_->rules_mu);
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
  base::MutexLock lock(p.rules_mu);
  p.rules.clear();
  return drained;
}

ProxyCounters ChaosProxy::counters() const {
  const Impl& p = *impl_;
  return ProxyCounters{p.accepted.load(), p.open.load(), p.requests.load(), p.sends.load(),
                       p.injected.load()};
}

}  // namespace idemproof::injectors
