#include "reports/design_review/markdown_escape.h"

#include <algorithm>

#include "reports/markup_escape.h"

namespace idemproof {

namespace {

// `text` with XmlEscape's byte cleaning (invalid UTF-8, controls -> U+FFFD)
// but none of its entities: Markdown output must read as typed.
std::string CleanBytes(std::string_view text) {
  const std::string cleaned = XmlEscape(text, false);
  std::string body;
  body.reserve(cleaned.size());
  for (std::size_t i = 0; i < cleaned.size();) {
    auto starts = [&](std::string_view s) { return cleaned.compare(i, s.size(), s) == 0; };
    if (starts("&amp;")) { body += '&'; i += 5; }
    else if (starts("&lt;")) { body += '<'; i += 4; }
    else if (starts("&gt;")) { body += '>'; i += 4; }
    else if (starts("&quot;")) { body += '"'; i += 6; }
    else if (starts("&apos;")) { body += '\''; i += 6; }
    else if (starts("&#13;")) { i += 5; }
    else { body += cleaned[i]; ++i; }
  }
  return body;
}

}  // namespace

std::string MarkdownEscape(std::string_view text) {
  // No entities (they would show as typed in a plain-text view of the
  // file): < > & are backslash-escaped like the rest of the punctuation,
  // which CommonMark renders literally and never as a tag or an entity.
  std::string clean = CleanBytes(text);
  std::string out;
  out.reserve(clean.size() + clean.size() / 8);
  // A leading "12." or "12)" would start an ordered list.
  std::size_t digits = 0;
  while (digits < clean.size() && clean[digits] >= '0' && clean[digits] <= '9') ++digits;
  const bool list_marker = digits > 0 && digits < clean.size() && (clean[digits] == '.' || clean[digits] == ')');
  bool line_start = true;
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const char c = clean[i];
    if (list_marker && i == digits) out += '\\';
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      continue;
    }
    switch (c) {
      case '\\': case '`': case '*': case '_': case '{': case '}': case '[': case ']':
      case '(': case ')': case '#': case '+': case '!': case '|': case '~': case '<': case '>': case '&':
        out += '\\';
        break;
      case '-':
        if (line_start) out += '\\';
        break;
      default:
        break;
    }
    out += c;
    line_start = false;
  }
  return out;
}

std::string MarkdownFence(std::string_view text, std::string_view info) {
  // Code blocks are literal: the cleaned bytes as they are.
  const std::string body = CleanBytes(text);
  std::size_t longest = 0, run = 0;
  for (char c : body) {
    run = (c == '`') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string out = fence + std::string(info) + "\n" + body;
  if (body.empty() || body.back() != '\n') out += '\n';
  out += fence + "\n";
  return out;
}

}  // namespace idemproof
