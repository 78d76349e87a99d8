// The design-review page of one run: a single self-contained HTML file (no
// external assets, no script, no network; a Content-Security-Policy meta
// forbids them anyway) that prints cleanly. Sections, in order: the verdict
// at a glance (the layer x property matrix, what was not tested), the
// conformance table, the four-layer table, what broke (a card per finding,
// violations before deviations: finding_cards.h), all scenarios and
// verdicts, premises, families, faults injected (zero flagged), metrics.
//
// Every string that comes from the run (target answers, headers, keys, URLs,
// scenario text) is escaped; the page stays well-formed and inert whatever
// the target answered.
//
// Thread-safety: pure function.
#pragma once

#include <string>

#include "session/run_contents.h"
#include "reports/design_review/run_review.h"

namespace idemproof {

std::string RenderHtmlReport(const RunDirectoryContents& contents, const RunReview& review);

}  // namespace idemproof
