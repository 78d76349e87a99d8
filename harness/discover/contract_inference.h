// Contract inference (issue 34, `idemproof discover`): from the answers a
// handful of harmless probes got, the idempotency contract the target showed,
// line by line against what its target file declares. A pure function over
// recorded answers: no request, no clock, so each rule is testable without a
// server (tests/harness-discover).
//
// The probes, per keyed action (discoverer.h sends them):
//   first       a fresh key and business id
//   replay      the same key and body again, after the first answered
//   changed     the same key, another body (other_payload, else one JSON
//               leaf changed)
//   keyless     no key, another business id
//   slow_first  the action's `slow` variant under a fresh key, in the background
//   concurrent  the same key while slow_first still runs
// What each line is inferred from:
//   replay          a header (else a JSON body leaf) every 2xx replay carries
//                   with one value that no 2xx first answer carries with it
//                   (absent on the first answers ranks before "other value")
//   mismatch        the changed request's 4xx; a 2xx is "no refusal seen"
//   in_progress     the concurrent request's 4xx, and its Retry-After; a 2xx
//                   is "the duplicate waited" (no in-progress status seen)
//   key             the keyless request: 2xx = optional, 4xx = required with
//                   that missing_key status
//   compare_headers the answer-describing headers (Content-Type, Location...)
//                   a replay repeated exactly
//   replay equal    status and body (minus volatile paths and a body marker)
//                   of each replay against its first answer
// A line no probe decided (no slow variant, no answer) keeps the declared
// value and says why; it is never counted as a match or a difference.
//
// Thread-safety: pure functions over values.
#pragma once

#include <string>
#include <vector>

#include "base/header_list.h"
#include "model/target.h"

namespace idemproof::discover {

enum class ProbeKind { kSetup, kFirst, kReplay, kChanged, kKeyless, kSlowFirst, kConcurrent };
// "setup", "first", "replay", "changed", "keyless", "slow first", "concurrent".
const char* ProbeKindName(ProbeKind kind);

// One probe request and what came back.
struct ProbeAnswer {
  std::string action;
  ProbeKind kind = ProbeKind::kFirst;
  std::string request;   // "POST /orders" as sent (method and origin-form target)
  std::string key_name;  // symbolic ("d1k1"; "none")
  std::string payload;   // "default", "other", "value_changed"
  int status = 0;        // 0 = no answer
  std::string error;     // no answer: why
  HeaderList headers;
  std::string body;

  // "create_order replay: POST /orders key d1k1 -> 201"
  std::string Evidence() const;
};

// One line of the proposal.
struct ProposedLine {
  std::string key;        // "replay", "mismatch", ... as in the target file
  std::string proposed;   // YAML value text; "" = nothing the file can say (a comment line)
  std::string declared;   // the file's value text ("" = undeclared / default off)
  std::string comment;    // what was seen, or why nothing was decided
  std::vector<std::string> evidence;  // the answers behind it
  bool decided = false;   // a probe decided it
  bool differs = false;   // decided and not what the file declares
};

struct Proposal {
  std::vector<ProposedLine> lines;  // key_header, replay, mismatch, in_progress, retry_after, key, missing_key, compare_headers, replay_equal
  std::vector<std::string> notes;   // what was not probed and why
  std::string undecided;            // non-empty: nothing could be decided (why)

  int Differences() const;
  const ProposedLine* Find(const std::string& key) const;
};

// The contract `answers` show, against `target`'s declarations.
Proposal InferContract(const std::vector<ProbeAnswer>& answers, const TargetDescription& target);

// The proposal as the target file's `idempotency:` section (and
// compare_headers) with a diff column: ' ' as declared, '-' the file's line,
// '+' the proposed one; every line's evidence as a comment.
std::string ProposalText(const Proposal& proposal);

}  // namespace idemproof::discover
