// new_key_executes (issue 33, the false-duplicate side): a request under a
// key never used before is a new request and executes, whatever it shares
// with an earlier key's request — the same body (two identical orders are
// two orders; a body hash used as the key swallows the second) or a long
// prefix (a store that cuts keys merges them).
//
// Judged: the first request of every key of an action after another key of
// that action (same caller), when it ran alone (operation.h RanAlone). Swallowed when it is answered as a replay (the
// marker; without one, an answer equal to an earlier key's first answer), or
// refused as a reuse (in_progress, mismatch) although no earlier key carried
// its business id; and when a business id has fewer records than the keys
// that got a 2xx for it. A new key's request refused (a 4xx) although it is
// the same request as an earlier key's (its business id and payload) is
// swallowed too — a new key is a new request — unless the target declares a
// natural key (`idempotency.natural_key`) and both bodies carry the same
// value there: then the refusal is its contract, and judged as such.
// Refusals that say nothing about keys are set aside, counted: a 5xx, an
// authentication failure, a refusal of another business request.
#include <optional>

#include "oracles/oracle_support.h"

namespace idemproof::oracles {

namespace {

struct KeyStart {
  const Operation* first;  // the key's first request
  std::string key;
};

// A key for evidence: a long one (key_form: max_length) shortened to its
// head and tail, with its length.
std::string KeyText(const std::string& key) {
  if (key.size() <= 48) return key;
  return key.substr(0, 24) + "..." + key.substr(key.size() - 8) + " (" + std::to_string(key.size()) + " characters)";
}

// ", sharing its first N characters with key K" when most of `key` is `other`'s.
// The member `path` of the JSON body `op` carried, as text; nullopt when the
// body is no JSON or lacks it.
std::optional<std::string> BodyMember(const Operation& op, const JsonPath& path) {
  const nlohmann::json& v = op.invoke->value;
  if (!v.is_object() || !v.contains("request") || !v["request"].is_object()) return std::nullopt;
  const nlohmann::json body = nlohmann::json::parse(v["request"].value("body", std::string()), nullptr, false);
  if (body.is_discarded()) return std::nullopt;
  return path.FindText(body);
}

std::string SharedPrefix(const std::string& key, const std::string& other) {
  std::size_t n = 0;
  while (n < key.size() && n < other.size() && key[n] == other[n]) ++n;
  if (n < 32 || n * 2 < key.size()) return "";
  return ", sharing its first " + std::to_string(n) + " characters with key " + KeyText(other);
}

}  // namespace

Verdict NewKeyExecutes(const OracleInput& in) {
  const std::string name = "new_key_executes";
  const auto& contract = in.target.idempotency;
  auto filter = ActionsParam(in.params);
  const auto ops = RequestOperations(in.history);
  // The first request of each key, per (action, caller), in invoke order.
  std::map<std::pair<std::string, std::string>, std::vector<KeyStart>> starts;
  for (const auto& op : ops) {
    const auto& e = *op.invoke;
    if (e.key.empty()) continue;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    auto& list = starts[{e.action, CallerOf(e)}];
    if (std::none_of(list.begin(), list.end(), [&](const KeyStart& s) { return s.key == e.key; }))
      list.push_back({&op, e.key});
  }

  Violations violations;
  int judged = 0, undecided = 0;
  int natural_key_refusals = 0;  // refused by the declared natural key: by contract
  AnswerTally refused;
  // Keys answered 2xx without a replay marker, per (action, biz): executed.
  std::map<std::pair<std::string, std::string>, std::vector<const Operation*>> executed;
  for (const auto& [scope, list] : starts) {
    const std::string& action = scope.first;
    const auto volatile_paths = in.target.VolatilePathsFor(action);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Operation& op = *list[i].first;
      const auto& e = *op.invoke;
      auto a = op.answer();
      const AnswerClass c = Classify(op, contract);
      const bool marked = a && contract.replay && IsReplayMarked(*a, contract);
      if (c == AnswerClass::kSuccess && !marked) executed[{action, e.biz}].push_back(&op);
      if (i == 0) continue;  // the action's first key: nothing before it to be mistaken for
      // A copy racing it (a burst) or a proxy's replayed copy may rightly answer it as a replay.
      if (!a || !RanAlone(in.history, ops, op)) {
        ++undecided;
        continue;
      }
      // The earlier key this one was taken for: the same business id first,
      // else the latest one.
      const Operation* earlier = list[i - 1].first;
      bool biz_seen = false;
      for (std::size_t j = 0; j < i; ++j) {
        if (list[j].first->invoke->biz == e.biz) {
          biz_seen = true;
          earlier = list[j].first;
        }
      }
      const std::string about =
          OpName(op) + " (" + action + ", new key " + KeyText(e.key) + SharedPrefix(e.key, earlier->invoke->key) + ")";
      const std::string other = "key " + KeyText(earlier->invoke->key) + "'s " + OpName(*earlier);
      std::optional<std::string> problem;
      if (marked && (c == AnswerClass::kSuccess || c == AnswerClass::kRetryable)) {
        problem = about + " was answered " + AnswerSummary(*a) + " marked as a replay: a new request swallowed as " +
                  "a replay of an older one (" + other + ")";
      } else if (c == AnswerClass::kSuccess && !contract.replay) {
        for (std::size_t j = 0; j < i && !problem; ++j) {
          auto before = list[j].first->answer();
          if (before && Classify(*list[j].first, contract) == AnswerClass::kSuccess &&
              AnswerDifferences(*before, *a, volatile_paths, {}).empty())
            problem = about + " got the answer of key " + KeyText(list[j].key) + "'s " + OpName(*list[j].first) +
                      " byte for byte: a new request swallowed as a replay of an older one";
        }
      } else if ((c == AnswerClass::kInProgress || c == AnswerClass::kMismatch) && !biz_seen) {
        problem = about + " was refused " + AnswerSummary(*a) + " as a reuse of another key, though no earlier " +
                  "key carried its business id " + e.biz + ": it was taken for " + other;
      } else if (c != AnswerClass::kSuccess) {
        // The same request as the earlier key's, refused: no excuse unless
        // the target declares the business field it dedups by.
        const bool same_request = biz_seen && earlier->invoke->payload == e.payload;
        if (!same_request || a->status < 400 || a->status >= 500 || AuthRefused(op, contract)) {
          refused.Add(op);
          continue;
        }
        if (contract.natural_key) {
          const auto mine = BodyMember(op, *contract.natural_key);
          const auto theirs = BodyMember(*earlier, *contract.natural_key);
          if (!mine || !theirs) {
            refused.Add(op);
            continue;
          }
          if (*mine == *theirs) {
            ++natural_key_refusals;  // judged below: refused by the target's contract
          } else {
            problem = about + " was refused " + AnswerSummary(*a) + " though its natural key " +
                      contract.natural_key->text() + " is " + *mine + ", not " + other + "'s " + *theirs;
          }
        } else {
          problem = about + " was refused " + AnswerSummary(*a) + ": the same request as " + other +
                    " under a new key is a new request and executes (a target that also dedups by a business "
                    "field declares it: idempotency.natural_key)";
        }
      }
      ++judged;
      if (problem) {
        violations.Add(MakeFinding(*problem).With(FindingRole::kRequest, OpJson(op)).With(FindingRole::kReplayOf,
                                                                                           OpJson(*earlier)));
      }
    }
  }
  // Each key answered 2xx made a record of its business id.
  int unprobed = 0;
  for (const auto& [scope, keys] : executed) {
    const auto* action = in.target.FindAction(scope.first);
    if (keys.size() < 2 || action == nullptr || !action->records) {
      if (keys.size() >= 2) ++unprobed;
      continue;
    }
    auto count = RecordCount(in.history, scope.first, scope.second);
    if (!count || *count >= static_cast<std::int64_t>(keys.size())) continue;
    Finding v = MakeFinding("biz " + scope.second + " (" + scope.first + ") has " + std::to_string(*count) +
                            " record(s) behind " + std::to_string(keys.size()) +
                            " keys answered 2xx: a new key's answer with no execution behind it");
    for (const Operation* op : keys) v.With(FindingRole::kOps, OpJson(*op));
    v.records = *count;
    violations.Add(v);
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.judged = judged;
  details.counts.undecided = undecided;
  details.tallies.refused = refused.Counts();
  details.counts.unprobed = unprobed;
  if (natural_key_refusals > 0) details.counts.natural_key_refusals = natural_key_refusals;
  const std::string unreached =
      refused.total() > 0 ? "every new key's first request was refused (" + refused.Text() +
                                ") for a reason that says nothing of keys (a 5xx, authentication, another "
                                "business request): nothing to judge"
                          : "no action got a request under a second key";
  const std::string by_contract =
      natural_key_refusals > 0 ? " (" + std::to_string(natural_key_refusals) +
                                     " refused as the same business request by the natural key " +
                                     contract.natural_key->text() + " the target declares)"
                               : "";
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged - natural_key_refusals) +
                      " request(s) under a new key executed, none swallowed as a replay" + by_contract +
                      SetAsideClause(refused),
                  "no request under a new key was answered alone (a copy racing it, or a proxy's replayed copy, may "
                  "rightly answer it as a replay)",
                  unreached);
}

}  // namespace idemproof::oracles
