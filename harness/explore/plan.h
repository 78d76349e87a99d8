// Plan: one generated interleaving, a list of alphabet ops, and its
// generator. Plans are generated with RapidCheck's stateful commands
// (rc::state::gen::commands over the Alphabet's PlanModel), so every prefix
// respects the preconditions, and shrinking (removing ops, simplifying one)
// keeps plans meaningful: an op whose precondition no longer holds is
// regenerated or dropped by RapidCheck.
//
// A plan becomes an ordinary Scenario: the spec's steps before insert_at,
// the plan's ops' steps, a `resume` when the plan leaves the target paused,
// a `clean_run` (job "clean-J", of J) for every job J the plan ran, then the
// spec's remaining steps; the spec's layer, hunts, faults and expect are kept.
//
// Thread-safety: plain values; a generator reads its Alphabet, which must
// outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "explore/alphabet.h"
#include "explore/explore_spec.h"
#include "model/scenario.h"

namespace idemproof::explore {

struct Plan {
  std::vector<Op> ops;
  // "send create_order k1/b1; restart; send create_order k1/b1".
  std::string ToString() const;
  bool operator==(const Plan& other) const { return ops == other.ops; }
};

// Plans of 1..max_ops ops (fewer for small RapidCheck sizes).
rc::Gen<Plan> PlanGen(const Alphabet& alphabet, int max_ops);

// Trial `trial` (0-based) of an exploration seeded `seed`: the plan drawn
// from (seed, trial) alone: the (trial + 1)-th split of rc::Random(seed),
// at size trial mod max_ops. RapidCheck's loop would draw case i only after running cases
// 0..i-1, at a size spread over the whole budget (and shifted by discards);
// this one does not, so trial i of `explore --shard K/N` is the plan the
// unsharded run draws as trial i, whatever the budget and the other trials.
// The Gen always yields that plan, and shrinks it as PlanGen's values shrink.
rc::Gen<Plan> TrialPlanGen(const Alphabet& alphabet, int max_ops, std::uint64_t seed, int trial);

// Trials 0..count-1 of TrialPlanGen (before shrinking): the same seed gives
// the same plans.
std::vector<Plan> SamplePlans(const Alphabet& alphabet, std::uint64_t seed, int count, int max_ops);

// The scenario a plan stands for, named `name`.
Scenario ToScenario(const ExploreSpec& spec, const Plan& plan, const std::string& name);

}  // namespace idemproof::explore
