// The CI job summary (issue #34 item 6): a short Markdown page for a CI
// run's summary tab (GitHub's $GITHUB_STEP_SUMMARY, a GitLab artifact): the
// run's outcome and exit code, one row per layer (rows valid, violated,
// deviating, undecided, not applicable), then each violation (a deviation
// too under --strict) with its scenario, binding, oracle, evidence and the
// command that reruns that scenario with the same seed. Rows the tool could
// not run and undecided verdicts are listed after, with their reason.
// Every string from the run is Markdown-escaped or fenced; evidence is cut
// at kCiEvidenceChars characters (the run directory holds it whole).
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>

#include "model/results.h"

namespace idemproof {

inline constexpr std::size_t kCiEvidenceChars = 600;

std::string RenderCiSummary(const RunResults& results);

}  // namespace idemproof
