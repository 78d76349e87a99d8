// An OpenAPI 3.0/3.1 document (YAML or JSON: JSON is YAML), read for
// `idemproof init` (docs/init.md): its operations with their parameters,
// request bodies, examples, documented statuses and answer schemas.
//
// The subset read: `$ref` inside the document (any JSON pointer into the
// same file, percent-escapes and ~0/~1 decoded) wherever a parameter,
// request body, response, header, path item or schema may be one; `allOf`
// (properties and required merged); `oneOf` / `anyOf` (every alternative's
// properties merged, the rest from the first, a note says so); `example` /
// `examples` (media type, schema and parameter); path-level parameters;
// `servers`; `components.securitySchemes` (apiKey header names); the
// extension `x-idempotency` on the document (`{window, lease}`) or an
// operation (`true`, `false`, or `{key_header, role, of}`). Not followed:
// callbacks, links.
//
// Bounded (issue 43): the file must be a regular file of at most
// ReadLimits::max_bytes (a FIFO or device is refused before any read) and
// max_document_nodes nodes (counted before yaml-cpp builds its tree);
// the text must be UTF-8 (the first bad byte is named with its line and
// column); every example-like value handed out (examples, defaults, enums,
// x-idempotency) expands to at most ReadLimits::max_value_nodes nodes with
// numbers in a double's range, else an error at its place; every schema
// handed out is a tree of at most max_schema_nodes nodes (a 2xx answer's
// max_response_schema_nodes; other answers' schemas are not built),
// max_schema_depth deep (the schemas cut: one warning, counted), a schema
// that contains itself cut where it recurs (a warning each); the whole
// reading visits at most max_visits nodes within max_time. So a YAML alias
// bomb or a branching recursive schema costs at most those bounds.
//
// Not fatal (a warning, the reading goes on): a `$ref` that names nothing,
// points into another file or is a cycle (read as "any": an empty schema,
// a parameter or body left out); a schema cut; a duplicate map key (the
// first is read, as yaml-cpp does; JSON parsers that keep the last differ).
//
// Every error and warning names the document's file:line:column.
//
// Thread-safety: the YAML nodes handed out are shared (between operations
// naming the same schema, and with the document itself): read them, never
// assign into them. Two loads share nothing but one immutable undefined node.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/status.h"

namespace idemproof::init {

struct Parameter {
  std::string name;
  std::string in;          // path, query, header, cookie
  std::string description; // "" when none
  bool required = false;
  YAML::Node schema;       // resolved (a fresh bounded tree); null when none
  YAML::Node example;      // the document's node, bounded and checked; null when none
};

struct Response {
  int status = 0;          // 0 for `default`
  YAML::Node schema;       // a 2xx JSON answer's schema, resolved (bounded); null when none or not 2xx
  // Documented answer headers: name -> required.
  std::map<std::string, bool> headers;
};

struct Operation {
  std::string method;       // upper case: GET, POST, PUT, PATCH, DELETE
  std::string path;         // as the document spells it: /orders/{id}
  std::string operation_id; // "" when none, or longer than 128 bytes (a warning)
  std::string summary;      // "" when none
  std::string description;  // "" when none
  std::vector<std::string> tags;  // as written, in document order
  int line = 0;             // where the operation starts (1-based)
  std::vector<Parameter> parameters;  // path-level and own, the own winning
  // The request body's media: "json" (application/json, any *json type),
  // "form" (application/x-www-form-urlencoded or multipart/form-data, read
  // only when no JSON media is there), "" for no body read.
  std::string request_media;
  YAML::Node request_schema;          // that media's schema, resolved; null when none
  // Request body examples, in document order (media `example`, each of
  // `examples`' values, else the schema's `example`).
  std::vector<YAML::Node> request_examples;
  std::vector<Response> responses;    // in document order
  YAML::Node idempotency;             // the operation's x-idempotency; null when absent
  // "in\nname" (header names lower-cased) -> index into `parameters`, filled
  // by the reader; FindParameter scans when it is empty (a hand-made Operation).
  std::unordered_map<std::string, std::size_t> parameter_index;

  std::vector<std::string> PathParameters() const;  // in path order
  // The parameter `in` `name` (a header's name compared case-insensitively),
  // or nullptr. O(1) on a read operation.
  const Parameter* FindParameter(const std::string& in, const std::string& name) const;
  bool Documents(int status) const;
  // The first 2xx response, or nullptr.
  const Response* Success() const;
};

struct OpenApiDocument {
  std::string file;          // as given
  std::string version;       // the `openapi:` value
  std::string title;         // info.title
  std::vector<std::string> servers;  // servers[].url
  YAML::Node idempotency;    // the root's x-idempotency; null when absent
  std::vector<Operation> operations;  // in document order
  std::vector<std::string> notes;     // what the reader did not follow
  // Names of the `apiKey` security schemes `in: header`
  // (components.securitySchemes), lower-cased: credentials, not keys.
  std::vector<std::string> security_headers;
  // What the reader could not read and went past, each "file:line:column:
  // what" naming the document's place (a dangling or external $ref, a
  // recursive schema cut).
  std::vector<std::string> warnings;
};

// What one reading may cost (the defaults are what `init` uses).
struct ReadLimits {
  std::size_t max_bytes = 32u << 20;            // the document's size
  std::size_t max_document_nodes = 1000000;     // its keys and values, counted before a tree is built
  std::size_t max_value_nodes = 100000;         // one example-like value, aliases expanded
  std::size_t max_schema_nodes = 1000;          // one schema handed out (a parameter's, a body's)
  std::size_t max_response_schema_nodes = 200;  // one answer schema (the writer looks two levels down)
  int max_response_schema_depth = 3;            // its nesting: deeper levels are read as any, silently
  int max_schema_depth = 12;                    // nesting of properties / items / allOf
  std::size_t max_visits = 10000000;            // nodes visited by the whole reading
  std::chrono::milliseconds max_time{20000};    // the whole reading, parse included
  std::size_t max_warnings = 50;                // kept; the rest counted in one last warning
  const std::atomic<bool>* cancel = nullptr;    // raised: the reading stops (kTimeout, "interrupted")
};

// Reads the document at `path`. Errors (kNotFound; kInvalidConfig naming the
// document's file:line:column, or the file alone for the first three): no
// such file; not a regular file (a FIFO, device or directory, refused
// before any read); larger than max_bytes; not UTF-8; a YAML/JSON syntax
// error; not an OpenAPI 3.0/3.1 document (Swagger 2.0: how to convert it);
// no paths; an example-like value too large or with a number out of a
// double's range; the reading past max_visits or max_time. kTimeout when
// `cancel` was raised.
Result<OpenApiDocument> LoadOpenApi(const std::string& path, const ReadLimits& limits = {});
// The same from text; `file` names it in errors.
Result<OpenApiDocument> ParseOpenApi(const std::string& text, const std::string& file,
                                     const ReadLimits& limits = {});

}  // namespace idemproof::init
