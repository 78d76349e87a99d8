// Flaw: the named mistakes the reference service can be switched into, one
// at a time (`--flaw NAME`), so the harness can show it catches each one.
// docs/reference-service.md describes each flaw and its symptom.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace idemproof::ref {

enum class Flaw {
  none,
  check_then_insert,
  request_id_key,
  memory_store,
  no_fingerprint,
  cache_retryable,
  volatile_replay,
  empty_replay,
  no_lease_expiry,
  unfenced_takeover,
  short_ttl,
  expiry_race,        // the store's (sqlite_store.h), like check_then_insert
  instance_local_claims,  // the store's (instance_local_claim_store.h): only several instances show it
  delete_releases_twice,
  put_increment,
  fingerprint_key_order,
  fast_path_skips_fingerprint,
  store_after_answer,
  cross_caller_replay,
  no_intent,          // side effects (side_effect_routes.h)
  callback_no_dedup,
  inbox_no_dedup,
  whole_batch_marker,  // batch jobs (batch_job.h)
  no_range_marker,
  batch_id_in_request_table,
  coarse_marker,
  replay_reads_current,  // issue 33, classes 3-5 (reference_service.cpp)
  body_hash_key,
  key_truncate,
  truncate_stored_answer,
  seen_before_apply,   // issue 33, class 1 (side_effect_routes.cpp, batch_job.cpp)
  marker_before_rows,
  failure_replay_generic,  // issue 33, class 6 (reference_service.cpp)
  retry_after_zero,        // issue 33, class 7 (reference_service.cpp)
  no_lease_renewal,        // issue 33, class 2 (reference_service.cpp)
  outcome_write_behind,    // issue 33, class 8 (reference_service.cpp)
  key_includes_query,      // issue 33, class 9 (reference_service.cpp)
  in_progress_500,         // issue 46, a 5xx is an answer (reference_service.cpp)
  claim_conflict_500,
  whole_store_rewrite,     // issue 46, many keys at once (whole_file_answer_store.h)
  abort_stores_empty,      // issue 46, a client abort (reference_service.cpp, client_connection.h)
  memory_fingerprint,      // issue 46, a restart before a client-layer check (memory_fingerprint_store.h)
  accept_empty_key,     // issue 48, the key's syntax (reference_service.cpp key_of)
  no_key_length_limit,
  lenient_key_syntax,
  plain_error,          // issue 48, the error format (reference_service.cpp handle_request)
  swallow_store_error,  // issue 46, a store error on completion (reference_service.cpp perform)
  serve_before_recovery,  // issue 46, requests while it starts (http_server.cpp serve, reference_service.cpp)
};

struct FlawInfo {
  Flaw flaw;
  std::string_view name;     // "check-then-insert"
  std::string_view mistake;  // one line: what the flawed service does wrong
};

// Every flaw except `none`, in documentation order.
const std::vector<FlawInfo>& all_flaws();

// The flaw called `name`; nullopt for an unknown name.
std::optional<Flaw> parse_flaw(std::string_view name);

// True for the flaws of the keyed request path (ReferenceService's routes),
// which --flaw-route can aim at one route; false for the store's, the side
// effects' and the batch jobs'.
bool flaw_can_be_aimed(Flaw flaw);

// "none" for Flaw::none, otherwise the flaw's name.
std::string_view flaw_name(Flaw flaw);

}  // namespace idemproof::ref
