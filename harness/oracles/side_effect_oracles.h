// Internal to idemproof_oracles: the oracles of the side-effect and queue
// layers, and their registration (called by RegisterBuiltinOracles).
//
//   intent_reconciled  exactly one external effect per business action (the
//                      ledger probe), and the target's record names it
//   lease_recovery     after a crash (kill) or pause of the owner mid-request:
//                      in-progress before the lease can have ended, exactly
//                      one completion after, the key never stuck
//   applied_once       the consumer's counter equals the number of distinct
//                      messages delivered (redeliveries change nothing)
//   downstream_once    after a kill right after a downstream answered: that
//                      call answered 2xx once per business action, counted
//                      from the egress proxy's record (no ledger needed)
//
// Shapes read from the history: probe values (model/history.h), requests
// (send/burst) and deliveries: f "deliver" | "publish" events whose `key` is
// the business message id (see docs/scenario-reference.md, "Queue steps").
#pragma once

#include "oracles/oracle.h"

namespace idemproof::oracles {

Verdict IntentReconciled(const OracleInput& in);
Verdict LeaseRecovery(const OracleInput& in);
Verdict AppliedOnce(const OracleInput& in);
Verdict DownstreamOnce(const OracleInput& in);

void RegisterSideEffectOracles(OracleRegistry& registry);

}  // namespace idemproof::oracles
