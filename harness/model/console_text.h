// ConsoleSafe: text from a target (answer bodies, headers, error strings
// that quote them) made safe to print on a terminal. Control bytes (ESC,
// NUL, BEL, backspace, C1 controls U+0080-U+009F) and bytes that are not
// UTF-8 become visible escapes ("\x1b"), so a hostile body can neither move
// the cursor, recolour or retitle the terminal, nor cut the line short.
// Tab, CR and LF become one space (the console prints one line per row).
// Printable ASCII and valid UTF-8 pass unchanged.
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace idemproof {

std::string ConsoleSafe(std::string_view text);

// Length (1-4) of the valid UTF-8 sequence at text[i], or 0 when it is not
// one (a stray byte, a truncated, overlong or surrogate sequence, a code
// point past U+10FFFF). REQUIRES: i < text.size().
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i);

}  // namespace idemproof
