#include "idemproof/ref/order.h"

#include <nlohmann/json.hpp>

namespace idemproof::ref {

Order created_order(std::int64_t id, const OrderDraft& draft) {
  Order o;
  o.id = id;
  o.biz_no = draft.biz_no;
  o.sku = draft.sku;
  o.qty = draft.qty;
  o.amount = draft.amount;
  o.created_at = draft.created_at;
  return o;
}

nlohmann::json order_to_json(const Order& order) {
  nlohmann::json j = {
      {"id", order.id},         {"biz_no", order.biz_no},   {"sku", order.sku},
      {"qty", order.qty},       {"amount", order.amount},   {"status", order.status},
      {"created_at", order.created_at},
  };
  j["address"] = order.address ? nlohmann::json(*order.address) : nlohmann::json(nullptr);
  return j;
}

}  // namespace idemproof::ref
