// Helpers for the runtime tests: a fresh scratch folder per test under the
// build folder, file reading, and running the `idemproof` executable as a
// real child process with its output captured.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "platform/child_process.h"

namespace idemproof::testing {

// A new empty folder under <build>/test-harness-runtime/<name>-<pid>-<n>;
// the first call of a process removes the folders of earlier runs.
std::string ScratchDir(const std::string& name);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

std::string IdemproofExe();   // <build>/harness/cli/idemproof
std::string ReferenceExe();   // <build>/reference-impl/idemproof-ref
std::string SourceDir();
std::string BuildDir();

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal / did not finish
  std::string out;
  std::string err;
};

// Runs idemproof with `args` in `cwd`, waits up to `timeout`, kills it after.
// The default is the whole suite's time on a loaded 2-core machine (the
// PostgreSQL cluster's, 90 s alone, passed 120 s beside four builds); the
// ctest TIMEOUT (600 s) stays the bound of a case.
CliResult RunIdemproof(const std::vector<std::string>& args, const std::string& cwd,
                       std::chrono::seconds timeout = std::chrono::seconds(300));

// `idemproof run dir/scenarios --target dir/target.yaml --out dir/runs` in
// `dir`, output to dir/cli.out and dir/cli.err: for tests that signal it.
runtime::ProcessSpec IdemproofRunSpec(const std::string& dir);

// The pids whose parent is `parent` (from /proc).
std::vector<pid_t> ChildrenOf(pid_t parent);
// True while /proc/<pid> exists (running or zombie).
bool ProcessExists(pid_t pid);
// True while <pid> runs: a zombie has ended. For processes this test may have
// adopted as a subreaper and does not reap.
bool ProcessRunning(pid_t pid);

// The verdicts of a results.json of a run on a correct service: every one
// must be valid, or not_applicable with its reason (`evidence`); `problems` names each
// that is not, as "scenario oracle: status (reason)".
struct VerdictTally {
  int valid = 0;
  int not_applicable = 0;
  std::vector<std::string> problems;
  std::string ProblemText() const;
};
VerdictTally TallyVerdicts(const std::string& results_json);

}  // namespace idemproof::testing
