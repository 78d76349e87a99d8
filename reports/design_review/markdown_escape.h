// Escaping text taken from a run (a target's bodies, headers, keys, paths)
// for Markdown, so it can neither break the document (a `|` ending a table
// cell, a backtick opening a code span, a newline ending a table row) nor
// smuggle raw HTML into a renderer that passes HTML through.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace idemproof {

// Inline text (paragraphs, list items, table cells): newlines become spaces;
// Markdown punctuation (\ ` * _ { } [ ] ( ) # + ! | ~ < > & and a leading -
// or digit-dot) is backslash-escaped, so no HTML entity is ever written and
// CommonMark renders a < or & literally, never as a tag or an entity;
// control characters, bidirectional controls (IsBidiControl in
// model/console_text.h: text shown reordered) and invalid UTF-8 become U+FFFD.
std::string MarkdownEscape(std::string_view text);

// MarkdownEscape for a page GitHub renders and links by itself (the CI job
// summary): what GitHub would turn live is broken with a zero-width space
// (U+200B), as GitHub's own Dependabot does: @mentions (and e-mail
// addresses) after the '@', #123 and GH-123 references before the number,
// bare links (any "scheme://", "www.") inside the "://" and the "www.".
// Markdown links and images ([x](u), ![x](u), <u>) are escaped already.
std::string MarkdownEscapeInert(std::string_view text);

// A fenced code block holding `text` literally: the fence is one backtick
// longer than the longest backtick run in the text (CommonMark's rule), so
// nothing inside can close it (GitHub links nothing in a code block). `info` is the info string ("json", "" ...).
std::string MarkdownFence(std::string_view text, std::string_view info = "");

}  // namespace idemproof
