// `idemproof lint PATH... [--target FILE]`: the scenario files loaded, and
// with a target, bound and checked against it, without a request: every
// row (scenario x binding) a run would run, with what each parameter bound
// to, and every row it could not, with the reason (issue 34: the user learnt
// it only from a run).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/command_support.h"
#include "cli/summary_table.h"
#include "model/console_text.h"

namespace idemproof::cli {

namespace {

int Lint(const std::vector<std::string>& paths, const std::string& target_file) {
  std::optional<TargetDescription> target;
  if (!target_file.empty()) {
    auto t = LoadTargetFile(target_file);
    if (!t.ok()) {
      std::cerr << ConsoleSafe(t.status().ToString()) << "\n";
      return kExitUsage;
    }
    target = std::move(t).value();
  }
  LoadedSuite suite = LoadScenarios(PathsOrSuite(paths), target ? &*target : nullptr);
  if (suite.errors > 0) {
    std::cerr << "idemproof: " << suite.errors << " error(s)\n";
    return kExitUsage;
  }
  std::cout << suite.scenarios.size() << " scenario(s) ok"
            << (target ? " against target " + ConsoleSafe(target->name) : "") << "\n";
  if (!target) return kExitOk;
  // What a run would say before any request: the rows the target cannot
  // run, grouped by what it lacks; a target that would test nothing is exit 3.
  const RowPlan plan = PlanRows(suite.scenarios, *target);
  PrintRowPlan(plan, std::cout);
  if (plan.foreseen.NothingTested()) {
    std::cerr << "idemproof: target " << ConsoleSafe(target->name) << " would test nothing: every row is not applicable\n";
    return kExitUndecided;
  }
  return kExitOk;
}

}  // namespace

void AddLintCommand(CLI::App& app, CommandTable& table) {
  struct LintArgs {
    std::vector<std::string> paths;
    std::string target_file;
  };
  auto args = std::make_shared<LintArgs>();
  CLI::App* cmd = app.add_subcommand("lint", "validate scenario files (and their fit to a target)");
  cmd->add_option("paths", args->paths,
                  "scenario files or folders (default: the suite, `idemproof --print-suite-dir`)");
  cmd->add_option("--target", args->target_file, "also check the scenarios against this target file");
  table.Add({cmd, [args] { return Lint(args->paths, args->target_file); }});
}

}  // namespace idemproof::cli
