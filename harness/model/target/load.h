// Loading a target file (model/target_loader.cpp and one parser per
// section in model/target/*.cpp).
#pragma once

#include <string>

#include "base/status.h"
#include "model/target/description.h"

namespace idemproof {

// Loads and strictly validates a target file. Errors are kInvalidConfig with
// the file:line:column of the offending node: YAML syntax, unknown keys (with
// the closest known key suggested), wrong types, missing required fields,
// bad durations / JSON paths / regexes / statuses. The contract starts from
// the defaults of the file's `profile:` (model/profile.h; default ietf),
// or of `profile` when not empty (--profile), and the `idempotency:`
// section refines them. An unknown profile is kInvalidConfig naming the known.
Result<TargetDescription> LoadTargetFile(const std::string& path, const std::string& profile = "");

// The same over YAML text; `file` is used in error marks and kept in `file`.
Result<TargetDescription> ParseTarget(const std::string& yaml, const std::string& file,
                                      const std::string& profile = "");

}  // namespace idemproof
