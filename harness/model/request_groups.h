// Requests grouped by idempotency key, and answers classified against the
// target's declared contract: the vocabulary every oracle and metric shares.
//
// Thread-safety: views into a const History; the History must outlive them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/operation.h"
#include "model/target/contract.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

enum class AnswerClass {
  kNoAnswer,     // info / fail / still open: outcome unknown or not sent
  kSuccess,      // 2xx
  kInProgress,   // the declared in_progress status
  kMismatch,     // the declared mismatch status
  kMissingKey,   // the declared missing_key status
  kRetryable,    // 5xx or a declared retryable status
  kOtherFinal,   // any other status (e.g. a 400 validation failure): terminal
};
const char* AnswerClassName(AnswerClass c);

// Classifies a request operation. Declared statuses win over 5xx.
AnswerClass Classify(const Operation& op, const IdempotencyContract& contract);
// Terminal = stored and replayed by a correct target: kSuccess or kOtherFinal.
bool IsTerminal(AnswerClass c);

// Requests that carried one key for one action with one payload class
// (model/payload.h, PayloadClass), from one caller: each op's invoke keeps
// its own payload name. One key in two callers' hands is two keys.
struct RequestGroup {
  std::string action;
  std::string key;      // concrete, never ""
  std::string payload;  // "default" | "other" | a changed form's name | ... (PayloadClass)
  std::string biz;
  std::vector<Operation> ops;  // in invoke order
  std::string caller = {};  // the target caller's name (value.caller); "" = none
};

// The caller a request went as (its invoke's value.caller), "" for none.
std::string CallerOf(const HistoryEvent& invoke);

// The group's first terminal answer: the terminal op without the replay
// marker that completed first (in a burst the executing request is not always
// the first invoked; a replay may complete before it); when every terminal
// answer is marked, the marked one that completed first. nullptr when no op
// got a terminal answer.
const Operation* FirstTerminal(const RequestGroup& group, const IdempotencyContract& contract);

// The terminal op that completed first, marked or not: where a retry
// window starts (the window and the window-hit metric use it). nullptr when
// no op got a terminal answer.
const Operation* EarliestTerminal(const RequestGroup& group, const IdempotencyContract& contract);

// The retries of `first`: the group's other ops invoked after `first`
// completed and at most `window` after it (nullopt = unbounded), in invoke order.
std::vector<const Operation*> RetriesAfter(const RequestGroup& group, const Operation& first,
                                           std::optional<Duration> window);

// Every request with a key, grouped by (action, key, payload, caller), groups in
// order of their first invoke. `actions` non-empty = keep only those.
std::vector<RequestGroup> GroupRequestsByKey(const History& history,
                                             const std::vector<std::string>& actions = {});

// How the requests of `group` differ, on what the target sees of them: the
// method, the path, each query parameter (order aside), each header (name
// case aside), each leaf of a JSON body (member order and spacing aside) or
// a raw body. Left out: the key header, Content-Length, headers whose
// declared template holds {{uuid}} (the target file makes them fresh per
// request), JSON leaves the action declares {{uuid}} or fingerprint_ignores,
// and the header a payload form added (its rewrites name it). A form that
// changes the request on purpose (other, value_changed, field_removed) is
// compared only with requests of the same form. One line per differing
// part, e.g. "#1 has query slow_ms=1500, #3, #5 have none"; empty when the
// requests are alike (a client's retry repeats its request byte for byte).
std::vector<std::string> RequestDifferences(const RequestGroup& group, const TargetDescription& target);

// The sentence verdicts about `group` carry when its requests differ:
// "requests of key K (ACTION) differ: #1 has query slow_ms=1500, #3 has
// none"; "" when they are alike.
std::string RequestDifferencesText(const RequestGroup& group, const TargetDescription& target);

}  // namespace idemproof
