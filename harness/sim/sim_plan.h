// SimPlan: one interleaving the deterministic simulation runs against the
// reference core, and its RapidCheck generator.
//
// A plan is a list of ops over a small fixed pool of requests (few keys and
// business ids, so that requests collide):
//   send A          start a request for pool action A; it runs up to its
//                   first step point (sending an action already sent is a
//                   retry: same key, same payload)
//   step A #n       advance the n-th request of action A in flight (n modulo
//                   how many are, lowest id first) through the step point it
//                   waits at, up to its next one or its answer. Naming the
//                   action, not a position among all requests in flight, lets
//                   shrinking drop an unrelated request without retargeting
//                   every later step
//   crash           the process dies: every request in flight is abandoned
//                   (its answer lost), the service restarts over the same
//                   store file and runs its start-up reconciliation
//   wait            the simulated clock moves past the lease
// An op that cannot apply when it is reached (a step with nothing in flight,
// a send with the in-flight limit reached) is skipped, so every plan
// RapidCheck shrinks to is still a plan the simulation can run.
//
// Thread-safety: plain values; the generators are pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <rapidcheck.h>

namespace idemproof::sim {

// One request of the pool.
struct SimAction {
  enum class Kind { create_order, payment };
  Kind kind = Kind::create_order;
  std::string name;      // "create_order k1 b1"
  std::string key;       // the Idempotency-Key
  std::string biz_no;    // the business id the action is about
  std::string method;    // "POST"
  std::string target;    // "/orders"
  std::string body;      // JSON
  std::string payload = "default";  // "other": the same key and biz with another body
};

// The pool: create_order k1/b1, the same key with another payload,
// create_order k2/b2, pay kp1/pb1. Every action on one biz_no uses one key.
const std::vector<SimAction>& ActionPool();

enum class SimOpKind { send, step, crash, wait };

struct SimOp {
  SimOpKind kind = SimOpKind::step;
  int action = 0;  // send, step: index into ActionPool()
  int nth = 0;     // step: which in-flight request of that action

  std::string ToString() const;  // "send pay kp1 pb1", "step pay kp1 pb1", "step ... #2", "crash", "wait"
  friend bool operator==(const SimOp&, const SimOp&) = default;
};

struct SimPlan {
  std::vector<SimOp> ops;

  std::string ToString() const;  // ops joined by "; "
  friend bool operator==(const SimPlan&, const SimPlan&) = default;
};

// Plans of 0..max_ops ops (growing with RapidCheck's size); steps weigh most.
rc::Gen<SimPlan> SimPlanGen(int max_ops);

// `count` plans drawn from `seed` at sizes growing as in a check: the same
// seed gives the same plans.
std::vector<SimPlan> SampleSimPlans(std::uint64_t seed, int count, int max_ops);

// RapidCheck prints counterexamples with this.
void showValue(const SimPlan& plan, std::ostream& os);

}  // namespace idemproof::sim
