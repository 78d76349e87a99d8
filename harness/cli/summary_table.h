// The summary table `idemproof run` and `idemproof check` print: one row per
// scenario x oracle (scenario, layer, oracle, verdict, one line of evidence),
// then one row per scenario the tool could not decide, then the totals (and
// the shard or merge line, model/results.h ShardNote), and
// one line with the four run metrics (duplicate rate, false-dedup rate, rerun
// diff rows, window hit rate; "n/a" when undefined).
//
// Thread-safety: pure functions.
#pragma once

#include <ostream>

#include "model/results.h"

namespace idemproof::cli {

void PrintSummaryTable(const RunResults& results, std::ostream& out);

}  // namespace idemproof::cli
