// The one way `idemproof init` writes YAML (docs/init.md): text fixed at
// compile time, quoted scalars, JSON values as flow nodes, and comments that
// cannot end their line. Text from outside (an OpenAPI document, an option)
// reaches the file only as a quoted scalar or inside a comment, so no value
// can add a key, a line or a node (issue 43: a document's title with
// "\nstart: {argv: ...}" became a command `run` executed).
//
// Quoted scalars are YAML double-quoted with every character escaped that
// YAML readers disagree on or treat as a break: C0 controls, DEL, C1
// controls (NEL U+0085 included), U+2028, U+2029, U+FEFF. Text that is not
// UTF-8 cannot be written: the first such value is kept as the emitter's
// error (Error()), the file is then not to be used.
//
// Thread-safety: one emitter per writer; no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace idemproof::init {

// Text fixed at compile time: only a string literal makes one.
class Fixed {
 public:
  template <std::size_t N>
  consteval Fixed(const char (&text)[N]) : text_(text, N - 1) {}  // NOLINT: implicit on purpose
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

// `text` as a YAML double-quoted scalar, or an error when it is not UTF-8.
Result<std::string> QuoteYaml(std::string_view text);

// `text` fit for a comment: every line break (LF, CR, NEL, U+2028, U+2029),
// control character, bidi control and byte that is not UTF-8 becomes a blank.
std::string CommentText(std::string_view text);

class YamlOut {
 public:
  // Literal YAML of the writer's own.
  YamlOut& Lit(Fixed text);
  // A quoted scalar holding `value` exactly.
  YamlOut& Str(std::string_view value);
  // A name (a key, a role, a header name): plain when it is a plain word
  // ([A-Za-z_][A-Za-z0-9_-]*, not a YAML 1.1 boolean or null), else quoted.
  YamlOut& Word(std::string_view value);
  YamlOut& Int(long long value);
  // A JSON value as a flow node: strings quoted, members quoted.
  YamlOut& Json(const nlohmann::ordered_json& value);
  // "# TEXT" and the end of the line: nothing can follow a comment on it.
  YamlOut& Comment(std::string_view text);
  // What `other` wrote, and its error.
  YamlOut& Append(const YamlOut& other);

  // The first error (a value that is not UTF-8), else Ok.
  const Status& Error() const { return error_; }
  const std::string& Text() const { return out_; }

 private:
  std::string out_;
  Status error_ = Status::Ok();
};

}  // namespace idemproof::init
