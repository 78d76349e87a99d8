#include "idemproof/ref/order.h"

namespace idemproof::ref {

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
