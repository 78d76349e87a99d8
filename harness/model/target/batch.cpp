// Batch jobs (batch.h).
#include "model/target/batch.h"

namespace idemproof {

const char* ChecksumAlgorithmName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kNone: return "none";
    case ChecksumAlgorithm::kSha256Rows: return "sha256-rows";
    case ChecksumAlgorithm::kSameAsClean: return "same-as-clean";
  }
  return "?";
}

}  // namespace idemproof
