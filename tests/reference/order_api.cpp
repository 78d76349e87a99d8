#include "order_api.h"

#include <future>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

namespace idemproof::ref::testing {

using nlohmann::json;

std::string order_json(const std::string& biz_no, const std::string& sku, int qty) {
  return json{{"biz_no", biz_no}, {"sku", sku}, {"qty", qty}, {"amount", 100}}.dump();
}

HttpResult OrderApi::post_order(const std::string& key, const std::string& body,
                                std::vector<std::string> extra_headers,
                                std::chrono::milliseconds timeout) const {
  HttpCall c;
  c.method = "POST";
  c.url = base_ + "/orders";
  c.headers = std::move(extra_headers);
  c.headers.push_back("Content-Type: application/json");
  if (!key.empty()) c.headers.push_back("Idempotency-Key: " + key);
  c.body = body;
  c.timeout = timeout;
  return http_call(c);
}

HttpResult OrderApi::call(const std::string& method, const std::string& path,
                          std::optional<std::string> body, std::vector<std::string> headers) const {
  HttpCall c;
  c.method = method;
  c.url = base_ + path;
  c.headers = std::move(headers);
  c.body = std::move(body);
  return http_call(c);
}

std::int64_t OrderApi::order_count(const std::string& biz_no) const {
  const auto r = call("GET", "/orders?biz_no=" + biz_no);
  if (r.status != 200) return -1;
  return json::parse(r.body).at("count").get<std::int64_t>();
}

std::int64_t OrderApi::stock(const std::string& sku) const {
  const auto r = call("GET", "/stock?sku=" + sku);
  if (r.status != 200) return -1;
  return json::parse(r.body).at("available").get<std::int64_t>();
}

bool OrderApi::healthy() const { return call("GET", "/healthz").status == 200; }

std::future<HttpResult> OrderApi::start_in_progress(const std::string& key,
                                                    const std::string& body,
                                                    std::chrono::milliseconds timeout,
                                                    std::chrono::milliseconds probe_timeout) const {
  auto first = std::async(std::launch::async, [=, this] {
    return post_order(key, body, {}, timeout);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int attempt = 0; attempt < 50; ++attempt) {
    const auto probe = post_order(key, body, {}, probe_timeout);
    if (probe.status == 409) return first;
  }
  throw std::runtime_error("no request with key " + key + " was ever seen in progress");
}

HttpResult OrderApi::post_until_settled(const std::string& key, const std::string& body,
                                        std::chrono::milliseconds deadline) const {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    auto r = post_order(key, body);
    if (r.status != 409 || std::chrono::steady_clock::now() > until) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<HttpResult> OrderApi::concurrent_posts(int n, const std::string& key,
                                                   const std::string& body) const {
  std::vector<HttpResult> results(static_cast<std::size_t>(n));
  std::promise<void> go;  // not std::latch: libstdc++ 12's can miss its wake-up
  std::shared_future<void> start = go.get_future().share();
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      start.wait();
      results[static_cast<std::size_t>(i)] = post_order(key, body);
    });
  }
  go.set_value();
  for (auto& t : threads) t.join();
  return results;
}

bool is_problem(const HttpResult& r, long status) {
  if (r.status != status || r.header("content-type") != "application/problem+json") return false;
  const json body = json::parse(r.body, nullptr, false);
  return body.is_object() && body.value("status", 0) == status &&
         body.value("type", std::string()).rfind("urn:idemproof:", 0) == 0;
}

}  // namespace idemproof::ref::testing
