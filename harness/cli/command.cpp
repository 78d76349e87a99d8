#include "cli/command.h"

#include <CLI/CLI.hpp>
#include <chrono>

#include "platform/interrupt.h"

namespace idemproof::cli {

int CommandTable::RunChosen() const {
  for (const Command& command : commands_) {
    if (!command.subcommand->parsed()) continue;
    // No thread exists before this point: the watcher is the first.
    if (!command.handles_signals) runtime::InstallInterruptHandling(std::chrono::seconds(20));
    return command.run();
  }
  return kExitUsage;
}

}  // namespace idemproof::cli
