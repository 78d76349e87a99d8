#include "injectors/upstream_h2.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <nghttp2/nghttp2.h>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>

#include "base/header_list.h"
#include "injectors/asio_names.h"

namespace idemproof::injectors {

namespace {
using namespace asio_names;  // asio, beast, http, tcp, error_code, kAwait

// The one stream's state, filled in by nghttp2's callbacks.
struct H2State {
  nghttp2_session* session = nullptr;
  std::int32_t stream_id = -1;
  const std::string* body = nullptr;
  std::size_t body_sent = 0;
  std::size_t body_limit = 0;
  bool headers_queued = false;  // our HEADERS frame went into the send buffer
  bool end_queued = false;      // and the request's last frame (END_STREAM)
  int status = 0;               // the final (>= 200) answer's status; 0 until it came
  bool interim = false;         // the header block being read is a 1xx answer's
  bool final_headers_done = false;
  HeaderList headers;
  std::string data;
  bool cut = false;  // the answer's body went past body_limit
  bool closed = false;
  std::uint32_t error_code = 0;

  ~H2State() {
    if (session != nullptr) nghttp2_session_del(session);
  }
};

ssize_t ReadBody(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                 nghttp2_data_source* source, void*) {
  auto* s = static_cast<H2State*>(source->ptr);
  const std::size_t n = std::min(length, s->body->size() - s->body_sent);
  std::memcpy(buf, s->body->data() + s->body_sent, n);
  s->body_sent += n;
  if (s->body_sent == s->body->size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

int OnFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* s = static_cast<H2State*>(user);
  if (frame->hd.stream_id != s->stream_id) return 0;
  if (frame->hd.type == NGHTTP2_HEADERS) s->headers_queued = true;
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) s->end_queued = true;
  return 0;
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
             const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
  auto* s = static_cast<H2State*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != s->stream_id) return 0;
  if (s->final_headers_done) return 0;  // trailers: an HTTP/1.1 answer framed by length carries none
  const std::string n(reinterpret_cast<const char*>(name), namelen);
  std::string v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":status") {
    const int status = std::atoi(v.c_str());
    s->interim = status < 200;
    if (!s->interim) s->status = status;
  } else if (!n.empty() && n[0] != ':' && !s->interim) {
    s->headers.emplace_back(n, std::move(v));
  }
  return 0;
}

int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* s = static_cast<H2State*>(user);
  if (frame->hd.type == NGHTTP2_HEADERS && frame->hd.stream_id == s->stream_id && s->status >= 200)
    s->final_headers_done = true;
  return 0;
}

int OnData(nghttp2_session* session, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len,
           void* user) {
  auto* s = static_cast<H2State*>(user);
  if (id != s->stream_id || s->cut) return 0;
  if (s->data.size() + len > s->body_limit) {
    s->cut = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    return 0;
  }
  s->data.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int OnClose(nghttp2_session*, std::int32_t id, std::uint32_t error_code, void* user) {
  auto* s = static_cast<H2State*>(user);
  if (id != s->stream_id) return 0;
  s->closed = true;
  s->error_code = error_code;
  return 0;
}

// Everything the session has to send, serialized.
std::string Pending(nghttp2_session* session, std::string* error) {
  std::string out;
  for (;;) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session, &data);
    if (n < 0) {
      *error = std::string("upstream HTTP/2: ") + nghttp2_strerror(static_cast<int>(n));
      break;
    }
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
  }
  return out;
}

nghttp2_nv Nv(const std::string& name, const std::string& value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

void offer_h2(asio::ssl::context& ctx) {
  static const unsigned char kH2[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.native_handle(), kH2, sizeof kH2);
}

std::string h2_refusal(SSL* ssl) {
  const unsigned char* selected = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(ssl, &selected, &length);
  const std::string chosen(reinterpret_cast<const char*>(selected), selected == nullptr ? 0 : length);
  if (chosen == "h2") return "";
  return "upstream TLS: the target says http: 2 but its server did not select h2 in ALPN (" +
         (chosen.empty() ? std::string("it selected no protocol") : "it selected " + chosen) + ")";
}

ProxyTask<H2Exchange> exchange_h2(ProxyLoop& p, UpstreamConn& c, const ProxyRequest& req) {
  H2Exchange x;
  UpstreamAnswer& out = x.answer;
  H2State st;
  st.body = &req.body();
  st.body_limit = p.settings.body_limit;

  nghttp2_session_callbacks* cbs = nullptr;
  if (nghttp2_session_callbacks_new(&cbs) != 0) {
    out.error = "upstream HTTP/2: out of memory";
    co_return x;
  }
  nghttp2_session_callbacks_set_on_frame_send_callback(cbs, OnFrameSend);
  nghttp2_session_callbacks_set_on_header_callback(cbs, OnHeader);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrameRecv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, OnClose);
  const int made = nghttp2_session_client_new(&st.session, cbs, &st);
  nghttp2_session_callbacks_del(cbs);
  if (made != 0) {
    out.error = std::string("upstream HTTP/2: ") + nghttp2_strerror(made);
    co_return x;
  }
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
  nghttp2_submit_settings(st.session, NGHTTP2_FLAG_NONE, settings, 1);

  HeaderList headers;
  for (const auto& f : req) headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  const auto method = req.method_string();
  const auto target = req.target();
  const HeaderList fields = http2_request_fields({method.data(), method.size()}, c.tls ? "https" : "http",
                                                 p.settings.upstream.to_string(), {target.data(), target.size()},
                                                 headers, req.body().size());
  std::vector<nghttp2_nv> nva;
  for (const auto& [n, v] : fields) nva.push_back(Nv(n, v));
  nghttp2_data_provider provider{};
  provider.source.ptr = &st;
  provider.read_callback = ReadBody;
  st.stream_id = nghttp2_submit_request(st.session, nullptr, nva.data(), nva.size(),
                                        req.body().empty() ? nullptr : &provider, nullptr);
  if (st.stream_id < 0) {
    out.error = std::string("upstream HTTP/2 request not submitted: ") + nghttp2_strerror(st.stream_id);
    co_return x;
  }

  // Write what the session has, then read what the server sends, until our
  // stream closes. Sequential is enough for one stream: the server reads
  // while it writes, and a body beyond the flow-control window goes on after
  // its WINDOW_UPDATE is read. Every operation ends by the stream's expiry.
  std::array<char, 16384> buf;
  error_code ec;
  bool ended = false;  // the request's last frame was written
  while (!st.closed) {
    const std::string pending = Pending(st.session, &out.error);
    if (!out.error.empty()) co_return x;
    if (!pending.empty()) {
      if (c.tls) co_await asio::async_write(*c.tls, asio::buffer(pending), asio::redirect_error(kAwait, ec));
      else co_await asio::async_write(c.stream, asio::buffer(pending), asio::redirect_error(kAwait, ec));
      if (ec) {
        out.error = "upstream write: " + ec.message();
        out.timed_out = ec == beast::error::timeout;
        co_return x;
      }
      if (st.headers_queued && (!x.written || (st.end_queued && !ended))) x.written_ns = steady_now_ns();
      x.written = st.headers_queued;
      ended = st.end_queued;
    }
    if (st.closed) break;
    if (!nghttp2_session_want_read(st.session)) {
      out.error = "upstream HTTP/2: the connection ended before the answer";
      co_return x;
    }
    std::size_t n = 0;
    if (c.tls) n = co_await c.tls->async_read_some(asio::buffer(buf), asio::redirect_error(kAwait, ec));
    else n = co_await c.stream.async_read_some(asio::buffer(buf), asio::redirect_error(kAwait, ec));
    if (ec) {
      out.error = "upstream read: " + ec.message();
      out.timed_out = ec == beast::error::timeout;
      co_return x;
    }
    const ssize_t used = nghttp2_session_mem_recv(st.session, reinterpret_cast<const std::uint8_t*>(buf.data()), n);
    if (used < 0) {
      out.error = std::string("upstream HTTP/2: ") + nghttp2_strerror(static_cast<int>(used));
      co_return x;
    }
  }
  if (st.cut) {
    out.error = "upstream read: body limit exceeded";
    co_return x;
  }
  if (st.status < 200 || st.error_code != NGHTTP2_NO_ERROR) {
    out.error = std::string("upstream HTTP/2: the stream was closed (") + nghttp2_http2_strerror(st.error_code) +
                (st.status < 200 ? ") before an answer" : ") before the answer's end");
    co_return x;
  }
  ProxyResponse response;
  response.version(11);
  response.result(static_cast<unsigned>(st.status));
  for (auto& [n, v] : st.headers) response.insert(n, v);
  response.body() = std::move(st.data);
  out.response = std::move(response);
  out.done_ns = steady_now_ns();
  co_return x;
}

}  // namespace idemproof::injectors
