// `idemproof init --openapi FILE [--base-url URL | --start 'CMD …'] [-o FILE]`
// (or `--post PATH [--key-header NAME | --key-body MEMBER]` without a
// document): a first target file (docs/init.md). The reading and the
// writing live in harness/init/; here: the options, the check that the
// written file loads, where it goes, and the closing table.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/command.h"
#include "cli/command_support.h"
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
  std::vector<std::string> paths, tags, operation_ids;
  bool keyed_only = false;
  std::string post, key_header, key_body;  // without a document
};

// The one operation `--post PATH` describes, as a document would: its key a
// required header or a required JSON body member.
init::OpenApiDocument CommandLineDocument(const InitArgs& args) {
  init::OpenApiDocument doc;
  doc.file = "--post " + args.post;
  doc.title = "target";
  init::Operation op;
  op.method = "POST";
  op.path = args.post;
  if (!args.key_header.empty()) {
    op.parameters.push_back({args.key_header, "header", "", true, YAML::Node(), YAML::Node()});
    op.idempotency["key_header"] = args.key_header;  // the user's word: whatever its name
  }
  if (!args.key_body.empty()) {
    op.request_media = "json";
    YAML::Node schema;
    schema["type"] = "object";
    schema["required"].push_back(args.key_body);
    schema["properties"][args.key_body]["type"] = "string";
    schema["properties"][args.key_body]["description"] = "the idempotency key (--key-body)";
    op.request_schema = schema;
  }
  doc.operations.push_back(op);
  return doc;
}

// What became of each write operation, on stderr.
void PrintSummary(const init::InitSummary& summary) {
  std::size_t written = 0;
  for (const auto& row : summary.rows) written += row.action.empty() ? 0 : 1;
  std::cerr << "init: " << summary.operations_read << " operation(s) read, " << summary.rows.size()
            << " write operation(s), " << written << " action(s) written, " << summary.rows.size() - written
            << " skipped\n";
  for (const auto& note : summary.notes) std::cerr << "  " << ConsoleSafe(note) << "\n";
  constexpr std::size_t kShown = 60;
  std::size_t width = 9;
  for (std::size_t i = 0; i < summary.rows.size() && i < kShown; ++i)
    width = std::max(width, std::min<std::size_t>(48, ConsoleSafe(summary.rows[i].operation).size()));
  const auto pad = [](std::string text, std::size_t w) {
    if (text.size() > w) text = text.substr(0, w - 1) + "~";
    return text + std::string(w - text.size() + 2, ' ');
  };
  std::cerr << "  " << pad("operation", width) << pad("action", 28) << pad("key", 34) << "note\n";
  for (std::size_t i = 0; i < summary.rows.size() && i < kShown; ++i) {
    const auto& row = summary.rows[i];
    std::cerr << "  " << pad(ConsoleSafe(row.operation), width) << pad(row.action.empty() ? "-" : ConsoleSafe(row.action), 28)
              << pad(ConsoleSafe(row.key), 34) << ConsoleSafe(row.note) << "\n";
  }
  if (summary.rows.size() > kShown) std::cerr << "  ... " << summary.rows.size() - kShown << " more\n";
}

int Init(const InitArgs& args) {
  if (args.openapi.empty() == args.post.empty()) {
    std::cerr << "idemproof init: give --openapi FILE, or --post PATH (with --base-url or --start) without a document\n";
    return kExitUsage;
  }
  if (!args.post.empty() && args.base_url.empty() && args.start.empty()) {
    std::cerr << "idemproof init: --post needs --base-url URL (or --start 'CMD'): there is no document to name a server\n";
    return kExitUsage;
  }
  if (!args.post.empty() && args.post.front() != '/') {
    std::cerr << "idemproof init: --post takes a path starting with '/', not '" << ConsoleSafe(args.post) << "'\n";
    return kExitUsage;
  }
  // Bounded (docs/init.md): a regular file only, its size, nodes and time
  // capped; SIGINT/SIGTERM stop the reading.
  init::ReadLimits limits;
  limits.cancel = &runtime::InterruptFlag();
  Result<init::OpenApiDocument> doc = args.openapi.empty() ? Result<init::OpenApiDocument>(CommandLineDocument(args))
                                                           : init::LoadOpenApi(args.openapi, limits);
  if (runtime::InterruptSignal() != 0) return kExitInterrupted;
  if (!doc.ok()) {
    std::cerr << ConsoleSafe(doc.status().ToString()) << "\n";
    return kExitUsage;
  }
  for (const auto& warning : doc->warnings) std::cerr << "warning: " << ConsoleSafe(warning) << "\n";
  const std::string source = args.openapi.empty() ? "--post " + args.post : args.openapi;
  init::InitOptions options;
  options.document_label = source;
  options.path_globs = args.paths;
  options.tags = args.tags;
  options.operation_ids = args.operation_ids;
  options.keyed_only = args.keyed_only;
  options.base_url = args.base_url;
  options.start = args.start;
  // The JSON Schema shipped with this executable (schemas/: installed or the checkout's), when there is one.
  const std::string data_dir = DataDir();
  const std::filesystem::path schema = std::filesystem::path(data_dir) / "schemas/target.schema.json";
  // Named from the written file's folder, so the line holds in a checkout.
  if (std::filesystem::exists(schema)) {
    std::error_code ec;
    const auto from = args.output.empty() || args.output == "-"
                          ? std::filesystem::current_path(ec)
                          : std::filesystem::absolute(args.output, ec).parent_path();
    // Relative inside the checkout (the line survives a move of it), absolute elsewhere.
    const auto source = std::filesystem::weakly_canonical(data_dir, ec);
    const auto inside = std::filesystem::weakly_canonical(from, ec).lexically_relative(source);
    const auto relative = std::filesystem::relative(schema, from, ec);
    const bool in_checkout = !inside.empty() && *inside.begin() != "..";
    options.schema_ref = ec || relative.empty() || !in_checkout ? schema.string() : relative.string();
  }
  init::InitSummary summary;
  auto text = init::WriteTarget(*doc, options, &summary);
  if (!text.ok()) {
    std::cerr << ConsoleSafe(text.status().ToString()) << "\n";
    return kExitUsage;
  }
  // Never hand out a file the loader would refuse: that is a bug of init's.
  const std::string shown = args.output.empty() ? "<stdout>" : args.output;
  if (auto loaded = ParseTarget(*text, shown); !loaded.ok()) {
    std::cerr << "idemproof init: the target written from " << ConsoleSafe(source)
              << " does not load (please report it):\n  " << ConsoleSafe(loaded.status().ToString()) << "\n";
    return kExitUsage;
  }
  const std::string next = args.openapi.empty()
                               ? "complete it, then learn the service's contract: idemproof discover --target "
                               : "then: idemproof lint --target ";
  if (args.output.empty() || args.output == "-") {
    std::cout << *text;
    PrintSummary(summary);
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
  PrintSummary(summary);
  std::cerr << "wrote " << args.output << " from " << ConsoleSafe(source) << ": " << confirms
            << " CONFIRM comment(s) to read; " << next << args.output << "\n";
  return kExitOk;
}

}  // namespace

void AddInitCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<InitArgs>();
  CLI::App* cmd = app.add_subcommand("init", "write a first target file from an OpenAPI 3.0/3.1 document");
  auto* openapi = cmd->add_option("--openapi", args->openapi, "the OpenAPI document (YAML or JSON)");
  auto* base = cmd->add_option("--base-url", args->base_url, "where the service already runs");
  auto* start = cmd->add_option("--start", args->start,
                                "the command that starts the service (words; '…' quotes; {{port}}: a free port)");
  base->excludes(start);
  cmd->add_option("-o,--output", args->output, "the target file to write (default: standard output)");
  cmd->add_flag("--force", args->force, "overwrite the output file");
  cmd->add_option("--path", args->paths, "only operations whose path matches GLOB (repeatable)");
  cmd->add_option("--tag", args->tags, "only operations with tag NAME (repeatable)");
  cmd->add_option("--operation-id", args->operation_ids, "only the operation ID (repeatable)");
  cmd->add_flag("--keyed-only", args->keyed_only, "only operations that carry an idempotency key");
  auto* post = cmd->add_option("--post", args->post, "without a document: the POST path to make an action of");
  auto* key_header = cmd->add_option("--key-header", args->key_header, "with --post: the key's header")->needs(post);
  auto* key_body = cmd->add_option("--key-body", args->key_body, "with --post: the key's JSON body member")->needs(post);
  key_header->excludes(key_body);
  post->excludes(openapi);
  table.Add({cmd, [args] { return Init(*args); }});
}

}  // namespace idemproof::cli
