#include "test_support.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/child_process.h"

namespace fs = std::filesystem;

namespace idemproof::testing {

std::string SourceDir() { return IDEMPROOF_SOURCE_DIR; }
std::string BuildDir() { return IDEMPROOF_BINARY_DIR; }
std::string IdemproofExe() { return BuildDir() + "/harness/cli/idemproof"; }
std::string ReferenceExe() { return BuildDir() + "/reference-impl/idemproof-ref"; }

std::string ScratchDir(const std::string& name) {
  static std::atomic<int> counter{0};
  // Only the last run's folders are kept (to read after a failure).
  static const bool cleaned = [] {
    std::error_code ec;
    fs::remove_all(fs::path(BuildDir()) / "test-harness-runtime", ec);
    return true;
  }();
  (void)cleaned;
  fs::path dir = fs::path(BuildDir()) / "test-harness-runtime" /
                 (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
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

}  // namespace idemproof::testing
