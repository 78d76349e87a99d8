// The `idemproof` subcommands, registered one way. Each subcommand is one
// file, harness/cli/<name>_command.cpp, defining
//
//   void Add<Name>Command(CLI::App& app, CommandTable& table);
//
// which adds the subcommand with its options and help texts to `app` and its
// body to `table`. The body's logic may live in its room (explore/, sim/,
// injectors/); the CLI surface lives here. main.cpp calls the Add functions in
// the order `idemproof --help` lists them, parses, and runs the chosen one.
//
// Adding a subcommand: a new <name>_command.cpp with its Add function, its
// declaration below, a line in main.cpp, and the file in CMakeLists.txt.
//
// Thread-safety: build and run from the main thread.
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace idemproof::cli {

// Exit codes (README): 0 every verdict holds, 1 a violation, 2 bad usage or
// configuration (nothing ran), 3 could not decide, 130 interrupted.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUndecided = 3;
inline constexpr int kExitInterrupted = 130;

struct Command {
  CLI::App* subcommand = nullptr;  // as added to the app
  std::function<int()> run;        // the body, after parsing
  // A command that waits for SIGINT/SIGTERM itself (proxy: sigwait). Every
  // other runs with the interrupt watcher (platform/interrupt.h) installed.
  bool handles_signals = false;
};

class CommandTable {
 public:
  void Add(Command command) { commands_.push_back(std::move(command)); }

  // Runs the subcommand the command line chose and returns its exit code;
  // kExitUsage when none was chosen. REQUIRES: the app parsed without error.
  int RunChosen() const;

 private:
  std::vector<Command> commands_;
};

void AddRunCommand(CLI::App& app, CommandTable& table);
void AddLintCommand(CLI::App& app, CommandTable& table);
void AddCheckCommand(CLI::App& app, CommandTable& table);
void AddMergeCommand(CLI::App& app, CommandTable& table);
void AddExploreCommand(CLI::App& app, CommandTable& table);
void AddReportCommand(CLI::App& app, CommandTable& table);
void AddSimulateCommand(CLI::App& app, CommandTable& table);
void AddProxyCommand(CLI::App& app, CommandTable& table);
void AddInitCommand(CLI::App& app, CommandTable& table);
void AddDiscoverCommand(CLI::App& app, CommandTable& table);

}  // namespace idemproof::cli
