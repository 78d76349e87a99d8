#include "explore_section.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace idemproof::bench {
namespace {

namespace fs = std::filesystem;

// The explore file aimed at each flaw of the reference (scenarios/explore/).
const std::map<std::string, std::string>& FileForFlaw() {
  static const std::map<std::string, std::string> kFiles = {
      {"check-then-insert", "create-order"}, {"request-id-key", "create-order"},
      {"memory-store", "create-order"},      {"no-fingerprint", "create-order"},
      {"cache-retryable", "create-order"},   {"volatile-replay", "create-order"},
      {"empty-replay", "create-order"},      {"short-ttl", "create-order"},
      {"delete-releases-twice", "cancel-order"}, {"put-increment", "set-address"},
      {"inbox-no-dedup", "inbox"},           {"whole-batch-marker", "batch"},
      {"no-range-marker", "batch"},          {"batch-id-in-request-table", "batch"},
      {"coarse-marker", "batch"},            {"no-intent", "payment"},
      {"callback-no-dedup", "callback"},      {"no-lease-expiry", "in-flight"},
      {"unfenced-takeover", "takeover"},      {"fingerprint-key-order", "create-order"},
      {"fast-path-skips-fingerprint", "create-order"}, {"expiry-race", "after-window"},
      {"store-after-answer", "after-answer"}, {"cross-caller-replay", "callers"},
      {"instance-local-claims", "across-instances"},
  };
  return kFiles;
}

// The reference target file an explore file runs against: a file that
// needs several instances (`min_instances` above 1) runs on the cluster.
std::string TargetForFile(const ExploreBenchOptions& o, const std::string& file) {
  try {
    const YAML::Node doc = YAML::LoadFile(o.source_dir + "/scenarios/explore/" + file + ".yaml");
    if (doc["min_instances"] && doc["min_instances"].as<int>() > 1) return "reference-cluster";
  } catch (const YAML::Exception&) {
    // idemproof explore reports the bad file itself, with its line and column.
  }
  return "reference";
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct ExploreRun {
  int exit_code = -1;
  double wall_s = 0;
  nlohmann::json report;  // explore.json (null when none was written)
  std::string log;
};

// One `idemproof explore` as a child process, in a fresh out folder.
ExploreRun RunExplore(const ExploreBenchOptions& o, const std::string& file, const std::string& flaw,
                      const std::string& extra, const std::string& tag) {
  const std::string out = o.out_dir + "/" + tag;
  fs::remove_all(out);
  fs::create_directories(out);
  std::string cmd = Quote(o.idemproof) + " explore " + Quote(o.source_dir + "/scenarios/explore/" + file + ".yaml") +
                    " --target " + Quote(o.source_dir + "/scenarios/targets/" + TargetForFile(o, file) + ".yaml") + " --build-dir " +
                    Quote(o.build_dir) + " --out " + Quote(out) + " --seed " + std::to_string(o.seed) + " " + extra;
  if (!flaw.empty()) cmd += " --flaw " + Quote(flaw);
  cmd += " > " + Quote(out + "/explore.log") + " 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  ExploreRun r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.log = ReadAll(out + "/explore.log");
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.is_directory() && fs::exists(entry.path() / "explore.json")) {
      r.report = nlohmann::json::parse(ReadAll((entry.path() / "explore.json").string()), nullptr, false);
    }
  }
  return r;
}

std::string Seconds(std::int64_t ms) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << ms / 1000.0 << " s";
  return s.str();
}

std::vector<std::string> ListFlaws(const std::string& ref) {
  std::vector<std::string> out;
  FILE* p = ::popen((Quote(ref) + " --flaw list").c_str(), "r");
  if (p == nullptr) return out;
  char line[512];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    std::string s(line);
    const auto end = s.find_first_of(" \t\n");
    if (end > 0 && end != std::string::npos) out.push_back(s.substr(0, end));
  }
  ::pclose(p);
  return out;
}

// `--explore-files none` / `--explore-flaws none`: that table is not wanted.
bool SaysNone(const std::vector<std::string>& list) { return list.size() == 1 && list.front() == "none"; }

void clean_table(const ExploreBenchOptions& o) {
  std::cout << "\n### explore, live: trials per second against the correct reference\n\n"
            << "`idemproof explore FILE --target scenarios/targets/reference.yaml --seed " << o.seed << " --trials "
            << o.clean_trials << " --isolation I --jobs J` (no flaw). process: each trial starts the reference, its "
            << "payment stub and Redis; namespace: trials reuse them (a killed or paused target restarted or "
            << "resumed on the same store) unless the plan fires a hook, injects a fault or spawns an instance; J "
            << "workers each have their own\n\n"
            << "| explore file | isolation | jobs | trials run | target starts | violations | undecided trials | explore time | trials/s | mean plan ops |\n"
            << "|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::string> files = o.files;
  if (files.empty()) {
    for (const auto& entry : fs::directory_iterator(o.source_dir + "/scenarios/explore")) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path().stem().string());
    }
    std::sort(files.begin(), files.end());
  }
  for (const std::string& file : files)
  for (const std::string isolation : {"namespace", "process"})
  for (const int jobs : o.jobs) {
    const ExploreRun r = RunExplore(o, file, "", "--trials " + std::to_string(o.clean_trials) + " --isolation " + isolation +
                                    " --jobs " + std::to_string(jobs),
                                    "clean-" + file + "-" + isolation + "-j" + std::to_string(jobs));
    if (r.report.is_discarded() || r.report.is_null()) {
      std::cout << "| " << file << " | " << isolation << " | " << jobs << " | no report (exit " << r.exit_code
                << ") | | | | | | |\n";
      continue;
    }
    const int trials = r.report.value("trials_run", 0);
    const std::int64_t ms = r.report.value("elapsed_ms", std::int64_t{0});
    // Mean generated ops per trial, from plans.jsonl.
    double ops = 0;
    int plans = 0;
    std::istringstream lines(ReadAll(r.report.value("run_dir", std::string()) + "/plans.jsonl"));
    std::string line;
    while (std::getline(lines, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || j.value("phase", "") != "trials") continue;
      ops += j.value("ops", 0.0);
      ++plans;
    }
    std::ostringstream rate, mean;
    rate << std::fixed << std::setprecision(2) << (ms > 0 ? trials * 1000.0 / static_cast<double>(ms) : 0.0);
    mean << std::fixed << std::setprecision(1) << (plans > 0 ? ops / plans : 0.0);
    std::cout << "| " << file << " | " << isolation << " | " << jobs << " | " << trials << " | "
              << r.report.value("target_starts", 0) << " | " << (r.report.value("violation", false) ? "**1**" : "0")
              << " | " << r.report.value("undecided_trials", 0) << " | " << Seconds(ms) << " | " << rate.str() << " | "
              << (plans > 0 ? mean.str() : "?") << " |\n";
  }
}

void flaw_table(const ExploreBenchOptions& o) {
  std::vector<std::string> flaws = o.flaws.empty() ? ListFlaws(o.ref) : o.flaws;
  std::cout << "\n### explore, live: per flaw of the reference\n\n"
            << "`idemproof explore FILE --target scenarios/targets/reference.yaml --flaw F --seed " << o.seed
            << "` with the file's default trial budget. \"ops\" counts generated ops (fixed steps of the file "
               "excluded); confirm = reruns of the minimal plan that failed again.\n\n"
            << "| flaw | explore file | found | trials to find | time to first violation | ops, first failing plan | "
               "ops after shrinking | minimal plan | oracle(s) invalid | confirm | total time |\n"
            << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& flaw : flaws) {
    auto it = FileForFlaw().find(flaw);
    if (it == FileForFlaw().end()) {
      std::cout << "| " << flaw << " | none aimed at it | not run | | | | | | | | |\n";
      continue;
    }
    const ExploreRun r = RunExplore(o, it->second, flaw, "", "flaw-" + flaw);
    const nlohmann::json& j = r.report;
    if (j.is_discarded() || j.is_null()) {
      std::cout << "| " << flaw << " | " << it->second << " | no report (exit " << r.exit_code << ") | | | | | | | | |\n";
      continue;
    }
    const bool found = j.value("violation", false);
    std::cout << "| " << flaw << " | " << it->second << " | " << (found ? "yes" : "**no**") << " | "
              << j.value("trials_run", 0) << " of " << j.value("trials_budget", 0) << " | ";
    if (found) {
      std::string minimal, oracles;
      for (const auto& op : j.value("minimal", nlohmann::json::array())) {
        minimal += (minimal.empty() ? "" : "; ") + op.get<std::string>();
      }
      for (const auto& v : j.value("invalid", nlohmann::json::array())) {
        oracles += (oracles.empty() ? "" : ", ") + v.value("oracle", std::string());
      }
      std::cout << Seconds(j.value("to_first_failure_ms", std::int64_t{0})) << " | "
                << j.value("first_failure", nlohmann::json::array()).size() << " | "
                << j.value("minimal", nlohmann::json::array()).size() << " | `" << minimal << "` | " << oracles
                << " | " << j.value("reproduced", 0) << "/" << j.value("confirm_runs", 0) << " | ";
    } else {
      std::cout << " | | | | | | ";
    }
    std::cout << Seconds(j.value("elapsed_ms", std::int64_t{0})) << " |\n";
  }
  std::cout << "\nRun directories (repro.yaml of every flaw found): " << o.out_dir << "\n";
}

}  // namespace

void explore_section(const ExploreBenchOptions& o) {
  if (!SaysNone(o.files)) clean_table(o);
  if (!SaysNone(o.flaws)) flaw_table(o);
}

}  // namespace idemproof::bench
