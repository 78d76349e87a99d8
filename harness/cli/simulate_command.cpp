// `idemproof simulate`: the deterministic simulation of the reference core;
// its body is sim::RunSimulateCommand (harness/sim/simulate_command.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "sim/simulate_command.h"

namespace idemproof::cli {

void AddSimulateCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<sim::SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "deterministic simulation of the reference core: interleave the store and provider steps of "
      "concurrent requests, crashes and lease expiry; shrink a violation to its interleaving");
  cmd->add_option("--flaw", args->flaw, "the reference core's flaw (none = the correct core)")
      ->capture_default_str();
  cmd->add_option("--trials", args->trials, "plans to generate before deciding")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "replay: the seed a run printed");
  cmd->add_option("--max-steps", args->max_steps, "ops per generated plan, at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--store", args->store,
                  "memory: a shared in-memory SQLite database per trial; file: a WAL file per trial, "
                  "as the server runs (slower)")
      ->capture_default_str()
      ->check(CLI::IsMember({"memory", "file"}));
  cmd->add_option("--work-dir", args->work_dir, "--store file: where the files go (default /dev/shm)");
  table.Add({cmd, [args] { return sim::RunSimulateCommand(*args, std::cout, std::cerr); }});
}

}  // namespace idemproof::cli
