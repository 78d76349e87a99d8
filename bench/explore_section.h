// The bench's `explore` section: `idemproof explore` live against the
// reference service, run as a child process (the real tool, its real
// per-trial target start), results read from each run's explore.json.
//   1. trials per second against the correct reference, per explore file,
//      isolation mode (namespace: one running target; process: one per
//      trial) and number of trial workers (--jobs);
//   2. per flaw of the reference (`idemproof-ref --flaw list`): the explore
//      file aimed at it, found or not within the file's default trial
//      budget, trials and time to the first violation, ops of the first
//      failing and of the shrunk plan, total time, confirm rate. A flaw
//      with no explore file aimed at it gets a row saying so.
// Everything printed is measured in this run; nothing is asserted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace idemproof::bench {

struct ExploreBenchOptions {
  std::string idemproof;     // the idemproof binary
  std::string ref;           // the idemproof-ref binary (for --flaw list)
  std::string build_dir;     // --build-dir for the target file's {{build_dir}}
  std::string source_dir;    // scenarios/ live here
  std::string out_dir;       // run directories (kept, for the repros)
  int clean_trials = 40;     // trials per file for the trials/s table
  std::vector<std::string> files;  // explore files (stems) of that table; empty: every scenarios/explore/*.yaml; {"none"}: no such table
  std::vector<int> jobs = {1, 2};  // --jobs of that table
  std::uint64_t seed = 7;    // the per-flaw runs' seed
  std::vector<std::string> flaws;  // empty: every flaw the reference lists; {"none"}: no flaw table
};

void explore_section(const ExploreBenchOptions& options);

}  // namespace idemproof::bench
