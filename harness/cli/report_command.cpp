#include "cli/report_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "model/conformance.h"
#include "model/console_text.h"
#include "reports/design_review/design_reports.h"
#include "session/session.h"
#include "model/results_json.h"

namespace idemproof::cli {

namespace fs = std::filesystem;

void AddReportCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", "render a report of a run directory, offline");
  cmd->add_option("run_dir", args->run_dir, "a run directory (e.g. idemproof-runs/latest)")->required();
  cmd->add_option("--format", args->format, "html, md, junit or json")->capture_default_str();
  cmd->add_option("--out", args->out_file, "write the report here instead of stdout");
  cmd->add_flag("--conformance", args->conformance,
                "print the profile's rules as a checklist (held / broken / undecided / not tested) instead");
  table.Add({cmd, [args] { return RunReportCommand(*args, std::cout, std::cerr); }});
}

int RunReportCommand(const ReportArgs& args, std::ostream& out, std::ostream& err) {
  auto format = ParseReportFormat(args.format);
  if (!format.ok()) {
    err << "idemproof report: " << ConsoleSafe(format.status().message()) << "\n";
    return 2;
  }
  if (!fs::is_directory(args.run_dir)) {
    err << "idemproof report: " << ConsoleSafe(args.run_dir) << " is not a run directory\n";
    return 2;
  }
  // What `check` rejects (a corrupt or missing history, target or scenario
  // copy) is refused with check's reason: a report drawn around the gap
  // would read as a verdict nobody could reproduce.
  if (auto checked = session::RecheckRunDirectory(args.run_dir); !checked.ok()) {
    err << "idemproof report: " << ConsoleSafe(checked.status().ToString()) << "\n";
    return 2;
  }
  if (args.conformance) {
    auto results = ReadRunResults((fs::path(args.run_dir) / "results.json").string());
    if (!results.ok()) {
      err << "idemproof report: " << results.status().ToString() << "\n";
      return 2;
    }
    out << ConformanceConsoleText(Conformance(*results), *results);
    return 0;
  }
  if (args.out_file.empty()) {
    auto text = RenderReport(args.run_dir, *format);
    if (!text.ok()) {
      err << "idemproof report: " << ConsoleSafe(text.status().ToString()) << "\n";
      return 2;
    }
    out << *text;
    return 0;
  }
  Status written = WriteReport(args.run_dir, *format, args.out_file);
  if (!written.ok()) {
    err << "idemproof report: " << ConsoleSafe(written.ToString()) << "\n";
    return 2;
  }
  out << "wrote " << args.out_file << "\n";
  return 0;
}

bool WriteRunReports(const std::string& run_dir, std::ostream& out, std::ostream& err) {
  Status written = WriteDesignReports(run_dir);
  if (!written.ok()) {
    err << "idemproof: the reports could not be written: " << ConsoleSafe(written.ToString()) << "\n";
    return false;
  }
  out << "report: " << (fs::path(run_dir) / "report.html").string() << "\n"
      << "report: " << (fs::path(run_dir) / "report.md").string() << "\n";
  return true;
}

}  // namespace idemproof::cli
