// Movement: a money movement the reference service records besides orders
// (a refund, a transfer): one keyed create endpoint per kind (POST /refunds,
// POST /transfers), each kind in its own table, through the same idempotency
// core as orders. They exist so one service offers several keyed create
// actions (docs/reference-service.md, "Refunds and transfers").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace idemproof::ref {

enum class MovementKind { refund, transfer };

// "refund" / "transfer"; the table is "refunds" / "transfers", the route
// "/refunds" / "/transfers".
std::string_view movement_kind_name(MovementKind kind);
std::string_view movement_table(MovementKind kind);

struct Movement {
  std::int64_t id = 0;
  std::string biz_no;
  std::int64_t amount = 0;
  std::string created_at;  // RFC 3339 UTC
};

// {"amount", "biz_no", "created_at", "id", "kind"}.
nlohmann::json movement_to_json(MovementKind kind, const Movement& movement);

}  // namespace idemproof::ref
