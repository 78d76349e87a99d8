// PushDeliverer: an at-least-once queue deliverer over HTTP push, as a
// message broker with push subscriptions behaves. A delivery is a POST of the
// message to a consumer endpoint; a 2xx answer is the consumer's ack.
//
// Deliver() runs rounds until a round is acknowledged or `max_rounds` is
// reached. A round pushes `copies` copies of the message at once (each to the
// next consumer in turn: two copies over two consumers = delivery to two
// consumer instances at the same time). The first `lose_ack` acks are lost on
// the way back (the deliverer drops them, as a broker whose ack timed out
// would) and the message is redelivered, after `every`. A push without an
// answer, or with a non-2xx answer, is not an ack either.
//
// The observer sees every push before it leaves (on_push) and when it
// completes (on_done), so the caller records them as they happen.
//
// Thread-safety: one Deliver() at a time per object.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "clients/http_client.h"

namespace idemproof::runtime {

struct DeliveryPlan {
  std::vector<OutgoingRequest> consumers;    // the message rendered for each consumer endpoint
  std::vector<std::string> consumer_names;   // same size: names shown in the history
  int copies = 1;
  int lose_ack = 0;
  int max_rounds = 10;
  Duration every{0};
};

// One push: which round and copy, to which consumer, and whether its ack
// (when it was one) was dropped.
struct Push {
  int round = 1;     // 1-based
  int copy = 0;      // 0-based within the round
  std::size_t consumer = 0;
  bool ack_lost = false;  // set in on_done
};

struct DeliveryObserver {
  std::function<void(const Push&, const OutgoingRequest&)> on_push;
  std::function<void(const Push&, const HttpExchange&)> on_done;
};

struct DeliveryOutcome {
  bool acked = false;
  int rounds = 0;
  int pushes = 0;
  int acks_lost = 0;
};

class PushDeliverer {
 public:
  // `cancel` (may be null) abandons waits and requests in flight.
  explicit PushDeliverer(const std::atomic<bool>* cancel) : cancel_(cancel) {}
  DeliveryOutcome Deliver(const DeliveryPlan& plan, const DeliveryObserver& observer);

 private:
  bool Sleep(Duration d) const;
  const std::atomic<bool>* cancel_;
};

}  // namespace idemproof::runtime
