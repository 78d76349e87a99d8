// `idemproof proxy`: the chaos proxy alone, in front of a running target.
//
//   idemproof proxy --upstream 127.0.0.1:8080 [--listen 127.0.0.1:0]
//                   [--fault 'drop-response: {first: 1}']... [--upstream-timeout 30s]
//                   [--upstream-http2]
//
// Each --fault is one injector block in YAML (flow style), exactly as in a
// scenario: a bare kind (`hedge`) or `kind: {options}`. The command prints
// `listening on HOST:PORT` first (the same line the reference service prints),
// then one JSON line per fault event, and runs until SIGINT or SIGTERM; then it
// heals the proxy and prints one counter line per fault, warning on stderr
// about every fault that never fired.
//
// The options and help texts are the CLI's (harness/cli/proxy_command.cpp);
// this is the command's body.
//
// Exit codes follow the idemproof CLI: 0 ran and healed, 2 bad usage or
// configuration (nothing started), 3 could not listen.
//
// Thread-safety: run_proxy_command() blocks SIGINT and SIGTERM in the calling
// thread while it runs (to sigwait() for them); call it from the main thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace idemproof::injectors {

struct ProxyCommandOptions {
  std::string listen = "127.0.0.1:0";
  std::string upstream;
  std::vector<std::string> faults;
  std::string upstream_timeout = "30s";
  bool upstream_http2 = false;  // h2c prior knowledge to the upstream (ProxySettings::upstream_http2)
};

int run_proxy_command(const ProxyCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace idemproof::injectors
