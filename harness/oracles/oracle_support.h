// Internal to idemproof_oracles: what several oracles share (parameter
// reading, event references in details) and each oracle's entry point for
// builtin.cpp. Not a public header.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/answer_diff.h"
#include "model/finding.h"
#include "model/operation.h"
#include "model/request_groups.h"
#include "oracles/oracle.h"

namespace idemproof::oracles {

// The "actions" parameter, or {} (= every action).
std::vector<std::string> ActionsParam(const nlohmann::json& params);
// A compact reference to a request for `details`: index, process, key, biz,
// answer (status, headers, the body's head: AnswerEvidenceJson) or the
// completion type.
nlohmann::json OpJson(const Operation& op);
// "request #12 (client-0)"
std::string OpName(const Operation& op);
// The payload an op carried and what the harness rewrote in it
// ("value_changed: $.qty 1 -> 2"; runtime/request_forms.h).
std::string ChangeSummary(const Operation& op);

// True when the scenario made `op` fail on purpose and it did: its request
// carried the variant that provides a failure capability (retryable_failure's
// fails_retryably, model/capabilities.h) and it got a retryable answer. Such
// an answer is the harness's doing: it proves nothing about the key.
bool FailedOnPurpose(const Operation& op, const IdempotencyContract& contract);

// How many executions the declared retry window allows for `ops` (one
// business id's requests, any order): 1, plus 1 for every request invoked
// more than `window` after the current window opened (the completion of its
// first terminal answer; that request opens the next). No window: 1.
// An execution after the window has passed is expected, never a violation.
int WindowExecutions(const std::vector<Operation>& ops, const IdempotencyContract& contract);
// How many executions the window allows for every request of `biz` on
// `action` (any key, any payload): the records probe counts by biz, so a
// reuse with another payload after the window (rightly executed) counts too.
int BizWindowExecutions(const History& history, const std::string& action, const std::string& biz,
                        const IdempotencyContract& contract);
// The same requests cut into those windows, each in invoke order: the first
// holds every request up to the first one invoked more than `window` after
// the first window opened, and so on; a burst after the window is one
// window, not one per request. No window declared: one segment with all.
// Never empty (one empty segment for no requests).
std::vector<std::vector<Operation>> WindowSegments(const std::vector<Operation>& ops,
                                                   const IdempotencyContract& contract);

// What an oracle found wrong, in order: every finding is kept (in role
// order, InRoleOrder) for the verdict's details.violations; the first one's
// problem is the verdict's evidence.
class Violations {
 public:
  // REQUIRES: !finding.problem.empty().
  void Add(const Finding& finding);
  bool empty() const { return list_.empty(); }
  const std::string& first() const { return first_; }
  const std::vector<Finding>& findings() const { return list_; }

 private:
  std::vector<Finding> list_;
  std::string first_;
};

// How many requests got each answer, for evidence that quotes what was
// answered ("422 x2, 400 x1"), never what the contract declares.
class AnswerTally {
 public:
  // Counts `op`'s status, or "no answer".
  void Add(const Operation& op);
  // Counts one answer under `what` ("no answer", "429 declared retryable").
  // REQUIRES: !what.empty().
  void AddAs(const std::string& what);
  int total() const { return total_; }
  // "400 x1, 422 x2" (statuses in text order); "" when nothing was added.
  std::string Text() const;
  // {"400": 1, "422": 2}: details' tallies (model/verdict_details.h).
  std::map<std::string, std::int64_t> Counts() const;

 private:
  std::map<std::string, int> counts_;
  int total_ = 0;
};

// The clause a verdict's evidence ends with when it set answers aside
// (`set_aside` counts them by why): "; 2 answer(s) set aside: no answer x1,
// 503 failed on purpose x1"; "" when none was. Every oracle that leaves
// answers out of its judgement says how many and why.
std::string SetAsideClause(const AnswerTally& set_aside);

// Distinct downstream effects (intent_reconciled, downstream_once): effects,
// not calls. A call or ledger entry is the effect its answer names (an effect
// id), else the one its downstream idempotency key names (the key the service
// sent, an egress record entry's "key": a call re-sent under the same key is
// the same effect), else an effect of its own.
class DistinctEffects {
 public:
  // Counts one call or entry; true when it is an effect not counted before.
  bool Add(const std::optional<std::string>& id, const std::optional<std::string>& key);
  std::int64_t count() const { return count_; }
  std::int64_t added() const { return added_; }  // calls or entries, repeats included
  const std::vector<std::string>& ids() const { return ids_; }    // distinct, in order
  const std::vector<std::string>& keys() const { return keys_; }  // effects named by key only
  // " (txn-1, downstream key pk-7)"; "" when no effect is named.
  std::string Names() const;

 private:
  std::int64_t count_ = 0, added_ = 0;
  std::vector<std::string> ids_, keys_;
};
// The downstream idempotency key an egress record entry (or an egress
// probe's whole entry) went under; nullopt when it carried none.
std::optional<std::string> DownstreamKeyOf(const nlohmann::json& entry);

// The spans [from, to) of the run in which a fault on the target's own store
// (`on: store`, or a tcp egress) was active: from its start to its heal, or
// to the end of its declared window, whichever comes first.
std::vector<std::pair<std::int64_t, std::int64_t>> StoreOutages(const OracleInput& in);
// A retryable failure answered to a request that overlapped a store outage:
// with its store down a correct service says so retryably.
bool FailedInStoreOutage(const Operation& op, const IdempotencyContract& contract,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& outages);

// Why the answer of `op`, a request of a key that is held (running, or a
// crashed request's claim), says nothing about how the key is handled, or ""
// when it is an answer to judge (a decisive one, any 5xx included: a 5xx
// tells the client its request failed, not that its key runs): no answer, a
// declared retryable status below 500, a failure the scenario caused on
// purpose, a failure while the target's store was down. The phrase is the
// set-aside tally's ("503 failed on purpose").
std::string HeldKeySetAsideWhy(const Operation& op, const IdempotencyContract& contract,
                               const std::vector<std::pair<std::int64_t, std::int64_t>>& outages);

// True when `op` was answered with an authentication or authorization
// failure (401, 403, 407) the contract declares for no refusal: such a
// request was turned away before any key was looked up, so it says nothing
// about the key.
bool AuthRefused(const Operation& op, const IdempotencyContract& contract);

// The usual end of an oracle that judged `judged` occurrences of its premise
// and saw `undecided` more without a decisive answer: invalid on a violation,
// valid when something was judged, else unknown — `undecided_text` when the
// premise occurred, `unreached_text` when it never did. The premise count is
// judged + undecided.
Verdict Conclude(const std::string& name, const Violations& violations, const VerdictDetails& details, int judged,
                 int undecided, const std::string& valid_text, const std::string& undecided_text,
                 const std::string& unreached_text);

// The premise of the oracles that count executions: that something executed.
// `ops` are the requests of one business id or key; `swallowed_2xx` says a
// proxy fault swallowed a 2xx answer of theirs. Returns "" when the premise
// held — some request got a 2xx, or every one was refused with a status the
// contract declares for the refusals a scenario asks for (mismatch, missing
// key) — else why not, for an `unknown` ("nothing executed: 8 request(s),
// answered 401 x8"): a 401, a 302 or a 404 for every request proves nothing.
std::string NothingExecuted(const std::vector<Operation>& ops, const IdempotencyContract& contract,
                            bool swallowed_2xx);

// Why no oracle of `signature` may be valid over `history`, if so: an answer
// body it would compare was truncated, or the target process ended during
// the scenario other than by a step (a "target_exited" event).
std::optional<std::string> PremiseBroken(const OracleSignature& signature, const History& history);

Verdict OneRecord(const OracleInput& in);
Verdict IdenticalReplay(const OracleInput& in);
Verdict MismatchRejected(const OracleInput& in);
Verdict MissingKeyRejected(const OracleInput& in);
Verdict KeylessExecutes(const OracleInput& in);
Verdict InProgress(const OracleInput& in);
Verdict RetryableReleased(const OracleInput& in);
Verdict NoFalseDedup(const OracleInput& in);
Verdict NewKeyExecutes(const OracleInput& in);
Verdict ActionScope(const OracleInput& in);
Verdict CallerScope(const OracleInput& in);
Verdict Window(const OracleInput& in);
Verdict RetryAfter(const OracleInput& in);
Verdict KeyReleased(const OracleInput& in);
Verdict RouteSpelling(const OracleInput& in);
Verdict ProbeEqual(const OracleInput& in);
Verdict RangeContinuity(const OracleInput& in);
// key_syntax.cpp (issue 48 item 4)
Verdict EmptyKeyRejected(const OracleInput& in);
Verdict LongKeyRejected(const OracleInput& in);
Verdict KeySyntaxRejected(const OracleInput& in);
Verdict ProblemDetails(const OracleInput& in);

}  // namespace idemproof::oracles
