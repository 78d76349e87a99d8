// `idemproof explore`: the subcommand's body; its options and help texts are
// the CLI's (harness/cli/explore_command.cpp). Prints the seed at start, a
// live progress line on a terminal, then the outcome: the minimal plan, its
// reproduction rate, the invalid oracles, the repro file and the command that
// replays it.
//
// Exit codes: 0 no violation in the trials run; 1 a violation (repro
// written); 2 bad usage or configuration (nothing ran); 3 undecided (the
// target could not be started, or no trial could run); 130 interrupted.
//
// Thread-safety: call once per process (see explorer.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "runtime/interpreter.h"

namespace idemproof::explore {

struct ExploreArgs {
  std::string spec_file;
  std::string target_file;
  std::string out_dir = "idemproof-runs";
  std::optional<int> trials;
  std::optional<int> max_ops;
  std::optional<std::uint64_t> seed;
  std::string run_namespace;  // --namespace; "" = a fresh one
  std::string time_budget;  // a duration ("90s"); empty = none
  std::optional<int> reruns;
  std::optional<int> confirm;
  std::string flaw;
  std::string profile;  // --profile
  std::string build_dir;
  bool strict = false;  // --strict
  std::string isolation = "namespace";  // --isolation namespace|process
  std::string shard;    // --shard K/N: only the trials i with i mod N = K - 1
  int jobs = 1;         // --jobs N: trial workers, each with its own target
};

// `default_build_dir` / `source_dir`: {{build_dir}} unless --build-dir, and
// {{source_dir}}. The factories make a last-byte sender and a fault runner
// per trial worker; empty ones leave last-byte bursts and fault ops out of
// the alphabet (reported), and allow one worker only.
int RunExploreCommand(const ExploreArgs& args, const std::string& default_build_dir, const std::string& source_dir,
                      const std::function<std::unique_ptr<runtime::BurstSender>()>& new_last_byte_burst,
                      const std::function<std::unique_ptr<runtime::FaultRunner>()>& new_faults, std::ostream& out,
                      std::ostream& err);

}  // namespace idemproof::explore
