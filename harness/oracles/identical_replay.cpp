// identical_replay: every later terminal answer for one key + payload equals
// the first (status, body minus volatile paths, declared headers) and carries
// the replay marker; the first answer does not carry it. A retry sent after
// the key completed (inside the window) that gets no stored answer at all —
// in progress, mismatch, missing key, a 5xx — is a violation too, never "no
// replay happened". Answers a proxy
// fault swallowed (swallowed_answers.h) count as answers of their key: the
// first answer may be one the client never saw. After the declared window,
// each later window is judged against its own execution (JudgeLaterWindows).
// A stored failure (a final non-2xx) is replayed like a success, and its
// Retry-After with it: a repeat of the failed request must get it unchanged
// (`failures: true` judges only the keys whose first answer was one).
// A retry answered with a retryable failure while a fault on the target's
// own store was active is not judged: with its store down, a correct
// service cannot read the stored answer, and says so retryably.
#include <algorithm>
#include <limits>
#include <utility>

#include "base/duration.h"
#include "base/header_list.h"
#include "model/event_names.h"
#include "oracles/oracle_support.h"
#include "oracles/swallowed_answers.h"

namespace idemproof::oracles {

namespace {

bool TerminalAnswer(const HttpAnswer& a, const IdempotencyContract& c) {
  if (a.is_2xx()) return true;
  return !c.IsInProgress(a.status) && !c.IsMismatch(a.status) && a.status != c.missing_key && !c.IsRetryable(a.status);
}

// How `later` falls short of replaying `first`: the answer differences, and
// the replay marker when the target declares one and `later` lacks it.
std::vector<std::string> ReplayDifferences(const HttpAnswer& first, const HttpAnswer& later,
                                           const std::vector<JsonPath>& volatile_paths, const OracleInput& in) {
  const auto& contract = in.target.idempotency;
  // A failure's Retry-After is part of the answer the client acts on.
  std::vector<std::string> headers = in.target.compare_headers;
  if (!first.is_2xx() && first.Header("Retry-After")) {
    bool declared = false;
    for (const auto& h : headers) declared = declared || equals_ignoring_case(h, "Retry-After");
    if (!declared) headers.push_back("Retry-After");
  }
  auto diffs = AnswerDifferences(first, later, volatile_paths, headers);
  if (contract.replay && !IsReplayMarked(later, contract))
    diffs.push_back("replay marker " + contract.replay->Describe() + " missing");
  return diffs;
}

// True when `op` carried a form of the default request equal as JSON but
// not as bytes (members reordered, re-indented, or all equal forms at once).
bool BodyBytesChanged(const Operation& op) {
  const auto form = ParsePayloadName(op.invoke->payload);
  return form && (*form == PayloadVariant::kReordered || *form == PayloadVariant::kRespaced ||
                  *form == PayloadVariant::kEquivalent);
}

// A retry of a completed key answered something else than a stored answer
// (in progress, mismatch, missing key, a retryable failure): the key's
// result was not replayed. A retry with no answer says nothing.
bool NotAReplay(const Operation& op, const IdempotencyContract& contract) {
  const AnswerClass c = Classify(op, contract);
  return c != AnswerClass::kNoAnswer && !IsTerminal(c);
}

Finding NotAReplayViolation(const RequestGroup& g, const Operation& op, const std::string& first_name,
                            const HttpAnswer& first, const nlohmann::json& first_ref,
                            const IdempotencyContract& contract) {
  const HttpAnswer a = *op.answer();
  return MakeFinding("key " + g.key + " (" + g.action + "): " + OpName(op) + " retried the completed key and got " +
                         AnswerSummary(a) + " (" + AnswerClassName(Classify(op, contract)) +
                         ") instead of the stored answer of " + first_name + ", " + AnswerSummary(first),
                     {{"key", g.key}, {"action", g.action}})
      .With(FindingRole::kFirst, first_ref)
      .With(FindingRole::kReplay, OpJson(op));
}

// The finding of a replay that differs from the answer it should equal.
Finding DiffersFinding(const RequestGroup& g, std::string problem, const std::vector<std::string>& diffs,
                       const nlohmann::json& first_ref, const nlohmann::json& replay_ref) {
  Finding v = MakeFinding(std::move(problem), {{"key", g.key}, {"action", g.action}})
                  .With(FindingRole::kFirst, first_ref)
                  .With(FindingRole::kReplay, replay_ref);
  v.differences = diffs;
  return v;
}

std::string Joined(const std::vector<std::string>& diffs) {
  std::string out;
  for (const auto& d : diffs) out += (out.empty() ? "" : "; ") + d;
  return out;
}

// One answer of a key as seen on the wire, by the client or only by a proxy.
struct KeyAnswer {
  HttpAnswer answer;
  std::int64_t invoke_ns = 0, done_ns = 0;
  std::string name;     // "request #12 (client-0)" / "answer swallowed by drop-response (proxy event #7)"
  nlohmann::json ref;   // for details
};

// The group with the answers proxies swallowed: the earliest unmarked terminal
// answer is the first (the earliest marked one when none is unmarked); every
// other terminal answer must equal it and carry the marker.
void JudgeWithSwallowed(const RequestGroup& g, const std::vector<const SwallowedAnswer*>& swallowed,
                        const OracleInput& in, Violations& violations,
                        int& replays, int& keys) {
  const auto& contract = in.target.idempotency;
  std::vector<KeyAnswer> answers;
  for (const auto& op : g.ops) {
    if (!IsTerminal(Classify(op, contract))) continue;
    answers.push_back({*op.answer(), op.invoke_ns(), op.complete_ns(), OpName(op), OpJson(op)});
  }
  for (const SwallowedAnswer* s : swallowed) {
    if (!TerminalAnswer(s->answer, contract)) continue;
    answers.push_back({s->answer, s->at_ns, s->at_ns,
                       "the answer swallowed by " + s->fault + " (proxy event #" + std::to_string(s->event_index) + ")",
                       SwallowedJson(*s)});
  }
  const KeyAnswer* first = nullptr;
  const KeyAnswer* first_marked = nullptr;
  for (const auto& a : answers) {
    const KeyAnswer*& slot = IsReplayMarked(a.answer, contract) ? first_marked : first;
    if (slot == nullptr || a.done_ns < slot->done_ns) slot = &a;
  }
  if (first == nullptr) first = first_marked;  // an unseen attempt ran: the proxy sent copies
  if (first == nullptr) return;
  ++keys;
  for (const auto& op : g.ops) {
    if (op.invoke_ns() < first->done_ns || !NotAReplay(op, contract)) continue;
    if (contract.window && op.invoke_ns() - first->done_ns > contract.window->count()) continue;
    ++replays;
    violations.Add(NotAReplayViolation(g, op, first->name, first->answer, first->ref, contract));
  }
  auto vol = in.target.VolatilePathsFor(g.action);
  for (const auto& a : answers) {
    if (&a == first) continue;
    if (contract.window && a.invoke_ns - first->done_ns > contract.window->count()) continue;
    ++replays;
    const auto diffs = ReplayDifferences(first->answer, a.answer, vol, in);
    if (diffs.empty()) continue;
    const std::string joined = Joined(diffs);
    const ComparedSummaries shown = SummariesAroundDifference(first->answer, a.answer, vol);
    std::string ev = "key " + g.key + " (" + g.action + "): " + a.name + " was " + shown.later +
                     " but the first answer (" + first->name + ") was " + shown.first + " [" + joined + "]";
    violations.Add(DiffersFinding(g, ev, diffs, first->ref, a.ref));
  }
}

// The windows after the first (a target that declares a window): past the
// window a retry may execute again, once per window (WindowSegments). In
// each later window the execution is the new first answer: its earliest
// unmarked terminal answer, or, on a target that marks no replay, its
// earliest terminal answer that differs from the previous execution's (an
// equal one cannot be told from a replay of the previous record, and needs
// none). A retry invoked after it completed must replay it (equal, marked
// when a marker is declared) and is never blocked (in progress, mismatch, a
// 5xx); a retry invoked before may also replay the previous record (a target
// may keep records longer than it promises). A second execution in one
// window — an unmarked answer beside it, or without a marker one equal to
// neither — is a violation. A window with no execution only replays the
// previous record. Retries the first window already judged (RetriesAfter)
// are skipped.
void JudgeLaterWindows(const RequestGroup& g, const Operation& first, const OracleInput& in,
                       Violations& violations, int& replays) {
  const auto& contract = in.target.idempotency;
  if (!contract.window) return;
  const bool marked = contract.replay.has_value();
  const auto segments = WindowSegments(g.ops, contract);
  const auto vol = in.target.VolatilePathsFor(g.action);
  const Operation* current = &first;  // the key's latest execution before this window
  for (std::size_t w = 1; w < segments.size(); ++w) {
    const std::vector<Operation>& seg = segments[w];
    const Operation* exec = nullptr;
    for (const auto& op : seg) {
      if (!IsTerminal(Classify(op, contract)) || IsReplayMarked(*op.answer(), contract)) continue;
      if (!marked && ReplayDifferences(*current->answer(), *op.answer(), vol, in).empty()) continue;
      if (exec == nullptr || op.complete_ns() < exec->complete_ns()) exec = &op;
    }
    for (const auto& op : seg) {
      if (op.invoke == first.invoke || op.invoke == current->invoke) continue;
      if (exec != nullptr && op.invoke == exec->invoke) continue;
      if (op.invoke_ns() >= first.complete_ns() && op.invoke_ns() - first.complete_ns() <= contract.window->count())
        continue;  // judged with the first window
      const bool after_exec = exec != nullptr && op.invoke_ns() >= exec->complete_ns();
      if (NotAReplay(op, contract)) {
        if (!after_exec) continue;  // in progress while this window's execution ran: allowed
        ++replays;
        violations.Add(NotAReplayViolation(g, op, OpName(*exec) + " (after the window)", *exec->answer(), OpJson(*exec),
                                           contract));
        continue;
      }
      if (!IsTerminal(Classify(op, contract))) continue;
      ++replays;
      const HttpAnswer a = *op.answer();
      // An unmarked answer beside this window's execution is a second one:
      // shown against that execution. Without a marker any answer may be a
      // replay: one equal to neither record is shown against the execution.
      const bool second_execution = exec != nullptr && marked && !IsReplayMarked(a, contract);
      const Operation* against = after_exec || second_execution ? exec : current;
      auto diffs = ReplayDifferences(*against->answer(), a, vol, in);
      if (!diffs.empty() && !after_exec && exec != nullptr) {
        auto from_exec = ReplayDifferences(*exec->answer(), a, vol, in);
        if (from_exec.empty()) {
          diffs.clear();  // it waited for this window's execution and replays it
        } else if (!marked) {
          against = exec;  // equal to neither record: a second execution beside it
          diffs = std::move(from_exec);
        }
      }
      if (diffs.empty()) continue;
      const ComparedSummaries shown = SummariesAroundDifference(*against->answer(), a, vol);
      Finding v = DiffersFinding(g,
                                 "key " + g.key + " (" + g.action + "): " + OpName(op) + " answered " +
                                     shown.later + " after the window but " + OpName(*against) + " answered " +
                                     shown.first + " [" + Joined(diffs) + "]",
                                 diffs, OpJson(*against), OpJson(op));
      v.subject["window"] = w;
      violations.Add(v);
    }
    if (exec != nullptr) current = exec;
  }
}

}  // namespace

Verdict IdenticalReplay(const OracleInput& in) {
  const std::string name = "identical_replay";
  const auto& contract = in.target.idempotency;
  Violations violations;
  int replays = 0, keys = 0;
  int bytes_refusals = 0;  // equivalent bodies refused by a declared bytes fingerprint
  const auto swallowed = SwallowedAnswers(in.history, contract);
  AnswerTally refused;  // turned away by authentication: never reached the key check
  const auto outages = StoreOutages(in);
  int in_outage = 0;    // failed retryably while the store was down: not judged
  AnswerTally set_aside;  // every answer left out of the judgement, by why
  const bool failures_only = in.params.is_object() && in.params.value("failures", false);
  // A profile that stores no failure (store-2xx-only) promises no replay of one.
  if (failures_only && !contract.stores_4xx && !contract.stores_5xx)
    return Verdict::NotApplicable(name, "the " + contract.profile +
                                            " profile stores no failure (a 4xx or 5xx is released, the retry "
                                            "executes): there is no stored failure to replay unchanged");
  for (auto g : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    // mismatch_rejected judges other payloads; a large request is a request of its own, replayed as any
    if (g.payload != "default" && g.payload != "large") continue;
    // Two equal 401s are no replay: the key was never looked up.
    std::erase_if(g.ops, [&](const Operation& op) {
      if (!AuthRefused(op, contract)) return false;
      refused.Add(op);
      set_aside.AddAs(std::to_string(op.answer()->status) + " refused by authentication");
      return true;
    });
    in_outage += static_cast<int>(std::erase_if(g.ops, [&](const Operation& op) {
      if (!FailedInStoreOutage(op, contract, outages)) return false;
      set_aside.AddAs(std::to_string(op.answer()->status) + " while the store was down");
      return true;
    }));
    std::vector<const SwallowedAnswer*> mine;
    for (const auto& s : swallowed) {
      if (s.key == g.key && s.action == g.action) mine.push_back(&s);
    }
    if (!mine.empty() && !failures_only) {
      JudgeWithSwallowed(g, mine, in, violations, replays, keys);
      continue;
    }
    const Operation* first = FirstTerminal(g, contract);
    if (first == nullptr) continue;
    if (failures_only && first->answer()->is_2xx()) continue;
    ++keys;
    HttpAnswer fa = *first->answer();
    if (contract.replay && IsReplayMarked(fa, contract)) {
      // Legitimate only if an earlier attempt may have run unseen (no answer).
      bool excused = false;
      for (const auto& op : g.ops) {
        bool unseen = op.completion == nullptr || op.completion->type == EventType::kInfo;
        if (op.invoke != first->invoke && op.invoke_ns() < first->complete_ns() && unseen) excused = true;
      }
      if (!excused) {
        std::string ev = "key " + g.key + " (" + g.action + "): the first answer " + AnswerSummary(fa) +
                         " carries the replay marker " + contract.replay->Where() + " though nothing ran before it";
        violations.Add(MakeFinding(ev, {{"key", g.key}, {"action", g.action}}).With(FindingRole::kFirst, OpJson(*first)));
      }
    }
    auto vol = in.target.VolatilePathsFor(g.action);
    for (const Operation* op : RetriesAfter(g, *first, contract.window)) {
      // An equivalent body refused as another payload: the target's
      // fingerprint is over bytes. Its contract under `fingerprint: bytes`;
      // else a status-only finding (the profile's json-equivalence rule:
      // SHOULD under ietf, whose draft allows a payload checksum).
      if (BodyBytesChanged(*op) && Classify(*op, contract) == AnswerClass::kMismatch) {
        ++replays;
        if (contract.fingerprint == IdempotencyContract::Fingerprint::kBytes) {
          ++bytes_refusals;
          continue;
        }
        Finding f = NotAReplayViolation(g, *op, OpName(*first), fa, OpJson(*first), contract);
        f.problem += ": an equivalent body (payload " + op->invoke->payload +
                     ") refused as another payload, as a fingerprint over bytes does (idempotency.fingerprint: "
                     "bytes declares it)";
        f.rule = "status";
        violations.Add(f);
        continue;
      }
      if (NotAReplay(*op, contract)) {
        ++replays;
        violations.Add(NotAReplayViolation(g, *op, OpName(*first), fa, OpJson(*first), contract));
        continue;
      }
      if (!IsTerminal(Classify(*op, contract))) {
        set_aside.AddAs("no answer");
        continue;
      }
      ++replays;
      HttpAnswer a = *op->answer();
      const auto diffs = ReplayDifferences(fa, a, vol, in);
      if (diffs.empty()) continue;
      const std::string joined = Joined(diffs);
      const ComparedSummaries shown = SummariesAroundDifference(fa, a, vol);
      std::string ev = "key " + g.key + " (" + g.action + "): " + OpName(*op) + " answered " + shown.later +
                       " but the first answer was " + shown.first + " [" + joined + "]";
      violations.Add(DiffersFinding(g, ev, diffs, OpJson(*first), OpJson(*op)));
    }
    JudgeLaterWindows(g, *first, in, violations, replays);
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.replays_checked = replays;
  details.counts.keys = keys;
  if (refused.total() > 0) details.texts.refused_by_authentication = refused.Text();
  if (in_outage > 0) details.counts.failed_during_store_outage = in_outage;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  if (bytes_refusals > 0) details.counts.bytes_fingerprint_refusals = bytes_refusals;
  const std::string aside =
      (bytes_refusals > 0 ? "; " + std::to_string(bytes_refusals) +
                                " equivalent body(ies) refused as another payload, as the target's declared "
                                "fingerprint over bytes allows (idempotency.fingerprint: bytes)"
                          : std::string()) +
      SetAsideClause(set_aside);
  if (!violations.empty()) return Verdict::Invalid(name, violations.first() + aside, details).Counted(replays);
  if (replays == 0)
    return Verdict::Unknown(name,
                            std::string(failures_only && keys == 0
                                            ? "no stored failure: no key's first answer was a final non-2xx"
                                            : "no replay happened: no key got a second terminal answer") +
                                (refused.total() > 0 ? " (" + refused.Text() +
                                                           " refused by authentication never reached the key check)"
                                                     : std::string()) +
                                aside,
                            details)
        .Counted(0);
  std::string marker = contract.replay ? " and carry " + contract.replay->Where() : "";
  return Verdict::Valid(name, std::to_string(replays) + " replay(s) over " + std::to_string(keys) +
                                  " key(s) equal the first answer" + marker + aside,
                        details)
      .Counted(replays);
}

}  // namespace idemproof::oracles
