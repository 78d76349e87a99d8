// `idempotency:` and `profile:` of the target file: the idempotency contract
// the target declares. The defaults follow the IETF draft "The
// Idempotency-Key HTTP Header Field" (key header Idempotency-Key, 409 while
// in progress, 422 for another payload under a used key, 400 for a missing
// key); a semantics profile (model/profile.h) may change them first.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/header_list.h"
#include "model/json_path.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;  // model/target/load_context.h

// The replay marker a target puts on replayed answers: a header (Stripe's
// "Idempotent-Replayed: true") or a member of a JSON body (`body`, e.g.
// "$.meta.replayed"). Exactly one of the two is set. Header names compare
// case-insensitively; values exactly (a non-string JSON value as its JSON
// text, so `true` matches "true"). A body marker is left out whenever a
// replay's body is compared with the first answer's.
struct ReplayMarker {
  std::string header;
  std::optional<JsonPath> body;
  std::string value = "true";
  // For evidence: Where() is "X-Replayed" / "body $.meta.replayed";
  // Describe() adds the value: "X-Replayed: true" / "body $.meta.replayed = true".
  std::string Where() const;
  std::string Describe() const;
};

// How the target treats another spelling of a keyed route
// (`idempotency.path_equivalence`, issue 33): `same` = the same route, so the
// same key is a retry (a replay of the first answer, one execution);
// `distinct` = another route, whose answer is never the other's replay;
// undeclared = that spelling is not judged. `query` adds parameters to every
// request of the route-spelling family, so a request with fewer than two of
// its own still has a query order to change.
struct PathEquivalence {
  enum class Spelling { kUndeclared, kSame, kDistinct };
  Spelling trailing_slash = Spelling::kUndeclared;  // `/orders/` for `/orders`
  Spelling letter_case = Spelling::kUndeclared;     // `case`: `/ORDERS` for `/orders`
  Spelling query_order = Spelling::kUndeclared;     // `?b=2&a=1` for `?a=1&b=2`
  HeaderList query;                                 // templated values, in order

  bool Declared() const {
    return trailing_slash != Spelling::kUndeclared || letter_case != Spelling::kUndeclared ||
           query_order != Spelling::kUndeclared;
  }
  // By a respelling payload form's name (model/payload.h):
  // "spelling_trailing_slash" -> trailing_slash's treatment, its key in the
  // file ("trailing_slash"); kUndeclared and "" for any other name.
  Spelling For(const std::string& form) const;
  static std::string KeyFor(const std::string& form);
};

// The idempotency contract the target declares.
struct IdempotencyContract {
  // The header carrying the key. "" (`key_header: none`): the key travels
  // where the actions' request templates put {{key}} (a body member, as
  // Square's idempotency_key or AWS's ClientToken; a query parameter); every
  // action must then use {{key}}.
  std::string key_header = "Idempotency-Key";
  std::optional<ReplayMarker> replay;  // absent: the target does not mark replays
  // `key: optional`: a keyless request is executed without deduplication
  // (missing_key is then unused); required (default): answered missing_key.
  bool key_optional = false;
  // The in-progress / mismatch statuses: an int or a list in the file; the
  // first is `in_progress` / `mismatch` (the one expected when one is needed),
  // the rest `*_also`. Compare through IsInProgress / IsMismatch.
  int in_progress = 409;
  std::vector<int> in_progress_also;
  int mismatch = 422;
  std::vector<int> mismatch_also;
  int missing_key = 400;
  // Retry-After on in-progress answers (the retry_after oracle):
  // kRequired = a MUST (violation), kRecommended = a SHOULD (deviation),
  // kNone = not judged (default).
  enum class RetryAfter { kNone, kRecommended, kRequired };
  RetryAfter retry_after = RetryAfter::kNone;
  // The shortest delay an in-progress answer's Retry-After may give
  // (`retry_after: {level, min}`; 1s by default): `0` tells a client to
  // retry at once, for as long as the work runs.
  Duration retry_after_min = std::chrono::seconds(1);
  // With no lease declared: how long crash scenarios retry a blocked key
  // before lease_recovery calls it blocked (a violation: the strict reading).
  // `recovery_bound_declared`: the target file says it (`recovery_bound:
  // 24h`), so the bound is the target's contract and verdicts name it as such.
  Duration recovery_bound = std::chrono::seconds(30);
  bool recovery_bound_declared = false;
  // `natural_key: $.order_ref`: the target dedups requests by this member of
  // the body as well as by key, so the same business request under a new key
  // may be refused (new_key_executes); undeclared, a new key always executes.
  std::optional<JsonPath> natural_key;
  // What the target fingerprints a request by (`fingerprint: json | bytes`):
  // kJson (default) = its canonical JSON, so an equivalent body (members
  // reordered, respaced) is the same request; kBytes = the body's bytes (the
  // IETF draft allows a checksum over the payload), so an equivalent but
  // different body is another payload and may get the mismatch status.
  enum class Fingerprint { kJson, kBytes };
  Fingerprint fingerprint = Fingerprint::kJson;
  // Answers after which a retry must really execute, besides every 5xx.
  std::vector<int> retryable;
  // What the target stores and replays, as its semantics profile says
  // (model/profile.h): a 5xx is released (retryable) unless stores_5xx
  // (Stripe v1 replays a saved 500); a 4xx other than the declared refusals
  // is stored unless !stores_4xx (store-2xx-only: it is released too).
  bool stores_5xx = false;
  bool stores_4xx = true;
  std::string profile = "ietf";  // the profile these defaults came from
  std::optional<Duration> window;  // the declared retry window
  std::optional<Duration> lease;   // the declared in-progress lease
  // The longest key the target accepts (`key_max_length`); `key_form:
  // max_length` sends keys this long. 255 (Stripe's limit) when undeclared.
  // `key_max_length_declared`: the file says it, so a key one character
  // longer must be refused (key_form: over_max_length; undeclared, the IETF
  // draft sets no maximum and that scenario is not applicable).
  std::size_t key_max_length = 255;
  bool key_max_length_declared = false;
  // `invalid_key`: the answer to a key that is empty, too long or not a
  // Structured Field String (the malformed_key oracles). Default 400.
  int invalid_key = 400;
  // The file says `invalid_key`: the target promises to refuse a malformed
  // key. Undeclared, the key-syntax scenarios are not applicable: the draft
  // asks the client for an sf-string and leaves the server's answer open, and
  // a service that takes any header value as its key is no false alarm.
  bool invalid_key_declared = false;
  // Other spellings of a keyed route (`path_equivalence`); none declared:
  // the route-spelling family is not applicable.
  PathEquivalence path_equivalence;
  // `validation_first: true`: the target validates a request before its key
  // is looked up, so a reuse with another payload the target finds invalid
  // may get a 4xx other than the mismatch status (400) and is refused all the same.
  bool validation_first = false;

  // True for the declared retryable statuses, for 5xx unless stores_5xx,
  // and unless stores_4xx for every 4xx but the declared in-progress,
  // mismatch and missing-key refusals.
  bool IsRetryable(int status) const;
  bool IsInProgress(int status) const;  // in_progress or one of in_progress_also
  bool IsMismatch(int status) const;    // mismatch or one of mismatch_also
  // "409" / "409 or 425": the accepted statuses, for evidence.
  std::string InProgressText() const;
  std::string MismatchText() const;
  // The lease when declared, else recovery_bound: how long a crashed owner's
  // claim may block its key.
  Duration RecoveryBound() const { return lease ? *lease : recovery_bound; }
};

// The contract: the defaults of the semantics profile (--profile, else
// `profile:`, else ietf) refined by `idempotency:` (either node may be absent).
IdempotencyContract ParseContract(TargetLoadContext& cx, const YAML::Node& profile, const YAML::Node& idempotency);

}  // namespace idemproof
