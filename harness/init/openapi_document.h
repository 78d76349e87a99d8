// An OpenAPI 3.0/3.1 document (YAML or JSON: JSON is YAML), read for
// `idemproof init` (docs/init.md): its operations with their parameters,
// request bodies, examples, documented statuses and answer schemas.
//
// The subset read: `$ref` inside the document (`#/components/...`, any JSON
// pointer into the same file), `allOf` (properties and required merged),
// `example` / `examples` (media type, schema and parameter), path-level
// parameters, `servers`, and the extension `x-idempotency` on the document
// (`{window, lease}`) or an operation (`true`, `false`, or `{key_header,
// role, of}`). Not followed: `$ref` to another file (an error naming it),
// `oneOf` / `anyOf` (the first alternative is used and a note says so),
// callbacks, links, security schemes.
//
// Thread-safety: plain values; the loader shares nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/status.h"

namespace idemproof::init {

struct Parameter {
  std::string name;
  std::string in;          // path, query, header, cookie
  std::string description; // "" when none
  bool required = false;
  YAML::Node schema;       // resolved; null when none
  YAML::Node example;      // null when none
};

struct Response {
  int status = 0;          // 0 for `default`
  YAML::Node schema;       // the JSON answer's schema, resolved; null when none
  // Documented answer headers: name -> required.
  std::map<std::string, bool> headers;
};

struct Operation {
  std::string method;       // upper case: GET, POST, PUT, PATCH, DELETE
  std::string path;         // as the document spells it: /orders/{id}
  std::string operation_id; // "" when none
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

  std::vector<std::string> PathParameters() const;  // in path order
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

// Reads the document at `path`. Errors (kNotFound, kInvalidConfig with
// file:line:column): no such file, a YAML/JSON syntax error, not an
// OpenAPI 3.0/3.1 document, a `$ref` that leaves the file or names nothing.
Result<OpenApiDocument> LoadOpenApi(const std::string& path);
// The same from text; `file` names it in errors.
Result<OpenApiDocument> ParseOpenApi(const std::string& text, const std::string& file);

}  // namespace idemproof::init
