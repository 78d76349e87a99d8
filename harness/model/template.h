// Template expansion for target files: "{{name}}" is replaced by the value of
// variable `name` (white space inside the braces is allowed: "{{ name }}").
// A variable nobody defined is an error value, never an empty string.
// Literal text: {{'TEXT'}} expands to TEXT as written ('' inside it is one
// quote), so "{{'{{'}}" is a literal "{{"; a "}}" outside a token and a "{"
// not followed by "{" are literal already. EscapeTemplateLiteral writes any
// text so that it expands to itself.
// Names: [A-Za-z_][A-Za-z0-9_.]* (dots for services.NAME.url), not ending in a dot.
//
// Variables the runtime defines (documented in docs/scenario-reference.md):
// key, biz, run, uuid, port, run_dir, build_dir, source_dir, flaw, target_pid,
// services.NAME.{url,port,pid} for each declared service, plus the variables
// captured from answers (an action's `capture:`).
//
// Thread-safety: pure functions over const inputs.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace idemproof {

// Variable name -> value. Ordered so error messages list names stably.
using TemplateVars = std::map<std::string, std::string>;

// The variables the runtime always defines: key, biz, run, uuid, port,
// run_dir, build_dir, source_dir, flaw, target_pid. The target loader accepts these and
// the target's capture names, and rejects any other {{name}}.
const std::vector<std::string>& BuiltinTemplateVariables();

// {{slow_ms}}: a duration slower than the target's declared lease (lease x
// 1.5, in whole milliseconds), for a variant that makes a request outlive its
// lease in a live process. Defined only when the target declares a lease.
inline constexpr const char* kSlowMsVariable = "slow_ms";

// {{target_dir}}: the folder of the target file (absolute), and {{env.NAME}}:
// the environment variable NAME (unset: a located error). The target loader
// expands both at load (ExpandSome), so the runtime never sees them.
inline constexpr const char* kTargetDirVariable = "target_dir";
std::string SlowMsFor(std::chrono::nanoseconds lease);

// `text` written so that ExpandTemplate gives `text` back, whatever it holds
// and whatever template text is written after it: each '{' followed by '{'
// or at the end becomes {{'{'}}. Nothing else changes.
std::string EscapeTemplateLiteral(std::string_view text);

// Replaces every {{name}} in `text` and every {{'TEXT'}} by TEXT. Errors
// (kInvalidArgument): unknown variable (the message names it and the known
// variables), unclosed "{{" or literal, malformed name.
Result<std::string> ExpandTemplate(std::string_view text, const TemplateVars& vars);

// Expands every string value (not object keys) in a JSON tree; numbers,
// booleans and null are copied unchanged.
Result<nlohmann::json> ExpandTemplateJson(const nlohmann::json& doc, const TemplateVars& vars);

// Expands only the variables `resolve` gives a value for (nullopt: left as
// "{{name}}" for a later expansion, and a literal stays a literal); an error
// of `resolve` is returned. The
// target loader expands the file's own variables ({{target_dir}},
// {{env.NAME}}) this way, once, at load.
using PartialResolver = std::function<Result<std::optional<std::string>>(const std::string& name)>;
Result<std::string> ExpandSome(std::string_view text, const PartialResolver& resolve);

// The variable names `text` refers to, in order of appearance, duplicates
// removed. Errors as ExpandTemplate for malformed text.
Result<std::vector<std::string>> TemplateVariables(std::string_view text);

}  // namespace idemproof
