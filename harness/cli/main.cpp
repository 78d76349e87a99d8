// idemproof: the command line. Thin: each subcommand is one file,
// harness/cli/<name>_command.cpp, registered here (cli/command.h); the work is
// in the session, the runtime, the model and the oracles.
//
// Exit codes: 0 every verdict holds (deviations allowed unless --strict);
// 1 a violation (an invalid verdict of severity violation; a deviation too
// under --strict);
// 2 bad usage or configuration (nothing ran); 3 could not decide (target
// unreachable, no answer); 130 interrupted (SIGINT/SIGTERM).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "cli/command.h"
#include "cli/command_support.h"

using namespace idemproof;

int main(int argc, char** argv) {
  CLI::App app{"idemproof: prove, or disprove, that an HTTP service is idempotent"};
  app.set_version_flag("--version", std::string("idemproof ") + PROJECT_VERSION);
  app.require_subcommand(1);
  // Answered before the subcommand is asked for, as --version is.
  app.add_flag_callback(
      "--print-suite-dir",
      [] {
        std::cout << cli::SuiteDir() << "\n";
        throw CLI::Success();
      },
      "print the folder of the suite `run` runs when given no path (installed: <prefix>/share/idemproof/scenarios) "
      "and exit");

  // In the order `idemproof --help` lists them.
  cli::CommandTable commands;
  cli::AddInitCommand(app, commands);
  cli::AddRunCommand(app, commands);
  cli::AddLintCommand(app, commands);
  cli::AddCheckCommand(app, commands);
  cli::AddMergeCommand(app, commands);
  cli::AddExploreCommand(app, commands);
  cli::AddDiscoverCommand(app, commands);
  cli::AddReportCommand(app, commands);
  cli::AddSimulateCommand(app, commands);
  cli::AddProxyCommand(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitUsage;
  }
  return commands.RunChosen();
}
