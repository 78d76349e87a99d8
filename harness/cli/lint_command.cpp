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
#include "model/not_applicable.h"
#include "session/session.h"

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
  LoadedSuite suite = LoadScenarios(paths, target ? &*target : nullptr);
  if (suite.errors > 0) {
    std::cerr << "idemproof: " << suite.errors << " error(s)\n";
    return kExitUsage;
  }
  std::cout << suite.scenarios.size() << " scenario(s) ok"
            << (target ? " against target " + target->name : "") << "\n";
  if (!target) return kExitOk;
  // What a run would say before any request: the rows the target cannot
  // run, grouped by what it lacks; a target that would test nothing is exit 3.
  RunResults foreseen;
  std::vector<std::string> runs, skips;
  std::vector<std::vector<std::string>> skip_needs;  // per skipped row
  for (const auto& s : suite.scenarios) {
    const std::vector<std::string> needs = CheckScenarioAgainstTarget(s, *target).needs;
    ScenarioResult row = needs.empty() ? ScenarioResult{} : session::NotApplicableResult(s, needs);
    if (needs.empty()) row.verdicts.push_back(Verdict::Valid("bound", "runnable"));
    foreseen.scenarios.push_back(std::move(row));
    std::string line = "  " + std::string(LayerName(s.layer)) + "/" + s.name;
    if (needs.empty()) {
      std::string bound;
      for (const auto& p : s.parameters)
        if (auto it = s.binding.find(p.name); it != s.binding.end())
          bound += (bound.empty() ? "" : ", ") + p.name + "=" + it->second;
      runs.push_back(line + (bound.empty() ? "" : "  (" + bound + ")"));
    } else {
      skips.push_back(line);
      skip_needs.push_back(needs);
    }
  }
  // Each row names its causes by their number in the table below: the
  // causes themselves are said once, there.
  const auto causes = NotApplicableCauses(foreseen);
  for (std::size_t i = 0; i < skips.size(); ++i) {
    std::string refs;
    for (const auto& need : skip_needs[i]) {
      for (std::size_t k = 0; k < causes.size(); ++k)
        if (causes[k].need == need) refs += (refs.empty() ? "" : ", ") + ("#" + std::to_string(k + 1));
    }
    skips[i] += ": needs " + refs;
  }
  std::cout << "will run " << runs.size() << " row(s):\n";
  for (const auto& line : runs) std::cout << ConsoleSafe(line) << "\n";
  std::cout << "not applicable " << skips.size() << " row(s):\n";
  for (const auto& line : skips) std::cout << ConsoleSafe(line) << "\n";
  PrintNotApplicableTable(foreseen, std::cout);
  if (foreseen.NothingTested()) {
    std::cerr << "idemproof: target " << target->name << " would test nothing: every row is not applicable\n";
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
  cmd->add_option("paths", args->paths, "scenario files or folders")->required();
  cmd->add_option("--target", args->target_file, "also check the scenarios against this target file");
  table.Add({cmd, [args] { return Lint(args->paths, args->target_file); }});
}

}  // namespace idemproof::cli
