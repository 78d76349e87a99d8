// Capabilities: what a scenario's `cause: NAME` step asks of a target ("the
// next request is slow"), and the one table of the ways a target provides
// each. The bind stage (binding.h) resolves every cause step of a bound
// scenario against the target, in table order of the providers:
//
//   capability          variant of the next send's action   hook
//   slow_request        slow                                slow_business
//   retryable_failure   fails_retryably                     fail_next_retryable
//   heal                (clears pending variants)           heal (optional)
//   slow_past_lease     slow_past_lease (e.g. {{slow_ms}})  -
//   kill_after_charge   -                                   kill_after_charge,
//                       else an egress kill-after-answer on the downstream of
//                       a ledger probe (`egress:`) of the next send's action
//   final_failure       fails_finally                       fail_next_final
//   die_before_ack      die_before_ack of the next publish's die_before_ack
//                       message (its broker entry's fields)
//
// A hook provides the capability its `role:` names (the capability's name);
// a hook without a role has the one whose default spelling above is its name.
//
// A message capability (die_before_ack) acts on the next `publish` step:
// its variant is one of that message's (messages.NAME.variants with
// `fields:`), added to the entry that publish adds.
// A variant changes the next request of that action and belongs to its
// attempt: every later request of that key (repeats, bursts, retries)
// repeats it, unless the cause step says `variant: first_only`
// (runtime/step_context.h, VariantFor); a hook steers the target until
// healed. A capability none of its providers gives makes the binding
// not_applicable with a reason naming the capability and both ways.
// `heal` is always provided: with no heal hook it only clears what is
// pending.
//
// Thread-safety: pure functions over a constant table.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

struct CapabilityInfo {
  std::string name;     // "slow_request"
  std::string summary;  // one line for errors and docs
  std::string variant;  // the action variant that provides it; "" = none
  std::string hook;     // the target hook that provides it; "" = none
  bool always = false;  // provided even by neither (heal)
  // Else provided by an egress kill-after-answer (steps/cause_step.cpp) on
  // the downstream of a ledger probe with `egress:` of the next send's action.
  bool egress = false;
  // The target may end because of it (no target_exited event then).
  bool ends_target = false;
  // Acts on the next publish's message, not on the next send's action: its
  // variant is a message's, with broker entry fields.
  bool message = false;
};

const std::vector<CapabilityInfo>& CapabilityTable();
const CapabilityInfo* FindCapability(const std::string& name);
std::vector<std::string> CapabilityNames();

// How one cause step is provided by a target.
struct CapabilityProvision {
  enum class Kind { kVariant, kHook, kEgress, kNothing } kind = Kind::kNothing;
  std::string action;   // kVariant: the action (or message) whose next request (or entry) gets it
  std::string variant;  // kVariant
  std::string hook;     // kHook; with heal also alongside kNothing when declared
  std::string ledger;   // kEgress: the egress ledger probe whose downstream gets the fault
};

// Resolves capability `name` for a cause step whose next send uses `action`
// ("" = none follows); for a message capability, `action` is the next
// publish's message. Error kUnsupported (the not_applicable reason) when
// the target provides it neither way; kInvalidArgument for an unknown name.
Result<CapabilityProvision> ResolveCapability(const std::string& name, const std::string& action,
                                              const TargetDescription& target);

}  // namespace idemproof
