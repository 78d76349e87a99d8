// Durations as every room writes them (target and scenario files, injector
// options, the reference service's and the stub's command lines): an integer
// followed by one unit, us, ms, s, m or h ("250ms", "4s", "24h"), or a bare
// "0". Any other number without a unit, a fraction, a sign or an unknown
// unit is an error.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace idemproof {

using Duration = std::chrono::nanoseconds;

// Parses "250ms" etc. Errors are kInvalidArgument naming the offending text.
Result<Duration> ParseDuration(std::string_view text);

// The shortest exact spelling ParseDuration accepts back ("1500ms", "4s",
// "24h"); sub-microsecond remainders are rendered in "us" rounded down.
std::string FormatDuration(Duration d);

}  // namespace idemproof
