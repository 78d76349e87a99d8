// Finding scenario files: what `idemproof run PATH...` and `lint PATH...`
// accept. A file is taken as given; a directory is walked recursively for
// *.yaml / *.yml files, skipping any folder named `targets` or `explore` (target files and explore
// specs live there, beside the scenarios). The result is sorted, without duplicates,
// so a run's order — and with the seed, its plan — is reproducible.
//
// Thread-safety: pure functions (they read the file system).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace idemproof::runtime {

// Errors: kNotFound for a path that does not exist.
Result<std::vector<std::string>> CollectScenarioFiles(const std::vector<std::string>& paths);

// Shell-style glob (fnmatch: *, ?, [..]); '*' also matches '/'.
bool GlobMatches(const std::string& pattern, const std::string& text);

}  // namespace idemproof::runtime
