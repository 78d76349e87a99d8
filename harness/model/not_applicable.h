// What the not-applicable rows of a run lack, for people: a headline and
// the causes each said once, so the console (`run`, `check`, `lint
// --target`) and the reports print a short table rather than one long line.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "model/results.h"

namespace idemproof {

// One line for the console and the reports: "30 of 38 rows not applicable:
// 20 needs role pay; 10 needs ..." ("" when no row is); with
// "nothing was tested" first when NothingTested().
std::string NotApplicableNote(const RunResults& results);

// NotApplicableNote without the reasons: "30 of 38 row(s) not
// applicable" (after "nothing was tested ..., exit 3; " when
// NothingTested()); "" when no row is not applicable and something was tested.
std::string NotApplicableHeadline(const RunResults& results);

struct NotApplicableCause {
  std::string need;   // the whole need, as the rows' verdicts say it
  std::string cause;  // "a tcp egress for fault store_down"
  std::string add;    // "target 'egress' with protocol: tcp: ..."; "" when the need names no key
  int rows = 0;       // not_applicable rows that lack it
};

// The not_applicable rows' needs (their verdicts' "needs"), each need said
// once (a row needing two things counts for both), the target-file key that
// would provide it (the need's "(target '...' ...)" part) split from the
// cause. Most rows first, then by cause. A row without "needs" counts under
// its NotApplicableReason().
std::vector<NotApplicableCause> NotApplicableCauses(const RunResults& results);

}  // namespace idemproof
