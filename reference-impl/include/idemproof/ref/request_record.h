// The idempotency record: what the store keeps per (method, route template,
// key) scope. Plain values.
//
//   in_progress  a Lease is held: owner token + lease expiry. An expired lease
//                is as good as absent: the next claim takes it over.
//   completed    the stored answer (status, body bytes, Content-Type,
//                Location), replayed until `expires_at` (the dedup TTL).
//
// After a retryable failure there is no record at all (the claim is released).
#pragma once

#include <optional>
#include <string>

#include "idemproof/ref/clock.h"

namespace idemproof::ref {

// Which action a key belongs to: the same key on two scopes is two records.
struct RequestScope {
  std::string method;          // "POST"
  std::string route_template;  // "/orders/{id}"
  std::string key;             // the idempotency key

  friend auto operator<=>(const RequestScope&, const RequestScope&) = default;
};

// The right to execute one scope until `expires_at`; `owner` fences completion.
struct Lease {
  std::string owner;  // random token, unique per claim
  TimePoint expires_at;
};

// A terminal answer, stored to be replayed byte for byte.
struct StoredResponse {
  int status = 0;
  std::string content_type;
  std::string location;  // empty when the answer had no Location
  std::string body;

  friend bool operator==(const StoredResponse&, const StoredResponse&) = default;
};

enum class RecordState { in_progress, completed };

struct RequestRecord {
  RequestScope scope;
  std::string fingerprint;
  RecordState state = RecordState::in_progress;
  Lease lease;                              // meaningful while in_progress
  std::optional<StoredResponse> response;   // set once completed
  TimePoint completed_at{};                 // set once completed
  TimePoint expires_at{};                   // completed records: end of dedup TTL

  // True when the record still counts at `now` (a live lease, or a completed
  // record inside its TTL). A dead record is treated as absent everywhere.
  bool live_at(TimePoint now) const {
    return state == RecordState::in_progress ? now < lease.expires_at : now < expires_at;
  }
};

// What one claim attempt found.
enum class ClaimKind {
  claimed,      // no live record: the caller now holds the lease
  took_over,    // a dead record (expired lease or TTL) was replaced: caller holds the lease
  in_progress,  // a live lease, same fingerprint: answer 409
  completed,    // a completed record, same fingerprint: replay it
  mismatch,     // a live record with another fingerprint: answer 422
};

struct ClaimOutcome {
  ClaimKind kind = ClaimKind::claimed;
  std::optional<RequestRecord> existing;  // set for in_progress, completed, mismatch
};

struct ClaimRequest {
  RequestScope scope;
  std::string fingerprint;
  Lease lease;
  TimePoint now;
};

// Whether completion checks the owner token (the correct way) or not.
enum class Fencing { by_owner, none };

}  // namespace idemproof::ref
