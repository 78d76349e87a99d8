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

namespace idemproof::session {

// Directory symlinks are followed, except one that leads back to a folder
// being walked (a loop) or dangles: both are errors naming the link, as is
// nesting deeper than 64 folders.
// A *.yaml (or a path given) that is neither a regular file nor a folder (a
// FIFO, a device, a socket, or a link to one) is an error naming it and what
// it is: stat only, it is never opened (a FIFO would block).
// Errors: kNotFound for a path that does not exist; kInvalidArgument for a
// symlink loop, a broken link or a file that is not regular; kIoError for an
// unreadable folder.
Result<std::vector<std::string>> CollectScenarioFiles(const std::vector<std::string>& paths);

// Shell-style glob (fnmatch: *, ?, [..]); '*' also matches '/'.
bool GlobMatches(const std::string& pattern, const std::string& text);

}  // namespace idemproof::session
