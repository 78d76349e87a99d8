// `idemproof simulate`: the deterministic simulation of the reference core
// (simulation.h) from the command line. Prints the seed, the interleavings
// explored and their rate, and on a violation the shrunk interleaving, one
// numbered line per step, and the invariants it breaks.
//
//   idemproof simulate --flaw NAME [--trials N] [--seed S] [--max-steps N]
//                      [--store memory|file] [--work-dir DIR]
//
// Exit codes: 0 no violation; 1 a violation; 2 bad usage (nothing ran; also
// for a flaw the simulation cannot show, see SimulationCovers);
// 3 the simulation itself failed (e.g. no store file could be created).
//
// main.cpp only constructs a SimulateCommand on its CLI::App and runs it
// when chosen.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace idemproof::sim {

class SimulateCommand {
 public:
  // Adds the `simulate` subcommand and its options to `app`.
  explicit SimulateCommand(CLI::App& app);

  // Whether the command line chose `simulate` (after app.parse()).
  bool chosen() const { return command_->parsed(); }

  int Run(std::ostream& out, std::ostream& err) const;

 private:
  CLI::App* command_;
  std::string flaw_ = "none";
  int trials_ = 2000;
  std::optional<std::uint64_t> seed_;
  int max_steps_ = 30;
  std::string store_ = "memory";
  std::string work_dir_;
};

}  // namespace idemproof::sim
