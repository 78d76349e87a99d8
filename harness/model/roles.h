// Roles: what an action or a probe of a target IS, in the words scenarios
// use to ask for one (the bind stage, binding.h). A target file declares an
// action's `role:` (and `of:`, the create action it works on); a scenario's
// `for_each:` parameter asks for a role and gets every action or probe of
// the target that has it. The two sets are disjoint, so a parameter's role
// alone says whether it stands for an action or a probe.
//
// Action roles:
//   create    makes one business record per business id, under a key (POST /orders)
//   put       sets the state of a create's resource (PUT /orders/{id}/address)
//   delete    removes or cancels a create's resource (DELETE /orders/{id})
//   pay       charges an external system (the side-effect layer)
//   callback  an external system's notification to the target (payment provider
//             callbacks); its `of:` a create, or the callback it follows (refunded of paid)
// Probe roles:
//   counter   a number a create and its delete move (stock reserved and released)
//   resource  the state of a create's resource (GET /orders/{id})
//   ledger    the external system's record of a pay action's effects
//   record    the target's own record of a pay action's effects
//   applied   how often its `of:` MESSAGE's (or callback action's) effect
//             was applied (a queue consumer's counter, callbacks applied)
// Message role (a scenario parameter, bound to every message of the target):
//   message   a queue message (target `messages:`)
// A scenario parameter's `role: any` is an action parameter bound to every
// action that has a role (its needs still apply): a family whose premise is
// not the role (a kill after each downstream an action calls).
//
// Thread-safety: pure functions over constant tables.
#pragma once

#include <string>
#include <vector>

namespace idemproof {

const std::vector<std::string>& ActionRoleNames();
const std::vector<std::string>& ProbeRoleNames();

bool IsActionRole(const std::string& role);
bool IsProbeRole(const std::string& role);

inline constexpr const char* kAppliedRole = "applied";
inline constexpr const char* kMessageRole = "message";
inline bool IsMessageRole(const std::string& role) { return role == kMessageRole; }
inline constexpr const char* kAnyActionRole = "any";

}  // namespace idemproof
