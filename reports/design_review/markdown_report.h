// The design-review report of one run as Markdown (GitHub-flavoured tables),
// for pasting into a design document or a pull request: the same sections as
// the HTML page, with each failing scenario's timeline written as an SVG file
// beside the Markdown and linked from it.
//
// Table cells stay short (kMarkdownCellChars): details go below the table.
// Everything that comes from the run is escaped for Markdown (see
// markdown_escape.h); answer bodies go into fenced code blocks whose fence no
// body can close.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "session/run_contents.h"
#include "reports/design_review/run_review.h"

namespace idemproof {

// No table cell is longer than this (bytes of Markdown): a longer one is cut
// at a word or list item and its whole text follows the table, numbered.
inline constexpr std::size_t kMarkdownCellChars = 300;

struct MarkdownReport {
  std::string markdown;
  // Files the Markdown links to: (path relative to the Markdown file, SVG).
  std::vector<std::pair<std::string, std::string>> timelines;
};

// `timeline_dir` is the folder (relative to the Markdown file) the timeline
// links point into, e.g. "timelines".
MarkdownReport RenderMarkdownReport(const RunDirectoryContents& contents, const RunReview& review,
                                    const std::string& timeline_dir);

}  // namespace idemproof
