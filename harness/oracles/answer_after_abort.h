// answer_after_abort: the oracle of the client-abort family (issue 46),
// kept apart from oracle_support.h's list. Internal to idemproof_oracles.
#pragma once

#include "oracles/oracle.h"

namespace idemproof::oracles {

// After a client gave up on a keyed request, every later 2xx for its key is
// the real answer: not empty, not cut short.
Verdict AnswerAfterAbort(const OracleInput& in);

}  // namespace idemproof::oracles
