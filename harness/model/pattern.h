// Pattern: a regular expression from a target file (start.port_from_stdout,
// services' ready_stdout, capture regexes), run on RE2: matching is linear
// in the text, with bounded memory and no recursion, so a pattern like
// '.*(\d+)' over a 50 KB line of a hostile service's stdout cannot crash
// the harness (std::regex recurses per character and overflows the stack).
// The syntax is RE2's (Perl-like; no backreferences or lookaround).
//
// Thread-safety: a compiled Pattern is immutable and may be shared.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace re2 {
class RE2;
}

namespace idemproof {

class Pattern {
 public:
  // Errors: kInvalidArgument with RE2's reason (bad syntax, too big).
  static Result<Pattern> Compile(const std::string& text);

  const std::string& text() const { return text_; }
  int groups() const;
  // True when the pattern matches somewhere in `subject`.
  bool Search(std::string_view subject) const;
  // True when the pattern matches the whole of `subject`.
  bool FullMatch(std::string_view subject) const;
  // Group 1 of the first match; nullopt when there is none.
  // REQUIRES: groups() >= 1.
  std::optional<std::string> FirstGroup(std::string_view subject) const;

 private:
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace idemproof
