// The target file's requests: a request template, a call (a request or a
// command), a named variant of a request. Every string may hold {{var}}
// templates (model/template.h), expanded by the runtime.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/header_list.h"
#include "base/status.h"
#include "model/json_path.h"

namespace idemproof {

// One HTTP request, relative to the target's base_url.
struct RequestTemplate {
  std::string method = "GET";   // upper case
  std::string path = "/";       // path + query, templated; appended to base_url
  HeaderList headers;           // extra headers (the key header is added by the runtime)
  std::optional<nlohmann::json> json;  // body sent as application/json (templated strings)
  std::optional<std::string> body;     // raw body; at most one of json/body is set
  // The Content-Type sent with the body (`content_type:`); "" = a json body
  // goes as application/json, a raw body with no Content-Type at all.
  std::string content_type;
  // Query parameters added to (or replacing same-named ones in) the path's
  // query string, values templated, percent-encoded once expanded. Set by
  // request variants (ApplyVariant), not read from a request block.
  HeaderList query;
  // A service declared under `services:` to send it to instead of the target
  // (its url replaces base_url; the target-wide headers are not added). "" = the target.
  std::string base;
  SourceMark mark;
};

// Either an HTTP request to the target or a local command (argv, no shell).
// Exactly one of request/command is set.
struct TargetCall {
  std::optional<RequestTemplate> request;
  std::optional<std::vector<std::string>> command;
  SourceMark mark;
};

// A named change to one request of an action (`variants:`), asked for by a
// scenario's capability step (model/capabilities.h) or named by explore.
// Applied over the action's request by ApplyVariant (model/request_variant.h).
// At most one of json/body; `patch` only over a json body, never with json.
struct RequestVariant {
  std::string name;
  HeaderList query;    // query parameters added or replaced (templated values)
  HeaderList headers;  // headers added or replaced (names case-insensitive, templated values)
  std::vector<std::pair<JsonPath, nlohmann::json>> patch;  // JSON path (no [*]) -> value, on the json body
  std::optional<nlohmann::json> json;  // the whole json body
  std::optional<std::string> body;     // a raw body
  std::string content_type;            // with json/body: its Content-Type ("" = the default)
  // A message's variant only: broker entry fields added or replaced
  // (templated values), for a `publish` (ApplyVariant leaves the push alone).
  HeaderList fields;
  SourceMark mark;
};

// The request as sent without an idempotency key (`key: none`): JSON object
// members and headers whose whole value is the template {{key}} are left
// out, so "no key" is an absent member, not an empty one. Anywhere else
// {{key}} expands to "".
RequestTemplate WithoutKeyPlaceholders(const RequestTemplate& request);

// True when the request sends {{key}} somewhere (path, header, body).
bool UsesKey(const RequestTemplate& request);

}  // namespace idemproof
