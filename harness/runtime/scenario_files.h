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

// Directory symlinks are followed, except one that leads back to a folder
// being walked (a loop) or dangles: both are errors naming the link, as is
// nesting deeper than 64 folders.
// Errors: kNotFound for a path that does not exist; kInvalidArgument for a
// symlink loop or a broken link; kIoError for an unreadable folder.
Result<std::vector<std::string>> CollectScenarioFiles(const std::vector<std::string>& paths);

// Shell-style glob (fnmatch: *, ?, [..]); '*' also matches '/'.
bool GlobMatches(const std::string& pattern, const std::string& text);

}  // namespace idemproof::runtime
