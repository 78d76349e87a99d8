// `idemproof explore SPEC --target FILE`: generated interleavings of a
// scenario's explore: block, a failure shrunk to a YAML repro; its body is
// explore::RunExploreCommand (harness/explore/explore_command.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/command_support.h"
#include "explore/explore_command.h"
#include "model/profile.h"
#include "runtime/injector_faults.h"
#include "runtime/last_byte_burst.h"

namespace idemproof::cli {

void AddExploreCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<explore::ExploreArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explore", "generate interleavings from a scenario's explore: block; shrink a failure to a YAML repro");
  cmd->add_option("spec", args->spec_file, "an explore file: a scenario with an explore: block")->required();
  cmd->add_option("--target", args->target_file, "target description (YAML)")->required();
  cmd->add_option("--out", args->out_dir, "where run directories go")->capture_default_str();
  cmd->add_option("--trials", args->trials, "trial budget (default: the spec's explore.trials, else 100)");
  cmd->add_option("--max-ops", args->max_ops, "longest generated plan (default: explore.max_ops, else 8)");
  cmd->add_option("--seed", args->seed, "replay: the same seed generates the same plans");
  cmd->add_option("--namespace", args->run_namespace,
                  "replay the keys, biz ids and uuids too: the namespace a run printed (default: a fresh one)");
  cmd->add_option("--time-budget", args->time_budget, "stop running trials after this long (e.g. 90s, 10m)");
  cmd->add_option("--reruns", args->reruns, "tries per shrink candidate, for races (default: explore.reruns, else 1)");
  cmd->add_option("--confirm", args->confirm, "reruns of the minimal plan for its reproduction rate (default 5)");
  cmd->add_option("--flaw", args->flaw, "start the target with this flaw (its start.flaw_args)");
  cmd->add_option("--build-dir", args->build_dir, "{{build_dir}} in target files");
  cmd->add_option("--isolation", args->isolation,
                  "namespace: trials reuse a running target with fresh keys and ids, restarted only after a plan "
                  "that may change it (kill, restart, pause...); process: a fresh target per trial")
      ->check(CLI::IsMember({"namespace", "process"}))
      ->capture_default_str();
  cmd->add_option("--shard", args->shard,
                  "K/N: run only the trials i with i mod N = K-1 (each trial's plan depends on the seed and i alone)");
  cmd->add_option("--jobs", args->jobs,
                  "trial workers, each with its own target and services; the same seed gives the same plans and "
                  "the same first failing plan whatever N; shrinking runs on one")
      ->capture_default_str();
  cmd->add_flag("--strict", args->strict, "a deviation (a SHOULD missed) fails like a violation (exit 1)");
  cmd->add_option("--profile", args->profile,
                  "judge by these semantics (" + ProfileNames() + "; default: the target's profile:, else ietf)");
  table.Add({cmd, [args] {
               return explore::RunExploreCommand(
                   *args, DefaultBuildDir(), DataDir(),
                   [] { return std::unique_ptr<runtime::BurstSender>(std::make_unique<runtime::LastByteBurst>()); },
                   [] { return std::unique_ptr<runtime::FaultRunner>(std::make_unique<runtime::InjectorFaults>()); },
                   std::cout, std::cerr);
             }});
}

}  // namespace idemproof::cli
