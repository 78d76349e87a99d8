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

// The not-applicable rows as a short table, never one long line (`run`,
// `check` and `lint --target` print it): NotApplicableHeadline, then one
// line per distinct cause (model/not_applicable.h) with the rows it
// leaves out, its number ("#3", which `lint --target` names per row) and
// what to add to the target file, each column wrapped at word boundaries to
// at most `column` characters. Prints nothing when no row
// is not applicable and something was tested.
void PrintNotApplicableTable(const RunResults& results, std::ostream& out, std::size_t column = 56);

}  // namespace idemproof::cli
