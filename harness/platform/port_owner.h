// Who listens on a local TCP port: the harness checks that the process it
// started is the one answering (a stale server on a fixed port would
// otherwise be what gets tested).
//
// Read from NETLINK_SOCK_DIAG (LISTEN sockets and their inodes; /proc/net/tcp
// and tcp6 where netlink is refused) and /proc/PID/fd (which process holds
// each inode). Linux only.
//
// Thread-safety: pure reads of /proc; safe from any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace idemproof::runtime {

struct PortHolder {
  pid_t pid = 0;   // 0: a socket whose holder the harness cannot see
  pid_t pgid = 0;  // its process group
  std::string command;  // its command line (argv joined by spaces, cut), or "?"
  // "pid 4242 (idemproof-ref --port 8080)"
  std::string Describe() const;
};

// Every process holding a LISTEN socket on `port` (any local address, IPv4
// or IPv6); empty when nothing listens there (or in another network namespace).
// `likely` (a pid, or 0) is looked at first: when it holds every such socket,
// no other process is read.
std::vector<PortHolder> ListenersOn(int port, pid_t likely = 0);

// The port of an http:// URL whose host is loopback (127.x, localhost, [::1]);
// 0 for any other URL (nothing the harness can check locally).
int LoopbackPort(const std::string& url);

}  // namespace idemproof::runtime
