// The judgement the refusal oracles share (missing_key_rejected and the
// malformed-key ones): a request the target must refuse with one status.
//
// Thread-safety: pure functions over plain values.
#pragma once

#include <optional>

#include "oracles/oracle_support.h"

namespace idemproof::oracles {

// The requests an oracle expects refused with one status: how many were
// judged, left undecided (no answer), and what they and those refused by
// authentication were answered.
struct RefusalTally {
  int judged = 0, undecided = 0;
  AnswerTally answered, auth_refused;
  AnswerTally set_aside;  // the undecided ones, by why (SetAsideClause)
};

// Counts `op` into `tally`; returns its answer when it was judged and not
// answered `status` (a finding for the caller to make), else nullopt: no
// answer (undecided), refused by authentication (AuthRefused: set aside,
// it never reached the key check), or answered `status`.
std::optional<HttpAnswer> JudgeRefusal(const Operation& op, const IdempotencyContract& contract, int status,
                                       RefusalTally& tally);

// The details of a refusal oracle's verdict: its findings and `tally`'s
// counts (judged, undecided, answered, auth_refused).
VerdictDetails RefusalDetails(const Violations& violations, const RefusalTally& tally);

}  // namespace idemproof::oracles
