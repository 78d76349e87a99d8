// The summary table `idemproof run` and `idemproof check` print: one row per
// scenario x oracle (scenario, layer, oracle, verdict, one line of evidence),
// then one row per scenario the tool could not decide, then the totals.
//
// Thread-safety: pure functions.
#pragma once

#include <ostream>

#include "model/results.h"

namespace idemproof::cli {

void PrintSummaryTable(const RunResults& results, std::ostream& out);

}  // namespace idemproof::cli
