// route_spelling (issue 33, class 4): the same key and body under another
// spelling of the route (trailing slash, letter case, query order) is judged
// by what the target declares that spelling is (idempotency.path_equivalence):
//  - same: the same route, so a retry: the first answer replayed (status,
//    body minus volatile paths, compare_headers, the replay marker when one
//    is declared) and no second record (a key scoped by the URL as the client
//    spelled it executes again);
//  - distinct: another route, whose answer is never the first request's
//    replay (marked as one, or without a marker its body byte for byte).
// A `same` respelling the target recognised (marked as a replay; without a
// marker, not executed again by its records) is no spelling problem even
// when its answer differs from the first: that is a replay defect, judged by
// identical_replay, never diagnosed here as "taken for another request".
// Judged: every request whose payload is a respelling (model/payload.h),
// against its key's first `spelling` request, when that one got a 2xx and
// the respelling ran alone. Undeclared spellings are never sent.
#include "base/http_message.h"
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

namespace {

// The origin-form target of a request event ("/orders/?a=1"), for evidence.
std::string SpelledTarget(const Operation& op) {
  const nlohmann::json& e = op.invoke->value;
  return OriginForm(e.contains("request") ? e["request"].value("url", std::string()) : std::string());
}

}  // namespace

Verdict RouteSpelling(const OracleInput& in) {
  const std::string name = "route_spelling";
  const auto& contract = in.target.idempotency;
  const PathEquivalence& spellings = contract.path_equivalence;
  auto filter = ActionsParam(in.params);
  const auto ops = RequestOperations(in.history);

  Violations violations;
  int judged = 0, undecided = 0;
  nlohmann::json rows = nlohmann::json::array();
  // (action, key) -> the first `spelling` request.
  std::map<std::pair<std::string, std::string>, const Operation*> first;
  // (action, biz) -> requests answered 2xx unmarked (executions), and those
  // of a `same` spelling among them.
  std::map<std::pair<std::string, std::string>, std::vector<const Operation*>> executed, executed_same;
  for (const auto& op : ops) {
    const auto& e = *op.invoke;
    if (e.key.empty()) continue;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    if (e.payload == "spelling") {
      first.emplace(std::make_pair(e.action, e.key), &op);
      continue;
    }
    const PathEquivalence::Spelling declared = spellings.For(e.payload);
    if (declared == PathEquivalence::Spelling::kUndeclared) continue;
    auto it = first.find({e.action, e.key});
    auto a = op.answer();
    const Operation* base = it == first.end() ? nullptr : it->second;
    auto b = base == nullptr ? std::nullopt : base->answer();
    if (!a || !b || Classify(*base, contract) != AnswerClass::kSuccess || !RanAlone(in.history, ops, op)) {
      ++undecided;
      continue;
    }
    const bool same = declared == PathEquivalence::Spelling::kSame;
    const std::string key = PathEquivalence::KeyFor(e.payload);
    const bool marked = contract.replay && IsReplayMarked(*a, contract);
    const AnswerClass c = Classify(op, contract);
    if (c == AnswerClass::kSuccess && !marked) {
      executed[{e.action, e.biz}].push_back(&op);
      if (same) executed_same[{e.action, e.biz}].push_back(&op);
    }
    const std::string about = OpName(op) + " (" + e.action + ", key " + e.key + ") spelled " + SpelledTarget(op) +
                              " for " + OpName(*base) + "'s " + SpelledTarget(*base) + " (" + key + ": " +
                              (same ? "same" : "distinct") + ", idempotency.path_equivalence)";
    std::optional<std::string> problem;
    nlohmann::json row = {{"request", OpJson(op)}, {"spelling", key}, {"declared", same ? "same" : "distinct"}};
    if (same) {
      const auto vol = in.target.VolatilePathsFor(e.action);
      auto diffs = AnswerDifferences(*b, *a, vol, in.target.compare_headers);
      // The premise of "taken for another request": the target did not
      // recognise the key under this spelling. A marked answer says it did,
      // and without a marker the records decide (below) when the action has
      // them. A recognised replay that does not carry the first answer is a
      // replay defect whatever the spelling: identical_replay's, not ours.
      const ActionDescription* action = in.target.FindAction(e.action);
      const bool recognised = marked || (!contract.replay && action != nullptr && action->records);
      if (contract.replay && !marked) diffs.push_back("no replay marker " + contract.replay->Describe());
      if (!diffs.empty() && recognised) {
        row["replay_differs"] = diffs;
        row["judged_by"] = "identical_replay: the key was recognised under this spelling (" +
                           std::string(marked ? "marked as a replay" : "records decide an execution") +
                           "); a replay that differs from the first answer is no spelling problem";
      } else if (!diffs.empty()) {
        std::string text;
        for (const auto& d : diffs) text += (text.empty() ? "" : ", ") + d;
        const ComparedSummaries shown = SummariesAroundDifference(*b, *a, vol);
        problem = about + " was answered " + shown.later + ", not the first answer replayed (" + text +
                  "): the same route under another spelling was taken for another request";
      }
    } else if (marked || (!contract.replay && c == AnswerClass::kSuccess &&
                          AnswerDifferences(*b, *a, in.target.VolatilePathsFor(e.action), {}).empty())) {
      problem = about + " was answered " + AnswerSummary(*a) + (marked ? " marked as a replay" : " byte for byte") +
                ": another route answered with the first route's stored answer";
    }
    ++judged;
    rows.push_back(std::move(row));
    if (problem)
      violations.Add(MakeFinding(*problem).With(FindingRole::kRequest, OpJson(op)).With(FindingRole::kReplayOf,
                                                                                         OpJson(*base)));
  }
  // A `same` spelling answered like the first can still have executed: the
  // records say so. Each execution of another spelling (distinct) may add one.
  for (const auto& [id, same_ops] : executed_same) {
    const ActionDescription* action = in.target.FindAction(id.first);
    if (action == nullptr || !action->records) continue;
    auto count = RecordCount(in.history, id.first, id.second);
    const auto expected = static_cast<std::int64_t>(1 + executed[id].size() - same_ops.size());
    if (!count || *count <= expected) continue;
    std::string which;
    for (const Operation* op : same_ops)
      which += (which.empty() ? "" : ", ") + OpName(*op) + " " + SpelledTarget(*op) + " (" +
               PathEquivalence::KeyFor(op->invoke->payload) + ": same)";
    Finding v = MakeFinding("biz " + id.second + " (" + id.first + ") has " + std::to_string(*count) +
                            " records, expected " + std::to_string(expected) + ": " + which +
                            " executed again, though the target declares that spelling the same route");
    for (const Operation* op : same_ops) v.With(FindingRole::kOps, OpJson(*op));
    v.records = *count;
    violations.Add(v);
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.records.judged_rows = rows;
  details.counts.undecided = undecided;
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged) + " request(s) under another spelling of their route judged as " +
                      "idempotency.path_equivalence declares",
                  "no respelled request had a first answer (2xx) to be judged against, or it did not run alone",
                  "no request under another spelling of its route was sent (idempotency.path_equivalence "
                  "declares none this scenario sends)");
}

}  // namespace idemproof::oracles
