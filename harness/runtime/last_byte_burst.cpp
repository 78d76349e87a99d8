#include "runtime/last_byte_burst.h"

#include "clients/kept_budget.h"
#include "injectors/burst.h"

namespace idemproof::runtime {

namespace inj = idemproof::injectors;

namespace {

// The authority ("127.0.0.1:PORT") of an http:// or https:// origin (a
// missing port: the scheme's); nullopt for any other scheme.
std::optional<std::string> AuthorityOf(const std::string& origin) {
  for (const std::string scheme : {"http://", "https://"}) {
    if (origin.rfind(scheme, 0) != 0) continue;
    std::string authority = origin.substr(scheme.size());
    if (authority.find(':') == std::string::npos) authority += scheme == "https://" ? ":443" : ":80";
    return authority;
  }
  return std::nullopt;
}

bool IsHttps(const OutgoingRequest& r) { return r.origin.rfind("https://", 0) == 0; }

std::vector<HttpExchange> AllNotSent(const std::vector<OutgoingRequest>& requests, const std::string& why) {
  std::vector<HttpExchange> out;
  const std::int64_t now = monotonic_ns();
  for (const auto& r : requests) {
    HttpExchange e;
    e.request = r;
    e.outcome = HttpOutcome::kNotSent;
    e.error = why;
    e.start_ns = e.end_ns = now;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::vector<HttpExchange> LastByteBurst::Send(const std::vector<OutgoingRequest>& requests) {
  last_spread_.reset();
  if (requests.empty()) return {};
  auto first = AuthorityOf(requests.front().origin);
  if (!first) return AllNotSent(requests, "last-byte bursts need an http:// or https:// URL: " + requests.front().url());
  auto endpoint = inj::parse_endpoint(*first);
  if (!endpoint) return AllNotSent(requests, endpoint.status().ToString());

  std::vector<std::string> raw;
  std::vector<inj::Endpoint> targets;
  for (const auto& r : requests) {
    if (IsHttps(r) != IsHttps(requests.front()))
      return AllNotSent(requests, "a last-byte burst over http:// and https:// at once: " + r.url());
    auto authority = AuthorityOf(r.origin);
    if (!authority) return AllNotSent(requests, "last-byte bursts need an http:// or https:// URL: " + r.url());
    auto e = inj::parse_endpoint(*authority);
    if (!e) return AllNotSent(requests, e.status().ToString());
    targets.push_back(e.value());
    inj::RequestSnapshot snapshot;
    snapshot.method = r.message.method;
    snapshot.target = r.message.target.empty() ? "/" : r.message.target;
    snapshot.headers = r.message.headers;
    snapshot.body = r.message.body;
    // tls.server_name is the Host too, as the libcurl client sends it.
    raw.push_back(inj::format_request(snapshot, IsHttps(r) && !r.tls.server_name.empty() ? r.tls.server_name : *authority));
  }
  inj::BurstOptions options;
  options.target = endpoint.value();
  options.targets = std::move(targets);  // several instances: each request to its own
  options.mode = inj::BurstMode::kLastByte;
  if (IsHttps(requests.front())) options.tls = requests.front().tls;
  options.final_bytes = options_.final_bytes;
  options.settle = options_.settle;
  options.read_timeout = requests.front().timeout;
  // The run's budget shared out among the burst's answers (clients/kept_budget.h):
  // what a burst of N may hold at once is bounded by it, not by N x max_body.
  const OutgoingRequest& lead = requests.front();
  const std::size_t cap = lead.kept != nullptr ? lead.kept->Reserve(requests.size(), lead.max_body) : lead.max_body;
  options.max_body = cap;
  options.connect_timeout = std::min<std::chrono::nanoseconds>(options.connect_timeout, requests.front().timeout);
  const std::int64_t started = monotonic_ns();
  auto fired = inj::fire_burst(raw, options);
  if (!fired) {
    if (lead.kept != nullptr)
      for (std::size_t i = 0; i < requests.size(); ++i) lead.kept->Release(cap, 0);
    return AllNotSent(requests, fired.status().ToString());
  }
  inj::BurstResult& result = fired.value();
  last_spread_ = result.harness_spread_ns;

  std::vector<HttpExchange> out;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    inj::BurstAnswer& a = result.answers.at(i);
    HttpExchange e;
    e.request = requests[i];
    e.start_ns = a.sent_ns != 0 ? a.sent_ns : started;
    e.end_ns = a.answered_ns != 0 ? a.answered_ns : monotonic_ns();
    switch (a.outcome) {
      case inj::BurstOutcome::kAnswered:
        e.outcome = HttpOutcome::kAnswered;
        e.status = a.status;
        e.response_headers = a.headers;
        e.response_body = std::move(a.body);  // one copy of a burst's bodies at a time
        e.body_truncated = a.body_truncated;
        e.body_size = a.body_size;
        e.body_size_exact = a.body_size_exact;
        e.body_cut_by_kept = a.body_truncated && cap < lead.max_body;
        break;
      case inj::BurstOutcome::kNoAnswer:
        e.outcome = HttpOutcome::kNoAnswer;
        e.error = a.error;
        break;
      case inj::BurstOutcome::kNotSent:
        e.outcome = HttpOutcome::kNotSent;
        e.error = a.error;
        e.tls_refused = a.error.rfind("TLS: ", 0) == 0;
        break;
    }
    if (lead.kept != nullptr) lead.kept->Release(cap, e.response_body.size());
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace idemproof::runtime
