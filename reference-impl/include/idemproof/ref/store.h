// Store: durable state of the reference service: idempotency records, orders,
// stock and movements (refunds, transfers).
//
// Contract for every implementation:
//  - claim() is atomic: of several concurrent claims on one scope exactly one
//    gets `claimed`/`took_over` (unless the implementation is a named flaw).
//  - transact() runs `body` in one transaction; everything `body` did through
//    the StoreTransaction commits when it returns true and rolls back when it
//    returns false or throws. This is how an order, its stock change and the
//    completed record appear together or not at all.
//  - Errors of the underlying database are thrown as StoreError.
// Implementations are thread-safe; `body` must not call back into the Store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "idemproof/ref/movement.h"
#include "idemproof/ref/order.h"
#include "idemproof/ref/request_record.h"

namespace idemproof::ref {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Operations available inside one transaction.
class StoreTransaction {
 public:
  virtual ~StoreTransaction() = default;

  // Marks `scope`'s in-progress record completed with `response`, replayable
  // until `expires_at`. With Fencing::by_owner only the lease `owner` may do
  // it; returns false (nothing changed) when it is not the owner any more.
  virtual bool complete(const RequestScope& scope, const std::string& owner,
                        const StoredResponse& response, TimePoint completed_at,
                        TimePoint expires_at, Fencing fencing) = 0;

  // Inserts a new order (status "created", no address) and returns it with its id.
  virtual Order insert_order(const OrderDraft& draft) = 0;
  virtual std::optional<Order> find_order(std::int64_t id) = 0;
  // Orders with this biz_no (every order when nullopt), by id.
  virtual std::vector<Order> find_orders(const std::optional<std::string>& biz_no) = 0;
  // Writes address and status of the order with `order.id`.
  virtual void update_order(const Order& order) = 0;

  // Inserts a movement of `kind` (its id is ignored) and returns it with its id.
  virtual Movement insert_movement(MovementKind kind, const Movement& movement) = 0;
  // Movements of `kind` with this biz_no, by id.
  virtual std::vector<Movement> find_movements(MovementKind kind, const std::string& biz_no) = 0;

  // Available stock of `sku` (kInitialStock for a sku never touched).
  virtual std::int64_t available_stock(const std::string& sku) = 0;
  virtual void adjust_stock(const std::string& sku, std::int64_t delta) = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Tries to take the lease on `request.scope` (see ClaimKind).
  virtual ClaimOutcome claim(const ClaimRequest& request) = 0;

  // Deletes `scope`'s in-progress record if `owner` still holds it (a
  // retryable failure: nothing is stored). Returns whether it did.
  virtual bool release(const RequestScope& scope, const std::string& owner) = 0;

  // Extends `scope`'s in-progress lease to `expires_at` if `owner` still
  // holds it (an owner whose work outlasts its lease renews it while it
  // runs). Returns whether it did.
  virtual bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) = 0;

  // The live record of `scope` at `now`, if any.
  virtual std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) = 0;

  // Deletes every record dead at `now` (expired leases, completed records past
  // their TTL); returns how many. Orders and stock are never swept.
  virtual std::size_t sweep(TimePoint now) = 0;

  // Runs `body` in one transaction (see above); returns whether it committed.
  virtual bool transact(const std::function<bool(StoreTransaction&)>& body) = 0;
};

}  // namespace idemproof::ref
