#include "support/reference_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

extern char** environ;

namespace idemproof::testkit {

namespace fs = std::filesystem;

std::optional<std::string> find_reference_binary(const std::string& binary_dir,
                                                 const std::string& source_dir) {
  if (const char* env = std::getenv("IDEMPROOF_REF"); env && fs::exists(env)) return std::string(env);
  const fs::path own = fs::path(binary_dir) / "reference-impl" / "idemproof-ref";
  if (fs::exists(own)) return own.string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(source_dir, ec)) {
    const fs::path candidate = entry.path() / "reference-impl" / "idemproof-ref";
    if (entry.path().filename().string().rfind("build", 0) == 0 && fs::exists(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

ReferenceProcess::~ReferenceProcess() {
  stop();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

static std::string make_dir() {
  std::string templ = (fs::temp_directory_path() / "idemproof-inj-XXXXXX").string();
  if (!mkdtemp(templ.data())) return "";
  return templ;
}

std::string ReferenceProcess::start(const std::string& binary, const std::vector<std::string>& args,
                                    std::chrono::milliseconds ready_timeout) {
  if (dir_.empty()) dir_ = make_dir();
  std::vector<std::string> argv_s{binary, "--port", "0", "--db", dir_ + "/ref.db"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  return start_command(std::move(argv_s), ready_timeout);
}

std::string ReferenceProcess::output() const {
  std::ifstream in(dir_ + "/stdout.txt");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void ReferenceProcess::signal(int signal_number) const {
  if (pid_ > 0) kill(pid_, signal_number);
}

std::string ReferenceProcess::start_command(std::vector<std::string> argv_s,
                                            std::chrono::milliseconds ready_timeout) {
  const std::regex listening(R"(listening on 127\.0\.0\.1:(\d+))");
  return spawn_until(std::move(argv_s), ready_timeout, [&] {
    std::ifstream in(dir_ + "/stdout.txt");
    std::string line;
    std::smatch m;
    if (!std::getline(in, line) || !std::regex_search(line, m, listening)) return false;
    port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
    return true;
  }, "no 'listening on' line");
}

std::string ReferenceProcess::start_listening(std::vector<std::string> argv, std::uint16_t port,
                                              std::chrono::milliseconds ready_timeout) {
  return spawn_until(std::move(argv), ready_timeout, [&] {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool up = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (up) port_ = port;
    return up;
  }, "nothing accepting on 127.0.0.1:" + std::to_string(port));
}

std::string ReferenceProcess::start_printing(std::vector<std::string> argv, std::uint16_t port,
                                            const std::string& ready_pattern,
                                            std::chrono::milliseconds ready_timeout) {
  const std::regex ready(ready_pattern);
  return spawn_until(std::move(argv), ready_timeout, [&] {
    if (!std::regex_search(output(), ready)) return false;
    port_ = port;
    return true;
  }, "no line matching '" + ready_pattern + "'");
}

std::string ReferenceProcess::spawn_until(std::vector<std::string> argv_s, std::chrono::milliseconds ready_timeout,
                                          const std::function<bool()>& ready, const std::string& what) {
  if (dir_.empty()) dir_ = make_dir();
  if (dir_.empty()) return "mkdtemp failed";
  const std::string binary = argv_s.front();
  const std::string out_path = dir_ + "/stdout.txt";
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir_ + "/stderr.txt").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int rc = posix_spawnp(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    return "posix_spawn " + binary + ": " + std::strerror(rc);
  }
  const std::string name = fs::path(binary).filename().string();
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return "";
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      std::ifstream err(dir_ + "/stderr.txt");
      std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
      return name + " exited before listening (" + what + "): " + text;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop();
  return name + " was not listening within the deadline (" + what + ")";
}

int ReferenceProcess::stop() {
  if (pid_ <= 0) return 0;
  int status = 0;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  return status;
}

}  // namespace idemproof::testkit
