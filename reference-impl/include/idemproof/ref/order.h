// Order: the business record of the reference service, and its JSON form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace idemproof::ref {

inline constexpr std::int64_t kInitialStock = 1000;

struct OrderDraft {
  std::string biz_no;
  std::string sku;
  std::int64_t qty = 0;
  std::int64_t amount = 0;
  std::string created_at;  // RFC 3339 UTC
};

struct Order {
  std::int64_t id = 0;
  std::string biz_no;
  std::string sku;
  std::int64_t qty = 0;
  std::int64_t amount = 0;
  std::optional<std::string> address;
  std::string status = "created";  // "created" | "cancelled"
  std::string created_at;
};

// The order a store inserted from `draft` under `id`: status "created", no address.
Order created_order(std::int64_t id, const OrderDraft& draft);

// {"address", "amount", "biz_no", "created_at", "id", "qty", "sku", "status"}.
nlohmann::json order_to_json(const Order& order);

}  // namespace idemproof::ref
