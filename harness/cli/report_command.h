// `idemproof report RUN_DIR [--format html|md|junit|json] [--out FILE]`: one
// report of a recorded run directory, offline (reports/design_review).
// `idemproof report --conformance RUN_DIR` prints the conformance table
// (model/conformance.h) on the console instead (--format and --out ignored).
// Without --out the report goes to stdout; with it, to FILE (for md, the
// timelines beside it in <stem>-timelines/), and the path is printed.
//
// Exit codes: 0 written; 2 bad usage (unknown format, no run directory or
// unreadable results.json, FILE not writable) or a run directory that
// `idemproof check` rejects (session::RecheckRunDirectory), with its reason.
//
// AddReportCommand (cli/command.h) registers it.
//
// Thread-safety: call from one thread.
#pragma once

#include <ostream>
#include <string>

namespace idemproof::cli {

struct ReportArgs {
  std::string run_dir;
  std::string format = "html";
  std::string out_file;
  bool conformance = false;  // print the conformance table, no report
};

int RunReportCommand(const ReportArgs& args, std::ostream& out, std::ostream& err);

// After `idemproof run`: report.html and report.md in the run directory;
// prints their paths (or the reason they could not be written) to `out`.
// Returns false when writing failed.
bool WriteRunReports(const std::string& run_dir, std::ostream& out, std::ostream& err);

}  // namespace idemproof::cli
