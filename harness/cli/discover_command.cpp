// `idemproof discover --target FILE`: a few harmless probes per keyed action
// against the target (started when the file says how), and the contract
// they showed as a diff against the file's `idempotency:` section, with the
// evidence (discover/discoverer.h, discover/contract_inference.h).
//
// Exit codes: 0 the contract seen matches the file, 1 it differs (the '-'/'+'
// lines), 2 bad usage or configuration, 3 could not decide (the target did
// not start or answer, no keyed action, nothing answered 2xx), 130 interrupted.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "cli/command.h"
#include "cli/command_support.h"
#include "discover/discoverer.h"
#include "model/console_text.h"
#include "model/target_commands.h"
#include "platform/interrupt.h"

namespace fs = std::filesystem;

namespace idemproof::cli {

namespace {

struct DiscoverArgs {
  std::string target_file;
  std::string flaw;
  std::string build_dir;
  std::string out_dir = "runs";
};

int Discover(const DiscoverArgs& args) {
  auto target = LoadTargetFile(args.target_file);
  if (!target.ok()) {
    std::cerr << ConsoleSafe(target.status().ToString()) << "\n";
    return kExitUsage;
  }
  if (!args.flaw.empty() && (!target->start || target->start->flaw_args.empty())) {
    std::cerr << "idemproof: --flaw needs a target that declares start.flaw_args ("
              << ConsoleSafe(args.target_file) << " does not)\n";
    return kExitUsage;
  }
  discover::DiscoverOptions o;
  o.vars["build_dir"] = args.build_dir.empty() ? DefaultBuildDir() : fs::absolute(args.build_dir).string();
  o.vars["source_dir"] = DataDir();
  if (!args.flaw.empty()) o.flaw = args.flaw;
  o.out_root = args.out_dir;
  o.seed = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  o.cancel = &runtime::InterruptFlag();

  const discover::ProbePlan plan = discover::PlanProbes(*target);
  std::cout << "idemproof discover: " << ConsoleSafe(target->name)
            << (args.flaw.empty() ? "" : " with flaw " + ConsoleSafe(args.flaw))
            << ": " << plan.probed.size() << " keyed action(s), at most " << plan.requests << " requests (bound "
            << discover::kMostRequests << " in all, " << discover::kMostPerAction << " per action)\n";
  for (const std::string& why : plan.left_out) std::cout << "  not probed: " << ConsoleSafe(why) << "\n";
  if (plan.probed.empty()) {
    std::cerr << "idemproof: no keyed action (role create, pay, put or delete) to probe in "
              << ConsoleSafe(args.target_file) << "\n";
    return kExitUndecided;
  }
  // Nothing from the target file runs unseen (issue 43).
  std::cerr << DeclaredCommandsNotice(*target, o.flaw) << std::flush;
  auto d = discover::Discover(*target, o);
  if (!d.ok()) {
    std::cerr << "idemproof: " << ConsoleSafe(d.status().ToString()) << "\n";
    return kExitUndecided;
  }
  if (d->interrupted) {
    std::cerr << "idemproof: interrupted; run directory " << d->run_dir << "\n";
    return kExitInterrupted;
  }
  std::cout << "sent " << d->requests_sent << " request(s) (plan: at most " << plan.requests << ")\n\n";
  if (!d->answers.empty()) {
    std::cout << "evidence:\n";
    for (const discover::ProbeAnswer& a : d->answers) std::cout << "  " << ConsoleSafe(a.Evidence()) << "\n";
    std::cout << "\n";
  }
  if (!d->run_error.ok()) {
    std::cerr << "idemproof: the probes did not run through: " << ConsoleSafe(d->run_error.ToString())
              << "\n  (target logs in " << d->run_dir << ")\n";
    return kExitUndecided;
  }
  const discover::Proposal proposal = discover::InferContract(d->answers, *target);
  if (!proposal.undecided.empty()) {
    std::cerr << "idemproof: could not decide: " << ConsoleSafe(proposal.undecided) << "\n";
    return kExitUndecided;
  }
  std::cout << "contract seen, against " << ConsoleSafe(args.target_file) << " (' ' as declared, '-' the file, '+' seen):\n";
  std::istringstream lines(discover::ProposalText(proposal));
  for (std::string line; std::getline(lines, line);) std::cout << ConsoleSafe(line) << "\n";
  for (const std::string& note : proposal.notes) std::cout << "note: " << ConsoleSafe(note) << "\n";
  const int differences = proposal.Differences();
  std::cout << "\n" << (differences == 0 ? "matches the target file" : std::to_string(differences) + " difference(s) from the target file")
            << " (run directory " << d->run_dir << ")\n";
  return differences == 0 ? kExitOk : 1;
}

}  // namespace

void AddDiscoverCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<DiscoverArgs>();
  CLI::App* cmd = app.add_subcommand(
      "discover", "probe a target's keyed actions and propose the idempotency contract it shows, as a diff to its file");
  cmd->add_option("--target", args->target_file, "the target file")->required();
  cmd->add_option("--flaw", args->flaw, "start the target with this flaw (its start.flaw_args)");
  cmd->add_option("--build-dir", args->build_dir,
                  "{{build_dir}} in target files (default: $IDEMPROOF_BUILD_DIR, else the build folder of this executable)");
  cmd->add_option("--out", args->out_dir, "where the run folder (target logs, history) goes")->capture_default_str();
  table.Add({cmd, [args] { return Discover(*args); }});
}

}  // namespace idemproof::cli
