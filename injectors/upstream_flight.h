// UpstreamFlight: concurrent upstream copies of one request, each on its own
// short-lived connection (hedge, replay-upstream with a timeout). A session
// launches legs, waits for one, any answer, or all of them, and takes the
// results in launch order.
//
// Each leg owns its connection and the flight's signal, so a session that
// leaves early (heal) leaves nothing dangling; heal() cancels the signal.
//
// Thread-safety: the proxy's thread only (proxy_exchange.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "injectors/proxy_exchange.h"

namespace idemproof::injectors {

class UpstreamFlight {
 public:
  struct Leg {
    explicit Leg(ProxyLoop& loop) : conn(loop) {}
    UpstreamConn conn;
    UpstreamAnswer result;
    bool done = false;
  };
  // What a session waits for. Plain values on purpose: GCC 12 destroys a
  // closure passed by value to a coroutine twice (its captured shared_ptrs
  // were released early), so no predicates are passed into coroutines here.
  enum class Until { kLegDone, kAllDone, kAnyAnswer };

  explicit UpstreamFlight(ProxyLoop& loop);

  // Sends a copy of `request` on a fresh connection, at once.
  void launch(const ProxyRequest& request);
  // Waits until `what` holds (kLegDone: for leg number `leg`) or `deadline`;
  // false when the deadline passed first.
  ProxyTask<bool> wait(Until what, std::size_t leg, std::chrono::steady_clock::time_point deadline);
  // Waits for every leg; each is bounded by the upstream timeout.
  ProxyTask<void> drain();
  // The legs' results in launch order.
  std::vector<UpstreamAnswer> take_results();
  const std::vector<std::shared_ptr<Leg>>& legs() const { return legs_; }

 private:
  static ProxyTask<void> run(ProxyLoop& loop, std::shared_ptr<Leg> leg, ProxyRequest request,
                             std::shared_ptr<boost::asio::steady_timer> signal);
  bool satisfied(Until what, std::size_t leg) const;
  bool all_done() const;

  ProxyLoop& loop_;
  std::shared_ptr<boost::asio::steady_timer> signal_;
  Tracked tracked_;
  std::vector<std::shared_ptr<Leg>> legs_;
};

}  // namespace idemproof::injectors
