// ConsoleSafe: text from a target (answer bodies, headers, error strings
// that quote them, names in a target file) made safe to print on a
// terminal. It is the one escaping function every command uses for text it
// did not write itself. Control bytes (ESC, NUL, BEL, backspace, C1
// controls U+0080-U+009F) and bytes that are not UTF-8 become visible
// escapes ("\x1b"), so a hostile body can neither move the cursor, recolour
// or retitle the terminal, nor cut the line short; bidirectional controls
// (IsBidiControl) become "\u202e", so text cannot be shown reordered.
// Tab, CR and LF become one space (the console prints one line per row), or
// with LineBreaks::kEscape the escapes "\t", "\r", "\n" (a command's argv,
// where a newline must stay visible). Printable ASCII and the rest of valid
// UTF-8 pass unchanged.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace idemproof {

enum class LineBreaks { kSpace, kEscape };

std::string ConsoleSafe(std::string_view text, LineBreaks breaks = LineBreaks::kSpace);

// Length (1-4) of the valid UTF-8 sequence at text[i], or 0 when it is not
// one (a stray byte, a truncated, overlong or surrogate sequence, a code
// point past U+10FFFF). REQUIRES: i < text.size().
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i);

// The code point of the valid UTF-8 sequence of length n at text[i].
// REQUIRES: n == Utf8SequenceLength(text, i) and n > 0.
char32_t Utf8CodePoint(std::string_view text, std::size_t i, std::size_t n);

// The Unicode bidirectional formatting characters a renderer obeys to
// reorder text (the "Trojan Source" set): U+202A-U+202E (embeddings,
// overrides), U+2066-U+2069 (isolates), U+200E/U+200F (marks), U+061C.
bool IsBidiControl(char32_t code_point);

}  // namespace idemproof
