#include "idemproof/ref/flaw.h"

namespace idemproof::ref {

const std::vector<FlawInfo>& all_flaws() {
  static const std::vector<FlawInfo> kFlaws{
      {Flaw::check_then_insert, "check-then-insert",
       "reads the key, pauses --check-insert-pause, then inserts without a unique constraint"},
      {Flaw::request_id_key, "request-id-key", "dedups by X-Request-Id instead of the key header"},
      {Flaw::memory_store, "memory-store", "request records live in process memory"},
      {Flaw::no_fingerprint, "no-fingerprint", "ignores the payload"},
      {Flaw::cache_retryable, "cache-retryable", "stores the 503 of a downstream failure"},
      {Flaw::volatile_replay, "volatile-replay", "rebuilds the replay with a fresh created_at"},
      {Flaw::empty_replay, "empty-replay", "replays 200 {\"status\":\"duplicate\"}"},
      {Flaw::no_lease_expiry, "no-lease-expiry", "an in-progress claim never expires"},
      {Flaw::unfenced_takeover, "unfenced-takeover", "completion ignores the owner token"},
      {Flaw::short_ttl, "short-ttl", "records expire after 1/100 of --dedup-ttl"},
      {Flaw::expiry_race, "expiry-race",
       "replaces an expired record by read, pause, blind overwrite: concurrent retries after the TTL all execute"},
      {Flaw::instance_local_claims, "instance-local-claims",
       "decides in-progress claims in process memory, records and orders in the shared store: a duplicate on "
       "another instance while the first runs executes too, and completes over it"},
      {Flaw::delete_releases_twice, "delete-releases-twice",
       "DELETE releases stock without checking the state"},
      {Flaw::put_increment, "put-increment",
       "PUT appends to the address instead of setting it"},
      {Flaw::fingerprint_key_order, "fingerprint-key-order",
       "fingerprints the body's bytes, not its canonical JSON: a retry with members in another order or other "
       "whitespace gets 422"},
      {Flaw::fast_path_skips_fingerprint, "fast-path-skips-fingerprint",
       "a replay warms an in-memory answer cache consulted before the fingerprint: once a key was replayed, "
       "another payload under it gets the cached answer"},
      {Flaw::store_after_answer, "store-after-answer",
       "answers first and stores the completed record 200 ms later, without waiting: a crash right after "
       "the answer leaves the key in progress, and a retry after the lease executes again"},
      {Flaw::cross_caller_replay, "cross-caller-replay",
       "scopes keys by route only, not by caller (Authorization): one caller's answer is replayed to another "
       "that reuses its key, and a reuse with another payload is refused with 422"},
      {Flaw::no_intent, "no-intent",
       "charges the provider without an intent record: a retry after a crash charges again"},
      {Flaw::callback_no_dedup, "callback-no-dedup",
       "applies every provider callback, repeated sequence numbers and disallowed transitions too"},
      {Flaw::inbox_no_dedup, "inbox-no-dedup", "the queue consumer applies every delivery"},
      {Flaw::whole_batch_marker, "whole-batch-marker",
       "marks the whole batch job done when its run starts: a rerun after a failure skips the rest"},
      {Flaw::no_range_marker, "no-range-marker",
       "batch jobs keep no range markers and insert rows: a rerun doubles what was done"},
      {Flaw::batch_id_in_request_table, "batch-id-in-request-table",
       "dedups batch runs by job id in the request table under its TTL, inserting rows"},
      {Flaw::coarse_marker, "coarse-marker",
       "marks a batch run's whole range only when it completes: a partial failure cannot resume"},
      {Flaw::replay_reads_current, "replay-reads-current",
       "rebuilds an order's replay from the order's current row: after a cancel or a change, a replay of the "
       "create answers the new state instead of the first answer"},
      {Flaw::body_hash_key, "body-hash-key",
       "dedups by a hash of the body instead of the key header: the same order under a new key is swallowed "
       "as a replay of the first"},
      {Flaw::key_truncate, "key-truncate",
       "stores keys cut at 64 characters: two long keys sharing a prefix are one key"},
      {Flaw::truncate_stored_answer, "truncate-stored-answer",
       "stores answers cut at 4096 bytes (a column size): a replay of a large answer is truncated"},
      {Flaw::seen_before_apply, "seen-before-apply",
       "the queue consumer commits the message id as seen, then applies it in a separate step: a crash between "
       "the two drops the redelivery as a duplicate, and the business never happens"},
      {Flaw::marker_before_rows, "marker-before-rows",
       "a batch run commits a partition's range marker before writing its rows: a crash between the two leaves "
       "a partition marked done with no rows, which the rerun skips"},
      {Flaw::failure_replay_generic, "failure-replay-generic",
       "keeps only the status of a stored failure (a 4xx): its replay is a generic problem body, not the "
       "answer the failed request got"},
      {Flaw::retry_after_zero, "retry-after-zero",
       "answers a duplicate in progress 409 with Retry-After: 0: retry at once, for as long as the work runs"},
      {Flaw::no_lease_renewal, "no-lease-renewal",
       "an owner does not renew its lease while its work runs: work slower than the lease is taken over and "
       "rolled back, so a request (and its retry) slower than its lease never completes and the key stays blocked"},
      {Flaw::outcome_write_behind, "outcome-write-behind",
       "answers, then writes the outcome from a background writer 100 ms later and drops a write that fails: "
       "a store fault right after the answer leaves the key in progress until its lease ends, then it executes "
       "again"},
      {Flaw::key_includes_query, "key-includes-query",
       "scopes a key by the request target as it came, query string included: the same request with its query "
       "parameters in another order is another key and executes again"},
      {Flaw::in_progress_500, "in-progress-500",
       "answers a duplicate whose key is in progress 500 instead of 409: the client is told its request failed "
       "while the first still runs"},
      {Flaw::claim_conflict_500, "claim-conflict-500",
       "reads the key, pauses --check-insert-pause, then claims it atomically; a duplicate that read the key "
       "absent and then lost the claim to a concurrent twin gets 500, as a unique-constraint error let through"},
      {Flaw::whole_store_rewrite, "whole-store-rewrite",
       "keeps the completed answers in one document that each request reads when it comes in and writes back "
       "whole when it completes: requests of different keys at once overwrite each other's answers, and a key "
       "whose answer was lost executes again on retry"},
      {Flaw::abort_stores_empty, "abort-stores-empty",
       "captures the answer to store from the response stream: when the client gave up while the handler ran, "
       "it stores 200 with an empty body, and every retry is answered that instead of the real answer"},
      {Flaw::memory_fingerprint, "memory-fingerprint",
       "keeps each key's request fingerprint in process memory, the records in the store: after a restart, or on "
       "another instance, a key reused with another payload gets the first answer instead of the mismatch status"},
      {Flaw::accept_empty_key, "accept-empty-key",
       "takes a key header with an empty value for no key: the request executes, undeduplicated, instead of 400"},
      {Flaw::no_key_length_limit, "no-key-length-limit",
       "accepts a key of any length, past the 255 characters it documents, instead of 400"},
      {Flaw::lenient_key_syntax, "lenient-key-syntax",
       "takes any header value as the key (a list with a comma, a stray quote, non-ASCII bytes) instead of 400"},
      {Flaw::plain_error, "plain-error",
       "answers every 4xx as text/plain (the detail alone) instead of application/problem+json"},
      {Flaw::swallow_store_error, "swallow-store-error",
       "commits the work, then stores the answer in a write of its own (as a middleware does) and ignores an "
       "error on it: the client gets the success, the key stays in progress, and a retry after the lease "
       "executes again"},
      {Flaw::serve_before_recovery, "serve-before-recovery",
       "listens and serves at once, then recovers its store for 2 s; meanwhile its readiness request answers 503 "
       "but the idempotency layer fails open (a request runs without its key): a retry that arrives while the "
       "service starts executes a second time"},
  };
  return kFlaws;
}

std::optional<Flaw> parse_flaw(std::string_view name) {
  if (name == "none") return Flaw::none;
  for (const auto& info : all_flaws()) {
    if (info.name == name) return info.flaw;
  }
  return std::nullopt;
}

bool flaw_can_be_aimed(Flaw flaw) {
  switch (flaw) {
    case Flaw::request_id_key:
    case Flaw::no_fingerprint:
    case Flaw::cache_retryable:
    case Flaw::volatile_replay:
    case Flaw::empty_replay:
    case Flaw::no_lease_expiry:
    case Flaw::unfenced_takeover:
    case Flaw::short_ttl:
    case Flaw::delete_releases_twice:
    case Flaw::put_increment:
    case Flaw::fingerprint_key_order:
    case Flaw::fast_path_skips_fingerprint:
    case Flaw::store_after_answer:
    case Flaw::cross_caller_replay:
    case Flaw::replay_reads_current:
    case Flaw::body_hash_key:
    case Flaw::key_truncate:
    case Flaw::truncate_stored_answer:
    case Flaw::failure_replay_generic:
    case Flaw::retry_after_zero:
    case Flaw::no_lease_renewal:
    case Flaw::outcome_write_behind:
    case Flaw::key_includes_query:
    case Flaw::in_progress_500:
    case Flaw::claim_conflict_500:
    case Flaw::abort_stores_empty:
    case Flaw::accept_empty_key:
    case Flaw::no_key_length_limit:
    case Flaw::lenient_key_syntax:
    case Flaw::swallow_store_error:
      return true;
    default:
      return false;
  }
}

std::string_view flaw_name(Flaw flaw) {
  for (const auto& info : all_flaws()) {
    if (info.flaw == flaw) return info.name;
  }
  return "none";
}

}  // namespace idemproof::ref
