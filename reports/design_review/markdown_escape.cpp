#include "reports/design_review/markdown_escape.h"

#include <algorithm>
#include <cctype>

#include "model/console_text.h"
#include "reports/markup_escape.h"

namespace idemproof {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kZeroWidthSpace = "\xE2\x80\x8B";  // U+200B

// `text` with XmlEscape's byte cleaning (invalid UTF-8, controls -> U+FFFD)
// but none of its entities, and bidirectional controls -> U+FFFD: Markdown
// output must read as typed, in the order typed.
std::string CleanBytes(std::string_view text) {
  const std::string cleaned = XmlEscape(text, false);
  std::string body;
  body.reserve(cleaned.size());
  for (std::size_t i = 0; i < cleaned.size();) {
    auto starts = [&](std::string_view s) { return cleaned.compare(i, s.size(), s) == 0; };
    if (static_cast<unsigned char>(cleaned[i]) >= 0x80) {  // XmlEscape left valid UTF-8 only
      const std::size_t n = std::max<std::size_t>(1, Utf8SequenceLength(cleaned, i));
      if (IsBidiControl(Utf8CodePoint(cleaned, i, n))) body += kReplacement;
      else body.append(cleaned, i, n);
      i += n;
      continue;
    }
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

bool EndsWithIgnoringCase(const std::string& s, std::string_view tail) {
  if (s.size() < tail.size()) return false;
  for (std::size_t k = 0; k < tail.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - tail.size() + k])) != tail[k]) return false;
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Escape(std::string_view text, bool inert) {
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
    const bool digit_next = i + 1 < clean.size() && IsDigit(clean[i + 1]);
    // What GitHub links by itself, broken where its pattern needs the next character.
    if (inert && ((c == '-' && digit_next && EndsWithIgnoringCase(out, "gh")) ||
                  (c == '.' && EndsWithIgnoringCase(out, "www"))))
      out += kZeroWidthSpace;
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
    if (inert && (c == '@' || (c == '#' && digit_next) || (c == ':' && clean.compare(i, 3, "://") == 0)))
      out += kZeroWidthSpace;
  }
  return out;
}

}  // namespace

std::string MarkdownEscape(std::string_view text) { return Escape(text, false); }

std::string MarkdownEscapeInert(std::string_view text) { return Escape(text, true); }

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
