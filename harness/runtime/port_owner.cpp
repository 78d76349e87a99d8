#include "runtime/port_owner.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace idemproof::runtime {

namespace {

namespace fs = std::filesystem;

// Inodes of the LISTEN (state 0A) sockets on `port` in one /proc/net table.
void listen_inodes(const std::string& table, int port, std::set<std::string>& out) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state, queues, timer, retrans, uid, timeout, inode;
    if (!(fields >> sl >> local >> remote >> state >> queues >> timer >> retrans >> uid >> timeout >> inode)) continue;
    auto colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) out.insert(inode);
  }
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

pid_t pgid_of(pid_t pid) {
  const std::string stat = read_all("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = 0;
  rest >> state >> ppid >> pgrp;
  return static_cast<pid_t>(pgrp);
}

std::string command_of(pid_t pid) {
  std::string cmd = read_all("/proc/" + std::to_string(pid) + "/cmdline");
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  if (cmd.size() > 120) cmd = cmd.substr(0, 120) + "...";
  return cmd.empty() ? "?" : cmd;
}

}  // namespace

std::string PortHolder::Describe() const {
  if (pid == 0) return "a process the harness cannot see";
  return "pid " + std::to_string(pid) + " (" + command + ")";
}

std::vector<PortHolder> ListenersOn(int port) {
  std::set<std::string> inodes;
  listen_inodes("/proc/net/tcp", port, inodes);
  listen_inodes("/proc/net/tcp6", port, inodes);
  std::vector<PortHolder> out;
  if (inodes.empty()) return out;
  std::set<std::string> found;
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    bool holds = false;
    std::error_code fd_ec;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      const std::string link = fs::read_symlink(fd.path(), link_ec).string();
      if (link_ec || link.rfind("socket:[", 0) != 0) continue;
      const std::string inode = link.substr(8, link.size() - 9);
      if (inodes.count(inode) != 0) {
        found.insert(inode);
        holds = true;
      }
    }
    if (holds) out.push_back({pid, pgid_of(pid), command_of(pid)});
  }
  if (found.size() < inodes.size()) out.push_back({});
  return out;
}

int LoopbackPort(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return 0;
  std::string authority = url.substr(scheme.size());
  authority = authority.substr(0, authority.find('/'));
  std::string host;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    auto end = authority.find(']');
    if (end == std::string::npos) return 0;
    host = authority.substr(1, end - 1);
    if (end + 1 < authority.size() && authority[end + 1] == ':') port = authority.substr(end + 2);
  } else {
    auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  const bool loopback = host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
  if (!loopback) return 0;
  if (port.empty()) return 80;
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) return 0;
  const int n = std::stoi(port);
  return n > 0 && n < 65536 ? n : 0;
}

}  // namespace idemproof::runtime
