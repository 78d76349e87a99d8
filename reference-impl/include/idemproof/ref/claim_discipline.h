// How a durable Store claims a scope: the correct atomic claim, or one of the
// two named flaws that live in the store itself. Shared by SqliteStore and
// PostgresStore, so a flaw behaves alike on either database.
//
//   atomic_insert      the scope's primary key decides the owner: one
//                      INSERT ... ON CONFLICT DO NOTHING; a dead record is
//                      replaced by one conditional UPDATE.
//   check_then_insert  the `check-then-insert` flaw: records go to a table
//                      WITHOUT the constraint; a claim reads, pauses, inserts.
//   read_then_replace  the `expiry-race` flaw: a key held by an EXPIRED
//                      completed record is read ("expired"), paused over, then
//                      overwritten blindly; completion is unfenced; the sweep
//                      leaves expired completed records (lazy expiry).
#pragma once

#include <functional>
#include <string>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/request_record.h"

namespace idemproof::ref {

enum class ClaimDiscipline { atomic_insert, check_then_insert, read_then_replace };

struct ClaimOptions {
  ClaimDiscipline discipline = ClaimDiscipline::atomic_insert;
  Nanos check_insert_pause{0};  // only for check_then_insert and read_then_replace
  // Only for check_then_insert (and read_then_replace: between reading
  // "expired" and the overwrite): runs between the check and the insert, with
  // no lock held. Empty = sleep for check_insert_pause (the server). The
  // deterministic simulation (harness/sim/) hands control to its scheduler here.
  std::function<void()> between_check_and_insert;
};

// The flaws' window between the check and the write (see above).
void pause_between_check_and_write(const ClaimOptions& options);

// What a claim that found the live record `existing` answers: mismatch for
// another fingerprint, else in_progress or completed by its state.
ClaimOutcome outcome_for_existing(const RequestRecord& existing, const std::string& fingerprint);

}  // namespace idemproof::ref
