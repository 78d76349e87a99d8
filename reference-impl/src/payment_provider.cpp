#include "idemproof/ref/payment_provider.h"

#include <curl/curl.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "base/query_string.h"

namespace idemproof::ref {
namespace {

struct Exchange {
  long status = 0;
  std::string body;
  std::string error;
};

std::size_t append(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

Exchange perform(const std::string& url, const std::string* post_body,
                 const std::string& key_header, std::chrono::milliseconds timeout) {
  Exchange ex;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    ex.error = "curl_easy_init failed";
    return ex;
  }
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  if (!key_header.empty()) headers = curl_slist_append(headers, key_header.c_str());
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ex.body);
  if (post_body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, post_body->c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(post_body->size()));
  }
  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ex.status);
  } else {
    ex.error = curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  return ex;
}

}  // namespace

HttpPaymentProvider::HttpPaymentProvider(std::string base_url, std::chrono::milliseconds timeout)
    : base_url_(std::move(base_url)), timeout_(timeout) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

ProviderAnswer HttpPaymentProvider::charge(const std::string& idempotency_key,
                                           const std::string& reference, std::int64_t amount) {
  const std::string body = nlohmann::json{{"reference", reference}, {"amount", amount}}.dump();
  const Exchange ex = perform(base_url_ + "/charge", &body,
                              idempotency_key.empty() ? "" : "Idempotency-Key: " + idempotency_key,
                              timeout_);
  ProviderAnswer a;
  a.status = static_cast<int>(ex.status);
  if (ex.status == 0) {
    a.error = ex.error;
    return a;
  }
  if (ex.status >= 200 && ex.status < 300) {
    auto j = nlohmann::json::parse(ex.body, nullptr, false);
    if (j.is_object() && j.contains("transaction_id") && j["transaction_id"].is_string()) {
      a.kind = ProviderAnswer::Kind::charged;
      a.transaction_id = j["transaction_id"].get<std::string>();
      return a;
    }
    a.error = "2xx without a transaction_id";
    return a;
  }
  if (ex.status >= 400 && ex.status < 500 && ex.status != 408 && ex.status != 429) {
    a.kind = ProviderAnswer::Kind::rejected;
    return a;
  }
  a.error = "provider answered " + std::to_string(ex.status);
  return a;
}

ProviderLookup HttpPaymentProvider::find(const std::string& idempotency_key) {
  const Exchange ex =
      perform(base_url_ + "/charges?idempotency_key=" + percent_encode(idempotency_key), nullptr, "",
              timeout_);
  ProviderLookup out;
  if (ex.status != 200) {
    out.error = ex.status == 0 ? ex.error : "provider answered " + std::to_string(ex.status);
    return out;
  }
  auto j = nlohmann::json::parse(ex.body, nullptr, false);
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array()) {
    out.error = "lookup answer without items";
    return out;
  }
  out.answered = true;
  for (const auto& item : j["items"]) {
    if (item.is_object() && item.contains("transaction_id") && item["transaction_id"].is_string()) {
      out.transaction_id = item["transaction_id"].get<std::string>();
      break;
    }
  }
  return out;
}

}  // namespace idemproof::ref
