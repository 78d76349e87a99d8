#include "idemproof/ref/claim_discipline.h"

#include <thread>

namespace idemproof::ref {

void pause_between_check_and_write(const ClaimOptions& options) {
  if (options.between_check_and_insert) {
    options.between_check_and_insert();
  } else {
    std::this_thread::sleep_for(options.check_insert_pause);
  }
}

ClaimOutcome outcome_for_existing(const RequestRecord& existing, const std::string& fingerprint) {
  ClaimOutcome out;
  out.existing = existing;
  if (existing.fingerprint != fingerprint) {
    out.kind = ClaimKind::mismatch;
  } else if (existing.state == RecordState::in_progress) {
    out.kind = ClaimKind::in_progress;
  } else {
    out.kind = ClaimKind::completed;
  }
  return out;
}

}  // namespace idemproof::ref
