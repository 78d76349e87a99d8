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

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "init/openapi_document.h"

namespace idemproof::init {

struct InitOptions {
  InitOptions() = default;
  InitOptions(std::string label, std::string base, std::string start_command, std::string schema)
      : document_label(std::move(label)), base_url(std::move(base)), start(std::move(start_command)),
        schema_ref(std::move(schema)) {}
  std::string document_label;  // how the header names the document (its path as given)
  std::string base_url;        // --base-url; "" when not given
  std::string start;           // --start: a command line (words, '…' and "…" quoting); "" when not given
  std::string schema_ref;      // the JSON Schema for the yaml-language-server line; "" for none
  // Selection (an operation must match each kind given, any value of it):
  // --path GLOB (fnmatch, '*' crosses '/'), --tag NAME, --operation-id ID.
  std::vector<std::string> path_globs, tags, operation_ids;
  // --keyed-only: only operations that carry a key (or x-idempotency: true).
  bool keyed_only = false;
};

// What init did with each write operation, for the closing table.
struct InitRow {
  std::string operation;  // "POST /orders"
  std::string action;     // the action written; "" when skipped
  std::string key;        // KeyPlace::Where(), or "x-idempotency"
  std::string note;       // why skipped, or what to complete
};
struct InitSummary {
  std::size_t operations_read = 0;  // every operation, GET included
  std::vector<InitRow> rows;        // the write operations, in document order
  std::vector<std::string> notes;   // said once (the default selection of a big document)
};

// More write operations than this and no selection: the keyed ones only.
inline constexpr std::size_t kDefaultKeyedOnlyAbove = 40;

// Where an operation carries its idempotency key.
struct KeyPlace {
  enum class In { kNone, kHeader, kJson, kForm };
  In in = In::kNone;
  std::string name;       // the header's or the body member's
  bool required = false;  // the parameter's `required`, the member in the schema's `required`
  bool by_description = false;  // its name alone would not say so
  // "header X-Idempotency-Key", "json member idempotency_key", "form member
  // client_token", "none".
  std::string Where() const;
};

// The operation's key: a header parameter whose name says idempotency or
// deduplication in any spelling (Idempotency-Key, X-Idempotency-Key,
// Idempotent-Key, X-Dedup-Id), or whose description speaks of idempotency
// (a request id, a client token described as deduplicating retries); else a
// member of its JSON or form body named or described so (idempotency_key,
// idempotencyKey, client_token, request_id with such a description). Never
// a credential (Authorization, *api-key*, *subscription-key*, a header of
// `security_headers`, lower case).
KeyPlace FindKey(const Operation& op, const std::vector<std::string>& security_headers);

// The target file's text. Errors (kInvalidConfig, kInvalidArgument): an
// x-idempotency that names an unknown role or `of:`, an unbalanced quote in
// `start`, a document with no write operation to make an action of, a
// selection that leaves none, text that is not UTF-8. Every string of the
// document reaches the file quoted (or in a comment), escaped for the
// template language; nothing of the document becomes a key or a command.
// `summary`, when given, gets what became of each write operation.
// REQUIRES: at most one of base_url and start is set.
Result<std::string> WriteTarget(const OpenApiDocument& doc, const InitOptions& options,
                                InitSummary* summary = nullptr);

// `command` split into words: blanks separate, '…' and "…" quote (no
// escapes inside '…'; \" and \\ inside "…"). Error on an unbalanced quote.
Result<std::vector<std::string>> SplitCommand(const std::string& command);

}  // namespace idemproof::init
