#include "cli/command_support.h"

#include "cli/summary_table.h"
#include "model/not_applicable.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "model/binding.h"
#include "model/console_text.h"
#include "oracles/oracle.h"
#include "reports/junit.h"
#include "runtime/injector_faults.h"
#include "session/scenario_files.h"
#include "session/session.h"
#include "model/results_json.h"

namespace idemproof::cli {

namespace fs = std::filesystem;

namespace {

// <prefix> when this executable is <prefix>/bin/idemproof with the installed
// suite beside it (CMake's install rules); empty in a build tree.
fs::path InstallPrefix() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.parent_path().filename() != "bin") return {};
  const fs::path prefix = exe.parent_path().parent_path();
  if (!fs::is_directory(prefix / IDEMPROOF_INSTALL_DATADIR / "scenarios", ec)) return {};
  return prefix;
}

}  // namespace

std::string DefaultBuildDir() {
  if (const char* env = std::getenv("IDEMPROOF_BUILD_DIR"); env != nullptr && *env != '\0') {
    return fs::absolute(env).lexically_normal().string();
  }
  if (const fs::path prefix = InstallPrefix(); !prefix.empty()) return (prefix / IDEMPROOF_INSTALL_BUILDDIR).string();
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path().string();
  return exe.parent_path().parent_path().parent_path().string();
}

std::string DataDir() {
  if (const fs::path prefix = InstallPrefix(); !prefix.empty()) return (prefix / IDEMPROOF_INSTALL_DATADIR).string();
  return IDEMPROOF_SOURCE_DIR;
}

std::string SuiteDir() { return (fs::path(DataDir()) / "scenarios").string(); }

std::vector<std::string> PathsOrSuite(const std::vector<std::string>& paths) {
  return paths.empty() ? std::vector<std::string>{SuiteDir()} : paths;
}

LoadedSuite LoadScenarios(const std::vector<std::string>& paths, const TargetDescription* target) {
  LoadedSuite out;
  auto files = session::CollectScenarioFiles(paths);
  if (!files.ok()) {
    std::cerr << "idemproof: " << ConsoleSafe(files.status().message()) << "\n";
    ++out.errors;
    return out;
  }
  if (files->empty()) {
    std::cerr << "idemproof: no scenario files (*.yaml) under the given paths\n";
    ++out.errors;
    return out;
  }
  // A fault kind the injectors do not provide is a typo, never a skip.
  static const runtime::InjectorFaults injectors;
  ScenarioVocabulary vocabulary = BuiltinOracles().Vocabulary();
  vocabulary.fault_kinds = injectors.Kinds();
  for (const auto& file : *files) {
    auto scenario = LoadScenarioFile(file, vocabulary);
    if (!scenario.ok()) {
      std::cerr << ConsoleSafe(scenario.status().ToString()) << "\n";
      ++out.errors;
      continue;
    }
    // A fault block's options are the injector's: check them now, not mid-run.
    bool bad_fault = false;
    for (const auto& [name, fault] : scenario->faults) {
      Status valid = injectors.Validate(fault);
      if (!valid.ok()) {
        std::cerr << ConsoleSafe(fault.mark.ToString() + ": " + valid.message()) << "\n";
        ++out.errors;
        bad_fault = true;
      }
    }
    if (bad_fault) continue;
    if (target == nullptr) {
      out.scenarios.push_back(std::move(scenario).value());
      continue;
    }
    // The bind stage: one scenario per fitting action (or one unbound,
    // not_applicable with the reason), each checked against the target.
    for (Scenario& bound : BindScenario(*scenario, *target)) {
      ScenarioFit fit = CheckScenarioAgainstTarget(bound, *target);
      // A fault on an egress must be of that hop's protocol (an http kind
      // on a tcp egress, a tcp kind on an http one): a typo, never a skip.
      for (const auto& [name, fault] : bound.faults) {
        auto egress = target->egress.find(EgressOfHop(fault.on));
        if (egress == target->egress.end()) continue;
        if (Status valid = injectors.ValidateOn(fault, egress->second.tcp); !valid.ok())
          fit.errors.push_back(Status::InvalidConfig(valid.message(), fault.mark));
      }
      for (const auto& e : fit.errors) {
        std::cerr << ConsoleSafe(e.ToString()) << "\n";
        ++out.errors;
      }
      if (fit.errors.empty()) out.scenarios.push_back(std::move(bound));
    }
  }
  return out;
}

RowPlan PlanRows(const std::vector<Scenario>& scenarios, const TargetDescription& target) {
  RowPlan plan;
  for (const auto& s : scenarios) {
    const std::vector<std::string> needs = CheckScenarioAgainstTarget(s, target).needs;
    ScenarioResult row = needs.empty() ? ScenarioResult{} : session::NotApplicableResult(s, needs);
    if (needs.empty()) row.verdicts.push_back(Verdict::Valid("bound", "runnable"));
    plan.foreseen.scenarios.push_back(std::move(row));
    std::string line = "  " + std::string(LayerName(s.layer)) + "/" + s.name;
    if (needs.empty()) {
      std::string bound;
      for (const auto& p : s.parameters)
        if (auto it = s.binding.find(p.name); it != s.binding.end())
          bound += (bound.empty() ? "" : ", ") + p.name + "=" + it->second;
      plan.runs.push_back(line + (bound.empty() ? "" : "  (" + bound + ")"));
    } else {
      plan.skips.push_back(line);
      plan.skip_needs.push_back(needs);
    }
  }
  return plan;
}

void PrintRowPlan(const RowPlan& plan, std::ostream& out) {
  out << "will run " << plan.runs.size() << " row(s):\n";
  for (const auto& line : plan.runs) out << ConsoleSafe(line) << "\n";
  out << "not applicable " << plan.skips.size() << " row(s):\n";
  // Each row names its causes by their number in the table below: the
  // causes themselves are said once, there.
  const auto causes = NotApplicableCauses(plan.foreseen);
  for (std::size_t i = 0; i < plan.skips.size(); ++i) {
    std::string refs;
    for (const auto& need : plan.skip_needs[i])
      for (std::size_t k = 0; k < causes.size(); ++k)
        if (causes[k].need == need) refs += (refs.empty() ? "" : ", ") + ("#" + std::to_string(k + 1));
    out << ConsoleSafe(plan.skips[i] + ": needs " + refs) << "\n";
  }
  PrintNotApplicableTable(plan.foreseen, out);
}

bool WriteOutputs(const RunResults& results, const std::string& junit_file,
                  const std::string& json_file, const session::RunDirectory* dir) {
  bool ok = true;
  auto write = [&](const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) {
      std::cerr << "idemproof: cannot write " << ConsoleSafe(path) << "\n";
      ok = false;
    }
  };
  const std::string junit = RenderJUnit(results);
  if (dir != nullptr) dir->WriteFile("junit.xml", junit);
  if (!junit_file.empty()) write(junit_file, junit);
  if (!json_file.empty()) {
    if (Status st = WriteRunResults(results, json_file); !st.ok()) {
      std::cerr << "idemproof: " << ConsoleSafe(st.message()) << "\n";
      ok = false;
    }
  }
  return ok;
}

}  // namespace idemproof::cli
