#include "model/pattern.h"

#include <re2/re2.h>

namespace idemproof {

Result<Pattern> Pattern::Compile(const std::string& text) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(8 << 20);  // a compiled pattern over 8 MiB is refused, not grown
  auto re = std::make_shared<const RE2>(text, options);
  if (!re->ok()) return Status::InvalidArgument("bad regex '" + text + "': " + re->error());
  Pattern p;
  p.text_ = text;
  p.re_ = std::move(re);
  return p;
}

int Pattern::groups() const { return re_ ? re_->NumberOfCapturingGroups() : 0; }

bool Pattern::Search(std::string_view subject) const {
  return re_ && RE2::PartialMatch(re2::StringPiece(subject.data(), subject.size()), *re_);
}

bool Pattern::FullMatch(std::string_view subject) const {
  return re_ && RE2::FullMatch(re2::StringPiece(subject.data(), subject.size()), *re_);
}

std::optional<std::string> Pattern::FirstGroup(std::string_view subject) const {
  if (!re_ || groups() < 1) return std::nullopt;
  re2::StringPiece m[2];  // the whole match, group 1
  const re2::StringPiece text(subject.data(), subject.size());
  if (!re_->Match(text, 0, text.size(), RE2::UNANCHORED, m, 2)) return std::nullopt;
  if (m[1].data() == nullptr) return std::nullopt;  // group 1 did not take part
  return std::string(m[1].data(), m[1].size());
}

}  // namespace idemproof
