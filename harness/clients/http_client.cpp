#include "clients/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string_view>

#include "base/steady_clock.h"
#include "clients/kept_budget.h"

namespace idemproof::runtime {

namespace {

std::once_flag curl_init_once;

void ensure_curl_initialised() {
  std::call_once(curl_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// Per-transfer state that curl's callbacks write into.
struct Transfer {
  HttpExchange exchange;
  const std::atomic<bool>* cancel = nullptr;
  curl_slist* header_list = nullptr;
  curl_slist* connect_to = nullptr;  // tls.server_name: the name's connection goes to the URL's host
  int attempts = 0;  // CURLOPT_PREREQFUNCTION calls: the request went onto a connection
  char error_text[CURL_ERROR_SIZE] = {};  // CURLOPT_ERRORBUFFER: libcurl's own words

  ~Transfer() {
    curl_slist_free_all(header_list);
    curl_slist_free_all(connect_to);
  }
};

// The cap of each of `n` requests like `first` sent at once: max_body, or
// less when their KeptBudget is short.
std::size_t CapOf(const OutgoingRequest& first, std::size_t n) {
  return first.kept != nullptr ? first.kept->Reserve(n, first.max_body) : first.max_body;
}

// Sets the exchange's cap before the transfer (on_body reads it there).
void Cap(HttpExchange& e, std::size_t cap) {
  if (e.request.kept != nullptr) e.request.max_body = std::min(cap, e.request.max_body);
}

// After the transfer: gives back to the budget what the answer did not keep,
// marks a cut the budget made, and puts max_body back as asked.
void Settle(HttpExchange& e, std::size_t cap, std::size_t max_body) {
  if (e.request.kept == nullptr) return;
  e.request.kept->Release(cap, e.response_body.size());
  e.body_cut_by_kept = e.body_truncated && e.request.max_body < max_body;
  e.request.max_body = max_body;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  HttpExchange& e = t->exchange;
  const size_t n = size * count;
  const size_t room = e.request.max_body - std::min(e.request.max_body, e.response_body.size());
  if (n <= room) {
    e.response_body.append(data, n);
    return n;
  }
  e.response_body.append(data, room);
  e.body_truncated = true;
  e.body_size = e.response_body.size() + (n - room);
  return 0;  // aborts the transfer (CURLE_WRITE_ERROR): an endless body ends here
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line: drop the headers of an interim (1xx) answer.
    t->exchange.response_headers.clear();
    return size * count;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->exchange.response_headers.emplace_back(std::string(trim(line.substr(0, colon))),
                                              std::string(trim(line.substr(colon + 1))));
  }
  return size * count;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return (t->cancel != nullptr && t->cancel->load()) ? 1 : 0;
}

int on_prereq(void* user, char*, char*, int, int) {
  ++static_cast<Transfer*>(user)->attempts;
  return CURL_PREREQFUNC_OK;
}

// An https:// request's TLS checks (the target file's tls:); verification
// stays on (libcurl's default) unless insecure.
void configure_tls(CURL* curl, Transfer& t) {
  const OutgoingRequest& r = t.exchange.request;
  const TlsOptions& tls = r.tls;
  if (tls.insecure) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!tls.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, tls.ca_file.c_str());
  }
  if (tls.server_name.empty()) return;
  // The URL names server_name (SNI, the name checked, Host), CONNECT_TO
  // sends its connection to the address the URL gave.
  CURLU* url = curl_url();
  char* host = nullptr;
  char* port = nullptr;
  if (curl_url_set(url, CURLUPART_URL, r.url().c_str(), 0) == CURLUE_OK &&
      curl_url_get(url, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
      curl_url_get(url, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
      curl_url_set(url, CURLUPART_HOST, tls.server_name.c_str(), 0) == CURLUE_OK) {
    const std::string rule = tls.server_name + ":" + port + ":" + host + ":" + port;
    t.connect_to = curl_slist_append(t.connect_to, rule.c_str());
    curl_easy_setopt(curl, CURLOPT_CONNECT_TO, t.connect_to);
    char* renamed = nullptr;
    if (curl_url_get(url, CURLUPART_URL, &renamed, 0) == CURLUE_OK) {
      curl_easy_setopt(curl, CURLOPT_URL, renamed);
      curl_free(renamed);
    }
  }
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(url);
}

void configure(CURL* curl, Transfer& t) {
  const OutgoingRequest& r = t.exchange.request;
  const HttpRequest& m = r.message;
  curl_easy_setopt(curl, CURLOPT_URL, r.url().c_str());  // libcurl copies it
  if (r.origin.rfind("https://", 0) == 0) configure_tls(curl, t);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, t.error_text);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max<std::int64_t>(1, r.timeout.count())));
  curl_easy_setopt(curl, CURLOPT_PREREQFUNCTION, on_prereq);
  curl_easy_setopt(curl, CURLOPT_PREREQDATA, &t);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  // The handle is reused: the version is set on every request.
  const long version = r.http_version != 2                     ? CURL_HTTP_VERSION_1_1
                       : r.origin.rfind("https://", 0) == 0 ? CURL_HTTP_VERSION_2TLS
                                                             : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, version);
  // libcurl 7.88 breaks a reused h2c prior-knowledge connection ("Error in
  // the HTTP2 framing layer" on the second request, curl's CLI too): h2c
  // requests each get their own connection (ALPN h2 over TLS reuses fine).
  const long fresh = version == CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE ? 1L : 0L;
  curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, fresh);
  curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, fresh);
  curl_easy_setopt(curl, CURLOPT_PROXY, "");  // never through an environment proxy

  if (m.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (m.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, m.method.c_str());
  }
  if (!m.body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(m.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, m.body.data());
  }

  // No "Expect: 100-continue" round trip; no default form content type.
  t.header_list = curl_slist_append(t.header_list, "Expect:");
  bool has_content_type = false;
  for (const auto& [name, value] : m.headers) {
    if (equals_ignoring_case(name, "Content-Type")) has_content_type = true;
    std::string line = value.empty() ? name + ";" : name + ": " + value;
    t.header_list = curl_slist_append(t.header_list, line.c_str());
  }
  if (!m.body.empty() && !has_content_type) {
    t.header_list = curl_slist_append(t.header_list, "Content-Type: application/octet-stream");
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, t.header_list);
}

// The handshake's reason in libcurl's words ("SSL certificate problem: ...").
std::string TlsErrorDetail(const Transfer& t) {
  return t.error_text[0] != '\0' ? std::string(" (") + t.error_text + ")" : "";
}

// Classifies a finished transfer. A refused connection is the only failure
// that proves the request never left; everything else after the connect may
// have reached the target.
void finish(CURL* curl, CURLcode code, Transfer& t) {
  HttpExchange& e = t.exchange;
  e.end_ns = monotonic_ns();
  long connects = 0;
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
  e.connection_reused = (connects == 0 && code == CURLE_OK);
  e.send_attempts = t.attempts;
  if (code == CURLE_WRITE_ERROR && e.body_truncated) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t length = -1;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length > 0 && static_cast<std::uint64_t>(length) >= e.body_size) {
      e.body_size = static_cast<std::uint64_t>(length);
      e.body_size_exact = true;
    }
    e.status = static_cast<int>(status);
    e.outcome = HttpOutcome::kAnswered;
    return;
  }
  if (code == CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    e.status = static_cast<int>(status);
    e.outcome = HttpOutcome::kAnswered;
    return;
  }
  e.error = curl_easy_strerror(code);
  if (code == CURLE_ABORTED_BY_CALLBACK) e.error = "cancelled";
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      e.outcome = HttpOutcome::kNotSent;
      break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      // The handshake failed before any request byte: nothing went out.
      e.outcome = HttpOutcome::kNotSent;
      e.tls_refused = true;
      e.error = "TLS: " + e.error + TlsErrorDetail(t);
      break;
    case CURLE_OPERATION_TIMEDOUT: {
      // A timeout before the connection was up means nothing was sent.
      curl_off_t connect_us = 0;
      curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_us);
      e.outcome = connect_us == 0 ? HttpOutcome::kNotSent : HttpOutcome::kNoAnswer;
      break;
    }
    default:
      e.outcome = HttpOutcome::kNoAnswer;
  }
  if (e.outcome == HttpOutcome::kNotSent && t.attempts > 0) {
    // It had gone onto a connection: it may have reached the target.
    e.outcome = HttpOutcome::kNoAnswer;
    e.error += SentBeforeFailureNote(t.attempts, connects);
  }
  e.status = 0;
}

}  // namespace

std::string SentBeforeFailureNote(int attempts, long new_connections) {
  if (attempts <= 0) return "";
  if (attempts > new_connections)  // one attempt went onto a connection kept from before
    return " (on libcurl's resend: the request had gone out on a reused connection that closed)";
  return " (after the request had gone out on a new connection)";
}

void OutgoingRequest::set_url(const std::string& url) {
  const std::size_t path = TargetStart(url);
  origin = url.substr(0, path);
  message.target = url.substr(path);
}

const char* to_string(HttpOutcome outcome) {
  switch (outcome) {
    case HttpOutcome::kAnswered: return "answered";
    case HttpOutcome::kNoAnswer: return "no_answer";
    case HttpOutcome::kNotSent: return "not_sent";
  }
  return "?";
}

std::optional<std::string> HttpExchange::response_header(const std::string& name) const {
  return find_header(response_headers, name);
}

std::int64_t monotonic_ns() { return steady_now_ns(); }

struct HttpClient::Easy {
  CURL* handle = nullptr;
  Easy() : handle(curl_easy_init()) {}
  ~Easy() {
    if (handle != nullptr) curl_easy_cleanup(handle);
  }
};

HttpClient::HttpClient(const std::atomic<bool>* cancel) : cancel_(cancel) {
  ensure_curl_initialised();
  easy_ = std::make_unique<Easy>();
}

HttpClient::~HttpClient() = default;

HttpExchange HttpClient::send(const OutgoingRequest& request) {
  Transfer t;
  t.exchange.request = request;
  t.cancel = cancel_;
  t.exchange.start_ns = monotonic_ns();
  if (cancel_ != nullptr && cancel_->load()) {
    t.exchange.end_ns = t.exchange.start_ns;
    t.exchange.outcome = HttpOutcome::kNotSent;
    t.exchange.error = "cancelled";
    return std::move(t.exchange);
  }
  const std::size_t cap = CapOf(request, 1);
  Cap(t.exchange, cap);
  curl_easy_reset(easy_->handle);  // keeps the connection cache
  configure(easy_->handle, t);
  CURLcode code = curl_easy_perform(easy_->handle);
  finish(easy_->handle, code, t);
  Settle(t.exchange, cap, request.max_body);
  return std::move(t.exchange);
}

HttpExchange HttpClient::connect_only(const OutgoingRequest& request) {
  Transfer t;
  t.exchange.request = request;
  t.cancel = cancel_;
  t.exchange.start_ns = monotonic_ns();
  curl_easy_reset(easy_->handle);
  configure(easy_->handle, t);
  curl_easy_setopt(easy_->handle, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(easy_->handle, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(easy_->handle, CURLOPT_FORBID_REUSE, 1L);
  CURLcode code = curl_easy_perform(easy_->handle);
  finish(easy_->handle, code, t);
  if (code == CURLE_OK) t.exchange.error.clear();
  t.exchange.outcome = HttpOutcome::kNotSent;  // no request went out
  t.exchange.status = 0;
  return std::move(t.exchange);
}

std::vector<HttpExchange> HttpClient::send_concurrently(const std::vector<OutgoingRequest>& requests) {
  std::vector<std::unique_ptr<Transfer>> transfers;
  std::vector<CURL*> handles;
  if (requests.empty()) return {};
  const std::size_t cap = CapOf(requests.front(), requests.size());
  CURLM* multi = curl_multi_init();
  for (const auto& r : requests) {
    auto t = std::make_unique<Transfer>();
    t->exchange.request = r;
    Cap(t->exchange, cap);
    t->cancel = cancel_;
    CURL* h = curl_easy_init();
    configure(h, *t);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_PRIVATE, t.get());
    handles.push_back(h);
    transfers.push_back(std::move(t));
  }
  const bool cancelled_before = cancel_ != nullptr && cancel_->load();
  const std::int64_t start = monotonic_ns();
  for (size_t i = 0; i < handles.size(); ++i) {
    transfers[i]->exchange.start_ns = start;
    if (!cancelled_before) curl_multi_add_handle(multi, handles[i]);
  }
  if (cancelled_before) {
    for (auto& t : transfers) {
      t->exchange.end_ns = start;
      t->exchange.error = "cancelled";
    }
  } else {
    int running = static_cast<int>(handles.size());
    while (running > 0) {
      if (curl_multi_perform(multi, &running) != CURLM_OK) break;
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        Transfer* t = nullptr;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
        finish(msg->easy_handle, msg->data.result, *t);
      }
      if (running > 0) curl_multi_poll(multi, nullptr, 0, 50, nullptr);
    }
    // Every transfer has its own timeout, so the loop ends; anything that did
    // not report (multi error) counts as unanswered.
    for (auto& t : transfers) {
      if (t->exchange.end_ns == 0) {
        t->exchange.end_ns = monotonic_ns();
        t->exchange.outcome = HttpOutcome::kNoAnswer;
        t->exchange.error = "transfer did not complete";
      }
    }
  }
  for (CURL* h : handles) {
    curl_multi_remove_handle(multi, h);
    curl_easy_cleanup(h);
  }
  curl_multi_cleanup(multi);
  std::vector<HttpExchange> out;
  out.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    Settle(transfers[i]->exchange, cap, requests[i].max_body);
    out.push_back(std::move(transfers[i]->exchange));
  }
  return out;
}

}  // namespace idemproof::runtime
