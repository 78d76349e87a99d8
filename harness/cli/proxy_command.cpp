// `idemproof proxy`: the chaos proxy alone in front of a running target; its
// body is injectors::run_proxy_command (injectors/proxy_command.h), which
// waits for SIGINT/SIGTERM itself.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "injectors/proxy_command.h"

namespace idemproof::cli {

void AddProxyCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<injectors::ProxyCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "proxy", "run the chaos proxy alone in front of a running target (until Ctrl-C)");
  cmd->add_option("--upstream", args->upstream, "target to forward to, HOST:PORT")->required();
  cmd->add_option("--listen", args->listen, "address to listen on, HOST:PORT (port 0: ephemeral)")
      ->capture_default_str();
  cmd->add_option("--fault", args->faults,
                  "an injector block in YAML, e.g. 'drop-response: {first: 1}' (repeatable)");
  cmd->add_option("--upstream-timeout", args->upstream_timeout, "deadline of each upstream exchange")
      ->capture_default_str();
  cmd->add_flag("--upstream-http2", args->upstream_http2,
                "speak HTTP/2 to the upstream (h2c, prior knowledge): one stream per exchange");
  table.Add({cmd, [args] { return injectors::run_proxy_command(*args, std::cout, std::cerr); },
             /*handles_signals=*/true});
}

}  // namespace idemproof::cli
