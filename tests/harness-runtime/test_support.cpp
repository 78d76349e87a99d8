#include "test_support.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/child_process.h"

namespace fs = std::filesystem;

namespace idemproof::testing {

std::string SourceDir() { return IDEMPROOF_SOURCE_DIR; }
std::string BuildDir() { return IDEMPROOF_BINARY_DIR; }
std::string IdemproofExe() { return BuildDir() + "/harness/cli/idemproof"; }
std::string ReferenceExe() { return BuildDir() + "/reference-impl/idemproof-ref"; }

namespace {

// "<name>-<pid>-<n>": a folder ScratchDir(name) made in an earlier process
// that is gone. A live one is left alone: ctest -j runs cases at once, and
// two cases may share a name (a flaw matrix on SQLite and on PostgreSQL).
bool IsStaleScratchOf(const std::string& folder, const std::string& name) {
  if (folder.size() <= name.size() + 1 || folder.compare(0, name.size() + 1, name + "-") != 0) return false;
  const std::string rest = folder.substr(name.size() + 1);
  const auto dash = rest.find('-');
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() < 10 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  if (dash == std::string::npos || !digits(rest.substr(0, dash)) || !digits(rest.substr(dash + 1))) return false;
  const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
  return pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string ScratchDir(const std::string& name) {
  static std::atomic<int> counter{0};
  static std::mutex mutex;
  static std::set<std::string> cleaned;
  const fs::path root = fs::path(BuildDir()) / "test-harness-runtime";
  {
    // Each test case runs in its own process (one ctest entry per case):
    // only this name's folders from earlier, finished runs go, so another
    // case's folders stay readable after a failure.
    std::lock_guard<std::mutex> lock(mutex);
    if (cleaned.insert(name).second && fs::is_directory(root)) {
      std::error_code ec;
      std::vector<fs::path> earlier;
      for (const auto& entry : fs::directory_iterator(root, ec)) {
        if (IsStaleScratchOf(entry.path().filename().string(), name)) earlier.push_back(entry.path());
      }
      for (const auto& path : earlier) fs::remove_all(path, ec);
    }
  }
  fs::path dir = root / (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

CliResult RunIdemproof(const std::vector<std::string>& args, const std::string& cwd,
                       std::chrono::seconds timeout) {
  static std::atomic<int> counter{0};
  const std::string base = cwd + "/cli-" + std::to_string(counter++);
  runtime::ProcessSpec spec;
  spec.argv = {IdemproofExe()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.stdout_path = base + ".out";
  spec.stderr_path = base + ".err";
  spec.env["IDEMPROOF_BUILD_DIR"] = BuildDir();
  CliResult result;
  auto child = runtime::ChildProcess::Spawn(spec);
  if (!child.ok()) {
    result.err = child.status().ToString();
    return result;
  }
  auto exit = child->WaitFor(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  if (!exit) exit = child->Kill();
  result.exit_code = exit->signalled ? -1 : exit->code;
  result.out = ReadFile(spec.stdout_path);
  result.err = ReadFile(spec.stderr_path);
  return result;
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string stat = ReadFile(entry.path().string() + "/stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid;
    if (rest >> state >> ppid && ppid == parent) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

bool ProcessExists(pid_t pid) { return fs::exists("/proc/" + std::to_string(pid)); }

bool ProcessRunning(pid_t pid) {
  // A zombie has ended: it waits only for its parent, which may be this test
  // process (a subreaper, so it adopts what the harness under test orphans).
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  return text[close + 2] != 'Z';
}

runtime::ProcessSpec IdemproofRunSpec(const std::string& dir) {
  runtime::ProcessSpec spec;
  spec.argv = {IdemproofExe(), "run", dir + "/scenarios", "--target", dir + "/target.yaml", "--out", dir + "/runs"};
  spec.cwd = dir;
  spec.stdout_path = dir + "/cli.out";
  spec.stderr_path = dir + "/cli.err";
  spec.env["IDEMPROOF_BUILD_DIR"] = BuildDir();
  return spec;
}

VerdictTally TallyVerdicts(const std::string& results_json) {
  VerdictTally t;
  const auto results = nlohmann::json::parse(results_json);
  for (const auto& s : results.at("scenarios")) {
    for (const auto& v : s.at("verdicts")) {
      const std::string status = v.at("status");
      const std::string reason = v.value("evidence", std::string());
      if (status == "valid") {
        ++t.valid;
      } else if (status == "not_applicable" && !reason.empty()) {
        ++t.not_applicable;
      } else {
        t.problems.push_back(s.at("name").get<std::string>() + " " + v.value("oracle", std::string("?")) + ": " +
                             status + " (" + reason + ")");
      }
    }
  }
  return t;
}

std::string VerdictTally::ProblemText() const {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

}  // namespace idemproof::testing
