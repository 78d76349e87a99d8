// The timeline of one scenario run as an SVG picture: the interleaving a
// reader needs to see why an oracle failed. A lane per process (client and
// burst lanes, proxy, target, external stub, deliverer, nemesis, probe), an
// invoke->completion bar per operation coloured by its answer (2xx, replay,
// in progress, 4xx, 5xx), lost answers (info) drawn hollow and marked "?",
// kills and restarts on the target lane, faults as bands across every lane,
// the events an oracle named as evidence outlined, and a time axis.
//
// Every string taken from the history is XML-escaped, so the SVG is
// well-formed and inert whatever the target answered; it can be embedded in
// HTML as is or written to a .svg file.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "model/history.h"
#include "session/run_contents.h"
#include "model/target.h"
#include "reports/design_review/run_review.h"

namespace idemproof {

struct TimelineOptions {
  std::set<std::int64_t> highlighted;  // history indices to outline (evidence)
  IdempotencyContract contract;        // replay marker and in-progress status
  std::string title;                   // accessible name (aria-label)
  int width = 960;                     // pixels
};

// Returns one <svg> element (with xmlns). An empty history gives a small
// picture saying so.
std::string RenderTimelineSvg(const History& history, const TimelineOptions& options);

// The timeline of one reviewed scenario (its evidence highlighted, the
// target's contract for colours); "" when the scenario has no history.
std::string RenderScenarioTimeline(const RunDirectoryContents& contents, const ScenarioReview& scenario);

}  // namespace idemproof
