#include "platform/port_owner.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace idemproof::runtime {

namespace {

namespace fs = std::filesystem;

// Inodes of the LISTEN (state 0A) sockets on `port` in one /proc/net table.
// Walks every socket of the machine: the fallback when netlink is refused.
void proc_listen_inodes(const std::string& table, int port, std::set<std::string>& out) {
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

// The same by NETLINK_SOCK_DIAG, asking the kernel for listening sockets
// only: /proc/net/tcp also walks every connection and TIME_WAIT socket, which
// a long explore run leaves by the thousand. False when netlink is refused.
bool diag_listen_inodes(int family, int port, std::set<std::string>& out) {
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return false;
  const timeval deadline{1, 0};  // the kernel answers at once; never wait longer
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof deadline);
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } msg{};
  msg.header.nlmsg_len = sizeof msg;
  msg.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.request.sdiag_family = static_cast<__u8>(family);
  msg.request.sdiag_protocol = IPPROTO_TCP;
  msg.request.idiag_states = 1U << TCP_LISTEN;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    ::close(fd);
    return false;
  }
  // A bounded read: a dump ends with NLMSG_DONE; listening sockets are few.
  alignas(nlmsghdr) char buf[16384];
  bool done = false;
  bool ok = true;
  for (int reads = 0; !done && ok && reads < 1000; ++reads) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      ok = false;
      break;
    }
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) {
        done = true;
        break;
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        ok = false;
        break;
      }
      const auto* sock = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (ntohs(sock->id.idiag_sport) == port) out.insert(std::to_string(sock->idiag_inode));
    }
  }
  ::close(fd);
  return ok && done;
}

void listen_inodes(int port, std::set<std::string>& out) {
  std::set<std::string> found;
  if (diag_listen_inodes(AF_INET, port, found) && diag_listen_inodes(AF_INET6, port, found)) {
    out.insert(found.begin(), found.end());
    return;
  }
  proc_listen_inodes("/proc/net/tcp", port, out);
  proc_listen_inodes("/proc/net/tcp6", port, out);
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

// The listening inodes among `pid`'s descriptors (removed from `inodes`).
bool take_held(pid_t pid, std::set<std::string>& inodes) {
  bool holds = false;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    const std::string link = fs::read_symlink(fd.path(), link_ec).string();
    if (link_ec || link.rfind("socket:[", 0) != 0) continue;
    if (inodes.erase(link.substr(8, link.size() - 9)) != 0) holds = true;
  }
  return holds;
}

}  // namespace

std::string PortHolder::Describe() const {
  if (pid == 0) return "a process the harness cannot see";
  return "pid " + std::to_string(pid) + " (" + command + ")";
}

std::vector<PortHolder> ListenersOn(int port, pid_t likely) {
  std::set<std::string> inodes;
  listen_inodes(port, inodes);
  std::vector<PortHolder> out;
  if (inodes.empty()) return out;
  // The usual answer first: one process's descriptors, not every process's.
  if (likely > 0 && take_held(likely, inodes)) out.push_back({likely, pgid_of(likely), command_of(likely)});
  if (inodes.empty()) return out;
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == likely) continue;
    if (take_held(pid, inodes)) out.push_back({pid, pgid_of(pid), command_of(pid)});
    if (inodes.empty()) return out;
  }
  out.push_back({});  // a socket no visible process holds
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
