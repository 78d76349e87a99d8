// `idemproof init --openapi FILE [--base-url URL | --start 'CMD …'] [-o FILE]`:
// a first target file written from an OpenAPI document (docs/init.md). The
// reading and the writing live in harness/init/; here: the options, the
// check that the written file loads, and where it goes.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "init/openapi_document.h"
#include "init/target_writer.h"
#include "model/console_text.h"
#include "model/target.h"
#include "platform/interrupt.h"

namespace idemproof::cli {

namespace {

struct InitArgs {
  std::string openapi;
  std::string base_url;
  std::string start;
  std::string output;
  bool force = false;
};

int Init(const InitArgs& args) {
  // Bounded (docs/init.md): a regular file only, its size, nodes and time
  // capped; SIGINT/SIGTERM stop the reading.
  init::ReadLimits limits;
  limits.cancel = &runtime::InterruptFlag();
  auto doc = init::LoadOpenApi(args.openapi, limits);
  if (runtime::InterruptSignal() != 0) return kExitInterrupted;
  if (!doc.ok()) {
    std::cerr << ConsoleSafe(doc.status().ToString()) << "\n";
    return kExitUsage;
  }
  for (const auto& warning : doc->warnings) std::cerr << "warning: " << ConsoleSafe(warning) << "\n";
  init::InitOptions options;
  options.document_label = args.openapi;
  options.base_url = args.base_url;
  options.start = args.start;
  // The JSON Schema shipped beside the sources (schemas/), when there is one.
  const std::filesystem::path schema = std::filesystem::path(IDEMPROOF_SOURCE_DIR) / "schemas/target.schema.json";
  // Named from the written file's folder, so the line holds in a checkout.
  if (std::filesystem::exists(schema)) {
    std::error_code ec;
    const auto from = args.output.empty() || args.output == "-"
                          ? std::filesystem::current_path(ec)
                          : std::filesystem::absolute(args.output, ec).parent_path();
    // Relative inside the checkout (the line survives a move of it), absolute elsewhere.
    const auto source = std::filesystem::weakly_canonical(IDEMPROOF_SOURCE_DIR, ec);
    const auto inside = std::filesystem::weakly_canonical(from, ec).lexically_relative(source);
    const auto relative = std::filesystem::relative(schema, from, ec);
    const bool in_checkout = !inside.empty() && *inside.begin() != "..";
    options.schema_ref = ec || relative.empty() || !in_checkout ? schema.string() : relative.string();
  }
  auto text = init::WriteTarget(*doc, options);
  if (!text.ok()) {
    std::cerr << ConsoleSafe(text.status().ToString()) << "\n";
    return kExitUsage;
  }
  // Never hand out a file the loader would refuse: that is a bug of init's.
  const std::string shown = args.output.empty() ? "<stdout>" : args.output;
  if (auto loaded = ParseTarget(*text, shown); !loaded.ok()) {
    std::cerr << "idemproof init: the target written from " << args.openapi
              << " does not load (please report it):\n  " << ConsoleSafe(loaded.status().ToString()) << "\n";
    return kExitUsage;
  }
  if (args.output.empty() || args.output == "-") {
    std::cout << *text;
    return kExitOk;
  }
  if (std::filesystem::exists(args.output) && !args.force) {
    std::cerr << "idemproof init: " << args.output << " exists (--force to overwrite it)\n";
    return kExitUsage;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out << *text;
  out.close();
  if (!out) {
    std::cerr << "idemproof init: cannot write " << args.output << "\n";
    return kExitUsage;
  }
  std::size_t confirms = 0;
  for (std::size_t at = text->find("CONFIRM:"); at != std::string::npos; at = text->find("CONFIRM:", at + 1)) ++confirms;
  std::cerr << "wrote " << args.output << " from " << args.openapi << ": " << confirms
            << " CONFIRM comment(s) to read; then: idemproof lint scenarios/ --target " << args.output << "\n";
  return kExitOk;
}

}  // namespace

void AddInitCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<InitArgs>();
  CLI::App* cmd = app.add_subcommand("init", "write a first target file from an OpenAPI 3.0/3.1 document");
  cmd->add_option("--openapi", args->openapi, "the OpenAPI document (YAML or JSON)")->required();
  auto* base = cmd->add_option("--base-url", args->base_url, "where the service already runs");
  auto* start = cmd->add_option("--start", args->start,
                                "the command that starts the service (words; '…' quotes; {{port}}: a free port)");
  base->excludes(start);
  cmd->add_option("-o,--output", args->output, "the target file to write (default: standard output)");
  cmd->add_flag("--force", args->force, "overwrite the output file");
  table.Add({cmd, [args] { return Init(*args); }});
}

}  // namespace idemproof::cli
