// ForwardingTransaction: a StoreTransaction that hands every operation to
// another transaction (the wrapped store's), so a Store wrapper overrides
// only what it changes — completion, for MemoryRecordStore and
// InstanceLocalClaimStore. Lives as long as the transaction it wraps; not
// thread-safe, like any transaction.
#pragma once

#include <functional>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

class ForwardingTransaction : public StoreTransaction {
 public:
  // `inner` must outlive this object.
  explicit ForwardingTransaction(StoreTransaction& inner) : inner_(inner) {}

  bool complete(const RequestScope& scope, const std::string& owner, const StoredResponse& response,
                TimePoint completed_at, TimePoint expires_at, Fencing fencing) override {
    return inner_.complete(scope, owner, response, completed_at, expires_at, fencing);
  }
  Order insert_order(const OrderDraft& draft) override { return inner_.insert_order(draft); }
  std::optional<Order> find_order(std::int64_t id) override { return inner_.find_order(id); }
  std::vector<Order> find_orders(const std::optional<std::string>& biz_no) override {
    return inner_.find_orders(biz_no);
  }
  void update_order(const Order& order) override { inner_.update_order(order); }
  Movement insert_movement(MovementKind kind, const Movement& movement) override {
    return inner_.insert_movement(kind, movement);
  }
  std::vector<Movement> find_movements(MovementKind kind, const std::string& biz_no) override {
    return inner_.find_movements(kind, biz_no);
  }
  std::int64_t available_stock(const std::string& sku) override { return inner_.available_stock(sku); }
  void adjust_stock(const std::string& sku, std::int64_t delta) override { inner_.adjust_stock(sku, delta); }

 protected:
  StoreTransaction& inner() { return inner_; }

 private:
  StoreTransaction& inner_;
};

// A transaction whose completion goes elsewhere (a record kept apart from the
// business rows: MemoryRecordStore, WholeFileAnswerStore), every other
// operation to `inner`.
class RedirectedCompletion final : public ForwardingTransaction {
 public:
  using Complete = std::function<bool(const RequestScope&, const std::string&, const StoredResponse&, TimePoint,
                                      TimePoint, Fencing)>;
  RedirectedCompletion(StoreTransaction& inner, Complete complete)
      : ForwardingTransaction(inner), complete_(std::move(complete)) {}

  bool complete(const RequestScope& scope, const std::string& owner, const StoredResponse& response,
                TimePoint completed_at, TimePoint expires_at, Fencing fencing) override {
    return complete_(scope, owner, response, completed_at, expires_at, fencing);
  }

 private:
  Complete complete_;
};

}  // namespace idemproof::ref
