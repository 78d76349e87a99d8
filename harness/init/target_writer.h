// `idemproof init`'s target file, written from an OpenAPI document
// (docs/init.md): every POST/PUT/PATCH/DELETE an action with its role, the
// idempotency contract from the documented key header, statuses and replay
// header, `records:` and probes from the GET endpoints, `of:` relations and
// captures from path parameters. Every guess a human must confirm carries a
// `# CONFIRM:` comment; what the document cannot say (hooks, queues, batch
// jobs, helper services, downstreams) is listed at the end.
//
// Thread-safety: pure function.
#pragma once

#include <string>

#include "base/status.h"
#include "init/openapi_document.h"

namespace idemproof::init {

struct InitOptions {
  std::string document_label;  // how the header names the document (its path as given)
  std::string base_url;        // --base-url; "" when not given
  std::string start;           // --start: a command line (words, '…' and "…" quoting); "" when not given
  std::string schema_ref;      // the JSON Schema for the yaml-language-server line; "" for none
};

// The target file's text. Errors (kInvalidConfig, kInvalidArgument): an
// x-idempotency that names an unknown role or `of:`, an unbalanced quote in
// `start`, a document with no write operation to make an action of.
// REQUIRES: at most one of base_url and start is set.
Result<std::string> WriteTarget(const OpenApiDocument& doc, const InitOptions& options);

// `command` split into words: blanks separate, '…' and "…" quote (no
// escapes inside '…'; \" and \\ inside "…"). Error on an unbalanced quote.
Result<std::vector<std::string>> SplitCommand(const std::string& command);

}  // namespace idemproof::init
