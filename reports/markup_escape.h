// Escaping text taken from a target's answers (or anywhere else) for XML and
// HTML output: a report never runs a target's markup and never breaks its
// own document. Shared by every renderer in this room.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace idemproof {

// Escapes & < > " ' as entities; replaces characters XML 1.0 forbids (C0
// controls other than tab, LF, CR) and invalid UTF-8 bytes with U+FFFD, so
// the result is always well-formed in element text and attribute values.
// Tab/LF/CR are kept in text; in attributes pass attribute=true to turn them
// into character references (XML normalises raw ones to spaces).
std::string XmlEscape(std::string_view text, bool attribute = false);

}  // namespace idemproof
