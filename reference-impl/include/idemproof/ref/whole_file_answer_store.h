// WholeFileAnswerStore: the `whole-store-rewrite` flaw (issue 46, "many keys
// at once"). The completed answers are one document (a JSON file, as a
// small middleware keeps them) that each request reads when it comes in and
// writes back whole, with its own answer added, when it completes. Two
// requests of DIFFERENT keys that overlap lose an answer: the later write
// is the document as it was read before the other's answer was in it. The
// key whose answer was lost is free again, so its retry executes again.
//
// In-progress claims are kept apart and are atomic within the process (a
// duplicate of a running key still gets in_progress); only the answers'
// document is read-modify-written. Orders and stock stay in the wrapped
// durable Store. Thread-safe.
#pragma once

#include <map>
#include <mutex>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

class WholeFileAnswerStore final : public Store {
 public:
  // `durable` holds orders and stock; it must outlive this object.
  explicit WholeFileAnswerStore(Store& durable);

  ClaimOutcome claim(const ClaimRequest& request) override;
  bool release(const RequestScope& scope, const std::string& owner) override;
  bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) override;
  std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) override;
  std::size_t sweep(TimePoint now) override;
  bool transact(const std::function<bool(StoreTransaction&)>& body) override;

 private:
  using Document = std::map<RequestScope, RequestRecord>;

  bool complete(const RequestScope& scope, const std::string& owner, const StoredResponse& response,
                TimePoint completed_at, TimePoint expires_at, Fencing fencing);

  Store& durable_;
  std::mutex mu_;
  Document answers_;                        // the document: completed records
  std::map<RequestScope, RequestRecord> claims_;  // keys in progress
  std::map<RequestScope, Document> read_at_claim_;  // the document as each running request read it
};

}  // namespace idemproof::ref
