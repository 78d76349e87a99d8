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
// The subcommand's options and help texts are the CLI's
// (harness/cli/simulate_command.cpp); this is its body.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace idemproof::sim {

struct SimulateArgs {
  std::string flaw = "none";
  int trials = 2000;
  std::optional<std::uint64_t> seed;
  int max_steps = 30;
  std::string store = "memory";  // memory | file
  std::string work_dir;
};

int RunSimulateCommand(const SimulateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace idemproof::sim
