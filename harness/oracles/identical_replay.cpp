// identical_replay: every later terminal answer for one key + payload equals
// the first (status, body minus volatile paths, declared headers) and carries
// the replay marker; the first answer does not carry it.
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict IdenticalReplay(const OracleInput& in) {
  const std::string name = "identical_replay";
  const auto& contract = in.target.idempotency;
  nlohmann::json violations = nlohmann::json::array();
  std::string first_violation;
  int replays = 0, keys = 0;
  for (const auto& g : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    if (g.payload != "default") continue;  // mismatch_rejected judges other payloads
    const Operation* first = FirstTerminal(g, contract);
    if (first == nullptr) continue;
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
                         " carries the replay marker " + contract.replay->header + " though nothing ran before it";
        violations.push_back({{"key", g.key}, {"action", g.action}, {"problem", ev}, {"first", OpJson(*first)}});
        if (first_violation.empty()) first_violation = ev;
      }
    }
    auto vol = in.target.VolatilePathsFor(g.action);
    for (const Operation* op : RetriesAfter(g, *first, contract.window)) {
      if (!IsTerminal(Classify(*op, contract))) continue;
      ++replays;
      HttpAnswer a = *op->answer();
      auto diffs = AnswerDifferences(fa, a, vol, in.target.compare_headers);
      if (contract.replay && !IsReplayMarked(a, contract))
        diffs.push_back("replay marker " + contract.replay->header + ": " + contract.replay->value + " missing");
      if (diffs.empty()) continue;
      std::string joined;
      for (const auto& d : diffs) joined += (joined.empty() ? "" : "; ") + d;
      std::string ev = "key " + g.key + " (" + g.action + "): " + OpName(*op) + " answered " + AnswerSummary(a) +
                       " but the first answer was " + AnswerSummary(fa) + " [" + joined + "]";
      violations.push_back({{"key", g.key},
                            {"action", g.action},
                            {"problem", ev},
                            {"differences", diffs},
                            {"first", OpJson(*first)},
                            {"replay", OpJson(*op)}});
      if (first_violation.empty()) first_violation = ev;
    }
  }
  nlohmann::json details = {{"violations", violations}, {"replays_checked", replays}, {"keys", keys}};
  if (!violations.empty()) return Verdict::Invalid(name, first_violation, details);
  if (replays == 0) return Verdict::Unknown(name, "no replay happened: no key got a second terminal answer", details);
  std::string marker = contract.replay ? " and carry " + contract.replay->header : "";
  return Verdict::Valid(name, std::to_string(replays) + " replay(s) over " + std::to_string(keys) +
                                  " key(s) equal the first answer" + marker, details);
}

}  // namespace idemproof::oracles
