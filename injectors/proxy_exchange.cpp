#include "injectors/proxy_exchange.h"

#include "base/beast_capped_read.h"
#include "injectors/asio_names.h"
#include "injectors/message_framing.h"
#include "injectors/upstream_h2.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace idemproof::injectors {

namespace {
using namespace asio_names;  // asio, beast, http, tcp, error_code, kAwait

HeaderList headers_of(const http::fields& fields) {
  HeaderList out;
  for (const auto& f : fields) out.emplace_back(std::string(f.name_string()), std::string(f.value()));
  return out;
}

}  // namespace

Tracked::Tracked(ProxyLoop& loop, std::function<void()> close) : loop_(loop) {
  if (loop.closing) {
    close();
  } else {
    id_ = ++loop.next_id;
    loop.closers.emplace(id_, std::move(close));
  }
}

Tracked::~Tracked() {
  if (id_) loop_.closers.erase(id_);
}

ProxyLoop::ProxyLoop(ProxySettings s, FaultEventLog* e) : settings(std::move(s)), events(e) {
  if (!settings.upstream_tls) return;
  const TlsOptions& tls = *settings.upstream_tls;
  upstream_tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  error_code ec;
  if (tls.insecure) {
    upstream_tls->set_verify_mode(asio::ssl::verify_none, ec);
  } else {
    upstream_tls->set_verify_mode(asio::ssl::verify_peer, ec);
    if (tls.ca_file.empty()) upstream_tls->set_default_verify_paths(ec);
    else upstream_tls->load_verify_file(tls.ca_file, ec);
  }
  if (ec) upstream_tls_error = "upstream TLS: CA " + tls.ca_file + ": " + ec.message();
  if (settings.upstream_http2) offer_h2(*upstream_tls);
}

void UpstreamConn::close() {
  error_code ec;
  // `tls` stays until the next handshake replaces it: an operation may still
  // be pending on it, and completes with the socket's error.
  stream.socket().close(ec);
  connected = false;
  buffer.clear();
}

RequestSnapshot snapshot(const ProxyRequest& r) {
  return {std::string(r.method_string()), std::string(r.target()), headers_of(r), r.body()};
}

AnswerSnapshot snapshot(const ProxyResponse& r, std::int64_t time_ns) {
  return {static_cast<int>(r.result_int()), headers_of(r), r.body(), time_ns};
}

ProxyResponse gateway_error(const UpstreamAnswer& failed, unsigned version) {
  ProxyResponse r{failed.timed_out ? http::status::gateway_timeout : http::status::bad_gateway, version};
  r.set(http::field::content_type, "text/plain");
  r.set("X-Idemproof-Proxy", "upstream-error");
  r.body() = failed.error;
  r.prepare_payload();
  return r;
}

// The TLS handshake on a fresh upstream connection: SNI (a name, never an
// address) and the certificate checked for the target's name or address.
static ProxyTask<Status> upstream_handshake(ProxyLoop& p, UpstreamConn& c) {
  if (!p.upstream_tls_error.empty()) co_return Status(StatusCode::kUnavailable, p.upstream_tls_error);
  const TlsOptions& tls = *p.settings.upstream_tls;
  const std::string name = tls.NameFor(p.settings.upstream.host);
  c.tls = std::make_unique<asio::ssl::stream<beast::tcp_stream&>>(c.stream, *p.upstream_tls);
  error_code ec;
  asio::ip::make_address(name, ec);
  if (ec) SSL_set_tlsext_host_name(c.tls->native_handle(), name.c_str());
  if (!tls.insecure) c.tls->set_verify_callback(asio::ssl::rfc2818_verification(name), ec);
  ec = {};
  co_await c.tls->async_handshake(asio::ssl::stream_base::client, asio::redirect_error(kAwait, ec));
  if (ec) co_return Status(StatusCode::kUnavailable, "upstream TLS handshake: " + ec.message());
  if (p.settings.upstream_http2) {
    if (std::string refused = h2_refusal(c.tls->native_handle()); !refused.empty())
      co_return Status(StatusCode::kUnavailable, refused);
  }
  co_return Status::Ok();
}

// The egress record of one request written upstream, once its answer is read
// or lost; nothing when no one keeps the record.
static void keep_record(ProxyLoop& p, const ProxyRequest& req, std::int64_t written_ns, const UpstreamAnswer& a) {
  if (!p.settings.on_exchange) return;
  UpstreamExchange record{snapshot(req), std::nullopt, a.error, a.timed_out, written_ns};
  if (a.response) record.answer = snapshot(*a.response, a.done_ns);
  p.settings.on_exchange(record);
}

ProxyTask<UpstreamAnswer> send_upstream(ProxyLoop& p, UpstreamConn& c, ProxyRequest req) {
  UpstreamAnswer out;
  error_code ec;
  if (p.closing) {
    out.error = "proxy is healing";
    co_return out;
  }
  // HTTP/2: a fresh connection per exchange (upstream_h2.h).
  const bool h2 = p.settings.upstream_http2;
  if (h2) c.close();
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
    if (p.upstream_tls) {
      Status shaken = co_await upstream_handshake(p, c);
      if (!shaken.ok()) {
        out.error = shaken.message();
        c.close();
        co_return out;
      }
    }
    c.connected = true;
  }
  const bool head = req.method() == http::verb::head;
  FrameForRelay(req, /*keep_alive=*/true);
  c.stream.expires_after(p.settings.upstream_timeout);
  if (h2) {
    H2Exchange x = co_await exchange_h2(p, c, req);
    c.close();
    if (x.written) {
      ++p.sends;
      keep_record(p, req, x.written_ns, x.answer);
    }
    co_return std::move(x.answer);
  }
  if (c.tls) co_await http::async_write(*c.tls, req, asio::redirect_error(kAwait, ec));
  else co_await http::async_write(c.stream, req, asio::redirect_error(kAwait, ec));
  if (ec) {
    out.error = "upstream write: " + ec.message();
    out.timed_out = ec == beast::error::timeout;
    c.close();
    co_return out;
  }
  ++p.sends;
  const std::int64_t written_ns = steady_now_ns();
  http::response_parser<http::string_body> parser;
  parser.body_limit(p.settings.body_limit);
  if (head) parser.skip(true);
  if (c.tls) co_await async_read_capped(*c.tls, c.buffer, parser, asio::redirect_error(kAwait, ec));
  else co_await async_read_capped(c.stream, c.buffer, parser, asio::redirect_error(kAwait, ec));
  if (ec) {
    out.error = "upstream read: " + ec.message();
    out.timed_out = ec == beast::error::timeout;
    c.close();
    keep_record(p, req, written_ns, out);
    co_return out;
  }
  c.stream.expires_never();
  out.response = parser.release();
  out.done_ns = steady_now_ns();
  keep_record(p, req, written_ns, out);
  if (!out.response->keep_alive()) c.close();
  co_return out;
}

ProxyTask<bool> answer_client(ProxyLoop& p, beast::tcp_stream& client, ProxyResponse res,
                              bool keep_alive) {
  FrameForRelay(res, keep_alive);
  error_code ec;
  client.expires_after(p.settings.upstream_timeout);
  co_await http::async_write(client, res, asio::redirect_error(kAwait, ec));
  client.expires_never();
  co_return !ec;
}

ProxyTask<void> sleep_for(ProxyLoop& p, std::chrono::nanoseconds d) {
  if (p.closing) co_return;
  asio::steady_timer timer(p.io);
  Tracked tracked(p, [&timer] { timer.cancel(); });
  timer.expires_after(d);
  error_code ec;
  co_await timer.async_wait(asio::redirect_error(kAwait, ec));
}

void close_client(beast::tcp_stream& client, bool reset) {
  error_code ec;
  if (reset) {
    client.socket().set_option(asio::socket_base::linger(true, 0), ec);
  } else {
    client.socket().shutdown(tcp::socket::shutdown_both, ec);
  }
  client.socket().close(ec);
}

ProxyExchange::ProxyExchange(ProxyLoop& loop, beast::tcp_stream& client, UpstreamConn& primary,
                             ProxyRequest request, FaultEvent event)
    : loop_(loop),
      client_(client),
      primary_(primary),
      request_(std::move(request)),
      version_(request_.version()),
      keep_alive_(request_.keep_alive()),
      event_(std::move(event)) {}

}  // namespace idemproof::injectors
