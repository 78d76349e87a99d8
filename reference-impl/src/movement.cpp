#include "idemproof/ref/movement.h"

#include <nlohmann/json.hpp>

namespace idemproof::ref {

std::string_view movement_kind_name(MovementKind kind) {
  return kind == MovementKind::refund ? "refund" : "transfer";
}

std::string_view movement_table(MovementKind kind) {
  return kind == MovementKind::refund ? "refunds" : "transfers";
}

nlohmann::json movement_to_json(MovementKind kind, const Movement& movement) {
  return {{"id", movement.id},
          {"kind", movement_kind_name(kind)},
          {"biz_no", movement.biz_no},
          {"amount", movement.amount},
          {"created_at", movement.created_at}};
}

}  // namespace idemproof::ref
