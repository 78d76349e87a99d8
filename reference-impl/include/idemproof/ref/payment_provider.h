// PaymentProvider: the external system the reference service charges (in
// tests and scenarios, `idemproof-stub`). HttpPaymentProvider speaks the
// stub's protocol over libcurl: POST {base}/charge with the caller's
// idempotency key header, GET {base}/charges?idempotency_key=K to ask
// whether an effect happened. Every call has a deadline.
//
// Thread-safe: each call uses its own curl handle.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace idemproof::ref {

struct ProviderAnswer {
  enum class Kind {
    charged,      // 2xx with a transaction id
    rejected,     // a 4xx: the provider refused for good (a decline)
    unavailable,  // 5xx, timeout, no connection: outcome unknown, retry later
  };
  Kind kind = Kind::unavailable;
  std::string transaction_id;  // charged
  int status = 0;              // the HTTP status, 0 without an answer
  std::string error;           // unavailable: what went wrong
};

// What a lookup found: the transaction id, "none", or unavailable.
struct ProviderLookup {
  bool answered = false;                      // false: could not ask
  std::optional<std::string> transaction_id;  // set when the effect exists
  std::string error;
};

class PaymentProvider {
 public:
  virtual ~PaymentProvider() = default;
  virtual ProviderAnswer charge(const std::string& idempotency_key, const std::string& reference,
                                std::int64_t amount) = 0;
  virtual ProviderLookup find(const std::string& idempotency_key) = 0;
};

class HttpPaymentProvider final : public PaymentProvider {
 public:
  // `base_url` like "http://127.0.0.1:7000" (no trailing slash needed).
  HttpPaymentProvider(std::string base_url, std::chrono::milliseconds timeout);

  ProviderAnswer charge(const std::string& idempotency_key, const std::string& reference,
                        std::int64_t amount) override;
  ProviderLookup find(const std::string& idempotency_key) override;

 private:
  std::string base_url_;
  std::chrono::milliseconds timeout_;
};

}  // namespace idemproof::ref
