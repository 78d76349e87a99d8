// idemproof-proxy: `idemproof proxy` as a standalone executable.
#include <iostream>

#include <CLI/CLI.hpp>

#include "injectors/proxy_command.h"

int main(int argc, char** argv) {
  CLI::App app{"idemproof-proxy: the HTTP-aware chaos proxy, alone"};
  idemproof::injectors::ProxyCommandOptions options;
  idemproof::injectors::add_proxy_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return idemproof::injectors::run_proxy_command(options, std::cout, std::cerr);
}
