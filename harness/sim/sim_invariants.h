// The invariants the deterministic simulation checks after each run: the
// harness's oracles (harness/oracles/) restated over what the simulation can
// see directly: every answer, every claim the core made, the store's orders
// and the provider's ledger. Pure functions of a SimHistory.
//
//   one_record         each business id of an order action has at most one
//                      order, and exactly one once any create got a 2xx
//   intent_reconciled  each payment business id has at most one provider
//                      effect, whatever crashed in between
//   lease_recovery     a claim is answered "in progress" only while a lease
//                      on its key was granted less than one lease period
//                      before the claim's "now" (an expired lease, e.g. of a
//                      crashed request, never blocks a key)
//   identical_replay   every 2xx answer for one key has the status, body and
//                      Location of the first 2xx answer for that key
//   no_internal_error  no answer is a 5xx: nothing in the simulation fails
//                      (the provider always answers), so a 5xx is a store
//                      error, in the core or in the simulation's wiring
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "idemproof/ref/clock.h"
#include "base/http_message.h"
#include "sim/stepped_store.h"

namespace idemproof::sim {

struct SentRequest {
  int id = 0;
  int action = 0;                           // index into ActionPool()
  std::optional<HttpResponse> answer;  // nullopt: lost in a crash
};

struct SimHistory {
  std::vector<SentRequest> requests;
  std::vector<ClaimSeen> claims;
  std::map<std::string, std::size_t> orders_by_biz;   // every order biz_no of the pool
  std::map<std::string, std::size_t> effects_by_biz;  // every payment biz_no of the pool
};

struct Violation {
  std::string invariant;  // "one_record"
  std::string evidence;   // one line
};

// Every invariant that does not hold, in the order listed above.
std::vector<Violation> CheckInvariants(const SimHistory& history, ref::Nanos lease);

}  // namespace idemproof::sim
