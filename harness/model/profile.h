// SemanticsProfile: whose idempotency rules a run judges by (`profile:` in
// the target file, `--profile` on the command line; default ietf).
// Providers differ: the IETF draft is mostly SHOULD; Stripe's API v1 stores
// and replays a 500 while v2 finishes the work; others store only 2xx. A
// profile sets
//  - the contract's defaults: what is stored and replayed vs released
//    (stores_4xx, stores_5xx), the mismatch / in-progress / missing-key
//    statuses, whether the key is optional, the replay marker expected;
//    the target file's `idempotency:` section then refines any of them;
//  - per oracle, the rule it applies and its level: a finding against a
//    MUST is a violation (exit 1), against a SHOULD a deviation (exit 0
//    unless --strict). An oracle that judges the status code apart from the
//    effect (mismatch_rejected, missing_key_rejected, in_progress) has a
//    second rule for a finding that is only about the status code.
// Each profile names its source; docs/scenario-reference.md lists them.
//
// Thread-safety: the profiles are built once, then read-only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/target/contract.h"

namespace idemproof {

enum class RuleLevel { kMust, kShould };
const char* RuleLevelName(RuleLevel level);  // "MUST", "SHOULD"

struct ProfileRule {
  std::string id;    // "ietf/mismatch-status"
  std::string text;  // one sentence, in the source's words where it has them
  RuleLevel level = RuleLevel::kMust;
};

struct OracleRules {
  ProfileRule effect;                 // what the property is about
  std::optional<ProfileRule> status = std::nullopt;  // the status code it expects, judged apart
};

struct SemanticsProfile {
  std::string name;     // "ietf"
  std::string summary;  // one line
  std::string source;   // where the rules come from
  IdempotencyContract defaults;
  std::map<std::string, OracleRules> rules;  // by oracle name

  // The rule a verdict of `oracle` applied: the status rule when the
  // oracle has one and `status_only` (every finding was about the status
  // code alone), else the effect rule. nullptr for an oracle it does not know.
  const ProfileRule* RuleFor(const std::string& oracle, bool status_only) const;
};

// ietf, stripe-v1, stripe-v2, store-2xx-only.
const std::vector<SemanticsProfile>& Profiles();
// nullptr when there is no such profile.
const SemanticsProfile* FindProfile(const std::string& name);
// "ietf, stripe-v1, stripe-v2, store-2xx-only", for errors and help.
std::string ProfileNames();

}  // namespace idemproof
