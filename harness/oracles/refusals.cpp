// The refusal oracles' shared judgement (oracles/refusals.h).
#include "oracles/refusals.h"

namespace idemproof::oracles {

VerdictDetails RefusalDetails(const Violations& violations, const RefusalTally& tally) {
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.judged = tally.judged;
  details.counts.undecided = tally.undecided;
  details.tallies.answered = tally.answered.Counts();
  details.tallies.auth_refused = tally.auth_refused.Counts();
  if (tally.set_aside.total() > 0) details.tallies.set_aside = tally.set_aside.Counts();
  return details;
}

std::optional<HttpAnswer> JudgeRefusal(const Operation& op, const IdempotencyContract& contract, int status,
                                       RefusalTally& tally) {
  auto a = op.answer();
  if (!a) {
    ++tally.undecided;
    tally.set_aside.AddAs("no answer");
    return std::nullopt;
  }
  // Turned away before any key was looked up: says nothing about the key.
  if (AuthRefused(op, contract)) {
    tally.auth_refused.Add(op);
    return std::nullopt;
  }
  ++tally.judged;
  tally.answered.Add(op);
  if (a->status == status) return std::nullopt;
  return a;
}

}  // namespace idemproof::oracles
