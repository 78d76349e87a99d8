// The entry point of the design-review reports, for the CLI:
//
//   idemproof run ...                       -> WriteDesignReports(run_dir)
//   idemproof report RUN_DIR --format F [--out FILE]
//                                           -> WriteReport(run_dir, F, FILE)
//                                              or, without --out, print
//                                              RenderReport(run_dir, F)
//
// Both read the run directory (results.json, target.yaml, the histories; see
// session/run_contents.h), never the network. Formats: html (one self-contained
// page), md (Markdown; the failing scenarios' SVG timelines are written
// beside it in "<stem>-timelines/"), junit (reports/junit.h) and json (the
// results.json document).
//
// Thread-safety: pure functions over files; do not run two writers on the
// same output paths at once.
#pragma once

#include <string>

#include "base/status.h"

namespace idemproof {

enum class ReportFormat { kHtml, kMarkdown, kJunit, kJson };

// "html", "md" (or "markdown"), "junit", "json"; kInvalidArgument otherwise.
Result<ReportFormat> ParseReportFormat(const std::string& text);

// Writes <run_dir>/report.html, <run_dir>/report.md and the timelines it
// links (<run_dir>/report-timelines/*.svg). Errors: those of reading the run
// directory (kNotFound without results.json), kIoError when writing fails.
Status WriteDesignReports(const std::string& run_dir);

// Writes one report to `out_file` (its folder must exist). For md, also
// writes <out folder>/<out stem>-timelines/*.svg.
Status WriteReport(const std::string& run_dir, ReportFormat format, const std::string& out_file);

// One report as text, writing nothing. For md the timeline links point to
// report-timelines/ in the run directory (what WriteDesignReports writes).
Result<std::string> RenderReport(const std::string& run_dir, ReportFormat format);

}  // namespace idemproof
