// HttpClient: the harness's way of talking HTTP/1.1 to a target, over libcurl.
//
// A request goes out with a deadline, and whatever happens comes back as an
// HttpExchange: the request as sent, the answer (status, headers, body), the
// steady-clock start and end, whether an already open connection was reused,
// and an outcome. The outcome keeps apart three things an idempotency checker
// must never confuse:
//   kAnswered  an HTTP answer arrived (any status: judging it is the oracles' job);
//   kNoAnswer  the request may have reached the target but no complete answer
//              came back (timeout, reset, cancelled): the outcome is unknown;
//   kNotSent   the request certainly never reached the target (connection refused).
// A body longer than the request's max_body is cut there and the transfer
// aborted: still kAnswered (status and headers came), with body_truncated.
// A request with a run's KeptBudget (kept_budget.h) keeps no more than the
// budget gives it (at least its first KiBs); cut by it, body_cut_by_kept.
// libcurl silently sends a request again on a new connection when a reused
// one closes before any answer byte; send_attempts counts every time the
// request went onto a connection, so a request that went out and was then
// refused on the resend is kNoAnswer, never kNotSent, and a resend that got
// answered is visible (send_attempts 2) rather than a hidden duplicate.
// A failure of the target is data in the exchange, never an exception.
//
// Thread-safety: an HttpClient is used by one thread at a time (it keeps one
// curl easy handle so keep-alive connections are reused between send() calls).
// Different HttpClient objects may be used from different threads at once.
#ifndef IDEMPROOF_HARNESS_RUNTIME_HTTP_CLIENT_H_
#define IDEMPROOF_HARNESS_RUNTIME_HTTP_CLIENT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/header_list.h"
#include "base/http_message.h"
#include "base/tls_options.h"

namespace idemproof::runtime {

class KeptBudget;

// Header name/value pairs in the order sent or received (names as written).
using HttpHeaders = HeaderList;  // base/header_list.h

// An HTTP request on its way to a target: the message (base/http_message.h:
// method, origin-form target, headers, body; an empty body is sent as none),
// the origin it goes to, and the limits the client sends it under.
struct OutgoingRequest {
  std::string origin;   // scheme and authority: "http://127.0.0.1:PORT"
  HttpRequest message;  // method GET unless set
  std::chrono::milliseconds timeout{10000};  // whole exchange, connect included
  // The most of the answer body kept; once more arrives the transfer is
  // aborted and the answer recorded truncated (an endless body ends here).
  std::size_t max_body = kDefaultMaxBody;
  // The run's budget of kept body bytes, shared by its requests (may be
  // null: max_body alone); must outlive the send.
  KeptBudget* kept = nullptr;
  // How an https:// origin's certificate is checked (ignored for http://).
  // With tls.server_name the URL's host is replaced by that name (SNI, the
  // name verified and the Host header) while the connection still goes to
  // the URL's address.
  TlsOptions tls;
  // 2: HTTP/2 (h2c by prior knowledge on http://, ALPN h2 on https://); else HTTP/1.1.
  int http_version = 1;
  static constexpr std::size_t kDefaultMaxBody = std::size_t{4} << 20;

  // The absolute URL: origin + message.target ("http://127.0.0.1:PORT/path?query").
  std::string url() const { return origin + message.target; }
  // Sets origin and message.target from an absolute URL, cut where its path
  // starts (no "://": all of it is the target), so url() gives `url` back as is.
  void set_url(const std::string& url);
};

enum class HttpOutcome { kAnswered, kNoAnswer, kNotSent };

// "answered" / "no_answer" / "not_sent".
const char* to_string(HttpOutcome outcome);

// What is added to the error of a request that went onto a connection
// `attempts` times (CURLOPT_PREREQFUNCTION) over `new_connections` fresh
// connects (CURLINFO_NUM_CONNECTS) before it failed: a reused connection is
// named only when one was used (attempts > new_connections).
std::string SentBeforeFailureNote(int attempts, long new_connections);

struct HttpExchange {
  OutgoingRequest request;
  HttpOutcome outcome = HttpOutcome::kNotSent;
  int status = 0;  // 0 unless answered
  HttpHeaders response_headers;  // of the final answer (1xx interim answers dropped)
  std::string response_body;  // at most request.max_body bytes
  // The body went past max_body: response_body holds its first max_body
  // bytes; body_size is its Content-Length when declared (body_size_exact),
  // else the bytes read before the abort (a lower bound).
  bool body_truncated = false;
  std::uint64_t body_size = 0;
  bool body_size_exact = false;
  // The cut came before max_body: the run's KeptBudget was short.
  bool body_cut_by_kept = false;
  std::string error;  // why there is no answer; empty when answered
  std::int64_t start_ns = 0;  // steady clock, see monotonic_ns()
  std::int64_t end_ns = 0;
  bool connection_reused = false;  // no new connection was opened for this request
  int send_attempts = 0;           // times the request was put on a connection (see above)
  // The TLS handshake failed (certificate not trusted, wrong name, no TLS
  // peer): kNotSent, nothing was sent in clear; error says why.
  bool tls_refused = false;

  // First response header with this name (case-insensitive), if any.
  std::optional<std::string> response_header(const std::string& name) const;
};

// Nanoseconds on the steady clock: the time base of every exchange and event
// (base/steady_clock.h's, the clock the injectors and the reference use).
std::int64_t monotonic_ns();

class HttpClient {
 public:
  // `cancel` (may be null, must outlive the client): when it becomes true,
  // requests in flight are abandoned within ~100 ms and end as kNoAnswer
  // ("cancelled"), and new ones are not sent (kNotSent).
  explicit HttpClient(const std::atomic<bool>* cancel = nullptr);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request on this client's connection (reused when still open).
  HttpExchange send(const OutgoingRequest& request);

  // Connects to request.origin and, for https://, shakes hands as
  // request.tls says; sends no request and closes the connection. outcome
  // is kNotSent either way: error "" when the connection came up, else why
  // (tls_refused when the handshake failed).
  HttpExchange connect_only(const OutgoingRequest& request);

  // Sends every request at once, each on its own new connection (curl multi,
  // one thread): a naive concurrent burst. Results are in the order of
  // `requests`. Each request keeps its own deadline.
  // REQUIRES: every request has the same `kept`, and when set the same max_body.
  std::vector<HttpExchange> send_concurrently(const std::vector<OutgoingRequest>& requests);

 private:
  struct Easy;
  const std::atomic<bool>* cancel_;
  std::unique_ptr<Easy> easy_;
};

}  // namespace idemproof::runtime

#endif  // IDEMPROOF_HARNESS_RUNTIME_HTTP_CLIENT_H_
