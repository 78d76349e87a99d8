// Test support: Debian's headless Chromium as a real browser for the report
// pages. Each call starts one Chromium (fresh --user-data-dir, no network
// features, no sandbox since tests may run as root) in its own process group,
// waits at most `deadline`, then kills the whole group and reaps it.
//
// Chromium is a declared dependency (scripts/setup.sh installs it): when the
// executable is missing, calls return an error that the tests turn into a
// failure, never a skip. $IDEMPROOF_CHROMIUM overrides /usr/bin/chromium.
//
// Thread-safety: one call at a time per process (it forks).
#pragma once

#include <chrono>
#include <string>

#include "base/status.h"

namespace idemproof::testing {

// The Chromium executable to use, or kNotFound with a message naming it.
Result<std::string> FindChromium();

// The DOM after load, serialised (--dump-dom). `file` is an absolute path.
Result<std::string> DumpDom(const std::string& file, std::chrono::seconds deadline = std::chrono::seconds(60));

// A PNG screenshot of `file` at `window` ("1280,2000": width,height) written
// to `png`.
Status Screenshot(const std::string& file, const std::string& png,
                  std::chrono::seconds deadline = std::chrono::seconds(60), const std::string& window = "1280,2000");

// The layout of a report page as a 1280 x 800 viewport lays it out: the page
// is loaded into an iframe of that size by a wrapper page written beside it
// (the report's own CSP allows no script), which reads the geometry back.
struct FirstScreen {
  double headline_bottom = -1;  // px from the top of the viewport
  double matrix_bottom = -1;    // the bottom of table#matrix; -1 when absent
  double scroll_width = -1;     // document width vs the viewport's
  double client_width = -1;
  double tallest_cell = -1;     // the tallest td or th on the whole page
  // Measured last, with every td and th wrapping only where a line may break
  // between words (overflow-wrap and word-break normal; <wbr> still breaks):
  // the document's width then (a column that needs its longest word whole
  // widens its table past the page), and how many cells overflow themselves.
  double words_scroll_width = -1;
  double narrow_cells = -1;
  // The first elements reaching past the viewport, as "tag.class right PX"
  // (what a failed width check names); "" when none does.
  std::string overflowing;
};
Result<FirstScreen> MeasureFirstScreen(const std::string& file,
                                       std::chrono::seconds deadline = std::chrono::seconds(60));

}  // namespace idemproof::testing
