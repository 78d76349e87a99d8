// OrderApi: the reference service's HTTP API as the integration tests use
// it, over http_client. Each call has a deadline; failures of the service are
// returned as data (HttpResult), not thrown. Thread-safe.
#pragma once

#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "http_client.h"

namespace idemproof::ref::testing {

// {"biz_no": biz_no, "sku": sku, "qty": qty, "amount": 100}
std::string order_json(const std::string& biz_no, const std::string& sku = "s1", int qty = 1);

class OrderApi {
 public:
  explicit OrderApi(std::string base_url) : base_(std::move(base_url)) {}

  HttpResult post_order(const std::string& key, const std::string& body,
                        std::vector<std::string> extra_headers = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(15)) const;
  HttpResult call(const std::string& method, const std::string& path,
                  std::optional<std::string> body = std::nullopt,
                  std::vector<std::string> headers = {}) const;

  // GET /orders?biz_no= -> count; -1 when the service did not answer 200.
  std::int64_t order_count(const std::string& biz_no) const;
  // GET /stock?sku= -> available; -1 when the service did not answer 200.
  std::int64_t stock(const std::string& sku) const;
  bool healthy() const;

  // Starts POST (key, body) in the background, gives it a head start, then
  // sends duplicates (each abandoned after `probe_timeout`) until one answers
  // 409, so the caller knows some execution of the key holds the lease. A
  // probe that arrives first becomes that execution itself, so the business
  // step must outlast several probes and `probe_timeout` must be well under
  // the lease. Returns the background request's future; throws
  // std::runtime_error if no 409 came.
  std::future<HttpResult> start_in_progress(
      const std::string& key, const std::string& body,
      std::chrono::milliseconds background_timeout,
      std::chrono::milliseconds probe_timeout = std::chrono::milliseconds(300)) const;

  // Retries POST (key, body) while it answers 409 (in progress), up to
  // `deadline`; returns the last answer.
  HttpResult post_until_settled(const std::string& key, const std::string& body,
                                std::chrono::milliseconds deadline = std::chrono::seconds(30)) const;

  // `n` identical POSTs released together from `n` threads.
  std::vector<HttpResult> concurrent_posts(int n, const std::string& key,
                                           const std::string& body) const;

  const std::string& base_url() const { return base_; }

 private:
  std::string base_;
};

// True when `r` is an application/problem+json answer with this status.
bool is_problem(const HttpResult& r, long status);

}  // namespace idemproof::ref::testing
