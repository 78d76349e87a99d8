// lease_recovery: a request's owner ends — killed, frozen (`pause`), stopped
// or restarted gracefully, or dead on its own (`target_exited` of the
// instance that served it) — while the request runs: after its claim, before
// its completion. Then, for that key:
//  - a retry answered before the lease can have ended (before the crashed
//    request's invoke + lease) gets the in-progress answer: the claim held.
//    Judged only when the history shows the claim: some request of the key
//    was answered in-progress before then. A crash can strike before the
//    request claimed its key (found by explore's background sends: kill a
//    moment after the send), and then executing the retry is right;
//  - the first retry invoked after the lease surely ended (the crash + lease)
//    is not answered in-progress: the key is not stuck;
//  - exactly one unmarked 2xx answer for the key over the whole run (one
//    completion; a resumed owner must not complete too), and, when the
//    action has a records probe, exactly one record.
// Retries between those two instants may get either answer.
// Every request of the key is in view (any payload): an answer another
// request explains says nothing of the crashed request's claim. A 409 is
// explained by a later claim that may still hold the key: a request sent
// after the crash that ran while it (it overlapped the 409'd request), or
// that got no answer and whose own lease had not surely ended (the next end
// of the owner + the lease). A mismatch is explained by another payload's
// request that may have taken the key before it was answered. A 409 so
// explained shows no claim of the crashed request, and a retry after the
// lease so answered is passed over: the first one no other request explains
// is judged.
// With no lease declared, idempotency.recovery_bound stands in for it: no
// retry must be in progress, the first retry answered otherwise shows the
// recovery, and a key still in progress after the bound is a violation too:
// the strict reading holds where no contract speaks (the default 30s); a
// target that blocks keys longer declares its bound (`recovery_bound: 24h`),
// which then is its contract, named in the evidence (and a key not retried
// past it is not judged).
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "base/http_message.h"
#include "oracles/oracle_support.h"
#include "oracles/side_effect_oracles.h"
#include "model/history_events.h"

namespace idemproof::oracles {

namespace {

// Both events name their instance (a run with several) and not the same one.
bool OtherInstance(const HistoryEvent& a, const HistoryEvent& b) {
  auto instance = [](const HistoryEvent& e) {
    return e.value.is_object() && e.value.contains("instance") && e.value["instance"].is_string()
               ? e.value["instance"].get<std::string>()
               : std::string();
  };
  return !instance(a).empty() && !instance(b).empty() && instance(a) != instance(b);
}

// True when `op` may have claimed its key: sent, and not refused before a
// claim (in progress, mismatch, missing key).
bool MayClaim(const Operation& op, const IdempotencyContract& contract) {
  if (op.completion != nullptr && op.completion->type == EventType::kFail) return false;
  const AnswerClass c = Classify(op, contract);
  return c != AnswerClass::kInProgress && c != AnswerClass::kMismatch && c != AnswerClass::kMissingKey;
}

// The latest instant `op`'s claim may hold its key: its answer; without one,
// the first end of its owner after it was sent + the lease, else the instant
// the client gave up + the lease (taken to have claimed by then: unbounded,
// one timed-out retry would excuse a key blocked for good); still open at
// the end of the run: it may still run.
std::int64_t ClaimEnd(const Operation& op, const IdempotencyContract& contract,
                      const std::vector<const HistoryEvent*>& crashes, std::int64_t lease_ns) {
  if (Classify(op, contract) != AnswerClass::kNoAnswer) return op.complete_ns();
  for (const auto* c : crashes) {
    if (c->f == event_f::kTargetExited && OtherInstance(*c, *op.invoke)) continue;
    if (c->time_ns > op.invoke_ns()) return c->time_ns + lease_ns;
  }
  if (op.completion != nullptr) return op.complete_ns() + lease_ns;
  return std::numeric_limits<std::int64_t>::max();
}

// How the request `b` differs from `a` as the harness sent them: its
// variant, payload, URL, body ("" when none of these differ).
std::string HowItDiffers(const Operation& a, const Operation& b) {
  auto field = [](const Operation& op, const char* outer, const char* inner) {
    const nlohmann::json& v = op.invoke->value;
    if (!v.is_object() || !v.contains(outer)) return std::string();
    const nlohmann::json& o = inner == nullptr ? v[outer] : (v[outer].is_object() && v[outer].contains(inner)
                                                                 ? v[outer][inner] : nlohmann::json());
    return o.is_string() ? o.get<std::string>() : std::string();
  };
  std::vector<std::string> out;
  const std::string va = field(a, "variant", nullptr), vb = field(b, "variant", nullptr);
  if (va != vb)
    out.push_back("variant " + (va.empty() ? std::string("none") : va) + " against " +
                  (vb.empty() ? std::string("none") : vb));
  if (a.invoke->payload != b.invoke->payload) out.push_back("payload " + ChangeSummary(a) + " against " + ChangeSummary(b));
  // As the target saw them: a restart may have moved the target to another
  // port, which is no difference of the request.
  const std::string ua = OriginForm(field(a, "request", "url")), ub = OriginForm(field(b, "request", "url"));
  if (ua != ub) out.push_back("URL " + ua + " against " + ub);
  if (field(a, "request", "body") != field(b, "request", "body")) out.push_back("the bodies differ");
  std::string text;
  for (const auto& o : out) text += (text.empty() ? "" : "; ") + o;
  return text;
}

// Why a retry's answer is left out of the judgement ("" when judged): no
// answer, or a 5xx the scenario caused or a store outage explains. A declared
// retryable status below 500 stays judged here: it is no in-progress answer.
std::string RetrySetAsideWhy(const Operation& op, const IdempotencyContract& contract,
                             const std::vector<std::pair<std::int64_t, std::int64_t>>& outages) {
  const AnswerClass c = Classify(op, contract);
  if (c != AnswerClass::kNoAnswer && !(c == AnswerClass::kRetryable && op.answer()->status >= 500)) return "";
  return HeldKeySetAsideWhy(op, contract, outages);
}

// A mismatch answer to a retry of the crashed request says the target took
// the key as used by another request: its fingerprint, not the lease.
std::string MismatchStory(const Operation& retry, const Operation& crashed, const char* when) {
  const std::string diff = HowItDiffers(crashed, retry);
  return OpName(retry) + ", a retry " + when + ", was answered " + std::to_string(retry.answer()->status) +
         " mismatch: the key was already used with another request (the target did not take it for a retry of the "
         "crashed " + OpName(crashed) + (diff.empty() ? "" : "; they differ: " + diff) + "), not a lease failure";
}

}  // namespace

Verdict LeaseRecovery(const OracleInput& in) {
  const std::string name = "lease_recovery";
  const auto filter = ActionsParam(in.params);
  const auto& contract = in.target.idempotency;
  std::optional<Duration> lease = contract.lease;
  if (in.params.contains("lease")) {
    auto d = ParseDuration(in.params["lease"].get<std::string>());
    if (!d.ok()) return Verdict::Unknown(name, "bad lease parameter: " + d.status().message());
    lease = *d;
  }
  // No lease promised: the key must still be free again within the recovery
  // bound (declared, or the default); still blocked then is a violation, and
  // no retry is required to be in progress before it.
  const bool declared = lease.has_value();
  if (!lease) lease = contract.recovery_bound;
  const std::int64_t lease_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(*lease).count();

  // Ends of the owner, in time order: whatever ended it — a kill, a pause, a
  // graceful stop or restart, or a death no step caused — leaves its key to
  // the lease, so each is judged alike.
  std::vector<const HistoryEvent*> crashes;
  for (const auto& e : in.history.events()) {
    const bool ended = e.f == event_f::kKill || e.f == event_f::kPause || e.f == event_f::kStop ||
                       e.f == event_f::kRestart;
    if ((ended && e.type == EventType::kOk) || e.f == event_f::kTargetExited) crashes.push_back(&e);
  }
  if (crashes.empty())
    return Verdict::Unknown(name, "the owner never ended: no kill, pause, stop or restart of the target").Counted(0);

  nlohmann::json judged = nlohmann::json::array();
  AnswerTally set_aside;  // retries whose answers say nothing of the key, by why
  const auto outages = StoreOutages(in);
  int retried = 0;  // crashed requests whose key was retried after the lease
  std::string violation;
  Finding finding;  // the violation's, in the one shape the reports read
  const auto groups = GroupRequestsByKey(in.history, filter);
  // Every payload's requests of one key (one action, one caller's hands).
  using KeyId = std::tuple<std::string, std::string, std::string>;
  std::map<KeyId, std::vector<const Operation*>> key_ops;
  for (const auto& g : groups)
    for (const auto& op : g.ops) key_ops[{g.action, g.key, g.caller}].push_back(&op);
  for (const auto& group : groups) {
    if (group.payload != "default") continue;
    const std::vector<const Operation*>& of_key = key_ops.at({group.action, group.key, group.caller});
    // The crashed request: invoked before a crash, without an answer before it.
    const Operation* crashed = nullptr;
    const HistoryEvent* crash = nullptr;
    for (const auto* c : crashes) {
      for (const auto& op : group.ops) {
        // An instance that died on its own ended the requests it served only.
        if (c->f == event_f::kTargetExited && OtherInstance(*c, *op.invoke)) continue;
        const bool answered_before = op.completion && op.completion->time_ns <= c->time_ns &&
                                     op.completion->type == EventType::kOk;
        if (op.invoke_ns() < c->time_ns && !answered_before) {
          crashed = &op;
          crash = c;
          break;
        }
      }
      if (crashed) break;
    }
    if (!crashed) continue;
    const std::int64_t live_until = crashed->invoke_ns() + lease_ns;  // the lease cannot have ended before
    const std::int64_t dead_after = crash->time_ns + lease_ns;        // the lease surely ended after

    nlohmann::json row = {{"key", group.key}, {"crashed", OpJson(*crashed)}, {"crash_index", crash->index},
                          {declared ? "lease_ms" : "recovery_bound_ms", lease_ns / 1000000}};
    std::string problem;
    // Completions: unmarked 2xx answers. A target that marks no replays
    // cannot tell us which 2xx is the execution, so there every distinct 2xx
    // answer (a replay must equal the first) counts as one completion.
    int unmarked_2xx = 0;
    std::vector<const Operation*> completions;  // the requests those answers came to
    std::vector<HttpAnswer> distinct_2xx;
    const auto volatile_paths = in.target.VolatilePathsFor(group.action);
    const Operation* first_after = nullptr;
    // Who else may explain `op`'s answer: for a 409, a later claim (sent
    // after the crash) that may still have held the key when `op` came; for
    // a mismatch, another payload's request that may have taken the key.
    const auto explained_by = [&](const Operation& op) -> const Operation* {
      const AnswerClass c = Classify(op, contract);
      if (c != AnswerClass::kInProgress && c != AnswerClass::kMismatch) return nullptr;
      for (const Operation* other : of_key) {
        if (other == &op || other == crashed || !MayClaim(*other, contract) ||
            other->invoke_ns() >= op.complete_ns())
          continue;
        if (c == AnswerClass::kMismatch ? other->invoke->payload != op.invoke->payload
                                         : other->invoke_ns() > crash->time_ns &&
                                               ClaimEnd(*other, contract, crashes, lease_ns) > op.invoke_ns())
          return other;
      }
      return nullptr;
    };
    const auto note_explained = [&](const Operation& op, const Operation& by) {
      row["explained"].push_back({{"request", OpJson(op)}, {"by", OpJson(by)}});
    };
    // The claim is shown when a request of the key was told "in progress"
    // while the crashed request's lease could still hold, and no later
    // claim explains it.
    const bool claim_shown = std::any_of(group.ops.begin(), group.ops.end(), [&](const Operation& op) {
      return &op != crashed && Classify(op, contract) == AnswerClass::kInProgress && op.complete_ns() < live_until &&
             explained_by(op) == nullptr;
    });
    int explained_after = 0;  // retries after the lease another request explains
    const Operation* early = nullptr;  // the retry answered while the lease was live
    for (const auto& op : group.ops) {
      const AnswerClass c = Classify(op, contract);
      if (auto a = op.answer(); a && a->is_2xx()) {
        if (contract.replay) {
          if (!IsReplayMarked(*a, contract)) {
            ++unmarked_2xx;
            completions.push_back(&op);
          }
        } else if (std::none_of(distinct_2xx.begin(), distinct_2xx.end(), [&](const HttpAnswer& d) {
                     return AnswerDifferences(d, *a, volatile_paths, {}).empty();
                   })) {
          distinct_2xx.push_back(*a);
          ++unmarked_2xx;
          completions.push_back(&op);
        }
      }
      if (&op == crashed || op.invoke_ns() <= crash->time_ns) continue;
      if (const std::string why = RetrySetAsideWhy(op, contract, outages); !why.empty()) {
        set_aside.AddAs(why);
        continue;
      }
      const Operation* by = explained_by(op);
      if (declared && op.complete_ns() < live_until && c != AnswerClass::kInProgress && problem.empty() &&
          by == nullptr) {
        if (c == AnswerClass::kMismatch) {
          // The key was held (refused, not executed): the refusal's reason is no lease story.
          problem = MismatchStory(op, *crashed, "while the crashed request's lease was live");
          row["early"] = OpJson(op);
          early = &op;
        } else if (op.answer()->status >= 500) {
          // Held or free, the key was no failure of the retry's: a 5xx is an
          // answer (in progress, or the execution, was due), shown or not.
          problem = OpName(op) + " was answered " + AnswerSummary(*op.answer()) +
                    " while the crashed request's lease was live (expected " + contract.InProgressText() +
                    "): a 5xx tells the client the request failed, not that its key is held "
                    "(idempotency.in_progress declares no 5xx)";
          row["early"] = OpJson(op);
          early = &op;
        } else if (claim_shown) {
          problem = OpName(op) + " was answered " + AnswerClassName(c) + " while the crashed request's lease was live";
          row["early"] = OpJson(op);
          early = &op;
        } else if (!row.contains("early_unjudged")) {
          row["early_unjudged"] = OpName(op) + " was answered " + std::string(AnswerClassName(c)) +
                                  " before the lease could end, but no answer showed the claim: the crash may "
                                  "have come before the crashed request claimed its key";
        }
      }
      // Without a lease any retry that got the key free shows the recovery.
      const bool after_lease = op.invoke_ns() > dead_after || (!declared && IsTerminal(c));
      if (!after_lease || first_after != nullptr) continue;
      if (by != nullptr) {
        ++explained_after;
        note_explained(op, *by);
      } else {
        first_after = &op;
      }
    }
    if (first_after == nullptr) {
      if (explained_after > 0) ++retried;
      row["undecided"] = explained_after > 0 ? "every retry after the lease ended met another request of the key "
                                               "(its claim, or the other payload's)"
                                             : "no retry after the lease ended";
      judged.push_back(row);
      continue;
    }
    ++retried;
    row["after_expiry"] = OpJson(*first_after);
    const AnswerClass after = Classify(*first_after, contract);
    if (problem.empty() && after == AnswerClass::kInProgress) {
      problem = declared ? "key " + group.key + " is still in progress after its lease ended (" +
                               OpName(*first_after) + "): blocked for good"
                         : "key " + group.key + " is still in progress " + FormatDuration(*lease) +
                               " after its owner crashed (" + OpName(*first_after) + "; no lease declared, " +
                               (contract.recovery_bound_declared
                                    ? "past the recovery bound the target declares, idempotency.recovery_bound " +
                                          FormatDuration(*lease)
                                    : "and no idempotency.recovery_bound: the default " + FormatDuration(*lease) +
                                          " holds (a target that blocks keys longer declares its bound)") +
                               "): blocked";
    }
    // Retries after the declared window may rightly execute again.
    const int windows = WindowExecutions(group.ops, contract);
    const bool twice = problem.empty() && unmarked_2xx > windows;
    if (twice)
      problem = std::to_string(unmarked_2xx) + " unmarked successes for key " + group.key +
                ": the request completed more than once";
    if (problem.empty() && after == AnswerClass::kMismatch)
      problem = MismatchStory(*first_after, *crashed, "after the lease ended");
    if (problem.empty() && !IsTerminal(after) && after != AnswerClass::kRetryable)
      problem = "the retry after the lease ended got " + std::string(AnswerClassName(after));
    if (problem.empty() && unmarked_2xx == 0 && after == AnswerClass::kRetryable) {
      row["undecided"] = "the retry after the lease ended got a retryable failure";
      judged.push_back(row);
      continue;
    }
    std::optional<std::int64_t> records;  // the record count the finding is about
    if (problem.empty()) {
      const ActionDescription* a = in.target.FindAction(group.action);
      if (a && a->records) {
        auto count = RecordCount(in.history, group.action, group.biz);
        row["records"] = count ? nlohmann::json(*count) : nlohmann::json(nullptr);
        if (count && (*count < 1 || *count > windows)) {
          records = *count;
          problem = std::to_string(*count) + " records for " + group.action + " biz " + group.biz +
                    " after the recovery (expected " + (windows > 1 ? "1 to " + std::to_string(windows) : "1") + ")";
        }
      }
    }
    if (!problem.empty()) {
      row["problem"] = problem;
      // No excuse where a contract can speak: a key blocked past the bound
      // (declared, or the default) is a violation like any other finding.
      if (violation.empty()) {
        violation = problem;
        finding = MakeFinding(problem, {{"key", group.key}, {"action", group.action}});
        finding.With(FindingRole::kRequest, OpJson(*crashed));
        finding.With(FindingRole::kRetry, OpJson(early != nullptr ? *early : *first_after));
        if (twice)
          for (const Operation* op : completions) finding.With(FindingRole::kExecutions, OpJson(*op));
        if (records) {
          finding.records = *records;
          finding.expected = windows > 1 ? nlohmann::json("1 to " + std::to_string(windows)) : nlohmann::json(1);
        }
      }
    }
    row["completions"] = unmarked_2xx;
    judged.push_back(row);
  }
  VerdictDetails details;
  details.records.key_rows = judged;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  const std::string aside = SetAsideClause(set_aside);
  const auto running = static_cast<std::int64_t>(judged.size());  // requests the end interrupted
  if (!violation.empty()) {
    Violations violations;
    violations.Add(finding);
    details.violations = violations.findings();
    return Verdict::Invalid(name, violation + aside, details).Counted(running);
  }
  int decided = 0;
  for (const auto& r : judged) decided += r.contains("undecided") ? 0 : 1;
  if (judged.empty())
    return Verdict::Unknown(name, "no request was running when the target crashed", details).Counted(0);
  // Nothing was retried after the lease: recovery was never put to the test
  // (premise not reached, as for no crash at all), unlike a retry whose
  // answer left it open (a retryable failure), which stays undecided.
  if (retried == 0)
    return Verdict::Unknown(name,
                            (!declared && contract.recovery_bound_declared
                                ? "no retry was sent after the recovery bound the target declares "
                                  "(idempotency.recovery_bound " +
                                      FormatDuration(*lease) + "): inside it, a blocked key is its contract"
                                : std::string("no retry was sent after the lease ended")) +
                                aside,
                            details)
        .Counted(0);
  if (decided == 0)
    return Verdict::Unknown(name, "no retry after the lease ended decided it" + aside, details).Counted(running);
  return Verdict::Valid(name, std::to_string(decided) +
                                  " key(s) recovered: in-progress while the lease held, one completion after" + aside,
                        details)
      .Counted(running);
}

}  // namespace idemproof::oracles
