// window: a retry inside the declared retry window is recognised (a marked
// replay or in progress; without a marker, the first answer again) and never
// creates a second record. A retry whose answer says nothing of the key (no
// answer, a failure caused on purpose, a failure while the target's own store
// was down) is set aside and counted (oracle_support.h, HeldKeySetAsideWhy):
// the hunt found a 500 during its own store reset called "not recognised".
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict Window(const OracleInput& in) {
  const std::string name = "window";
  const auto& contract = in.target.idempotency;
  std::optional<Duration> window = contract.window;
  if (in.params.contains("window")) {
    auto d = ParseDuration(in.params["window"].get<std::string>());
    if (!d.ok()) return Verdict::Unknown(name, d.status().message());
    window = *d;
  }
  if (!window) return Verdict::NotApplicable(name, "target declares no retry window (idempotency.window)");
  Violations violations;
  int retries = 0, undecided = 0;
  const auto outages = StoreOutages(in);
  AnswerTally set_aside;  // retries in the window whose answers decided nothing, by why
  for (const auto& g : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    const Operation* first = EarliestTerminal(g, contract);
    if (first == nullptr) continue;
    HttpAnswer fa = *first->answer();
    auto vol = in.target.VolatilePathsFor(g.action);
    bool had_retry = false;
    for (const Operation* op : RetriesAfter(g, *first, window)) {
      auto a = op->answer();
      if (const std::string why = HeldKeySetAsideWhy(*op, contract, outages); !why.empty()) {
        ++undecided;
        set_aside.AddAs(why);
        continue;
      }
      ++retries;
      had_retry = true;
      // "In progress" recognises the key with or without a replay marker.
      bool recognised = contract.IsInProgress(a->status) ||
                        (contract.replay ? IsReplayMarked(*a, contract) : AnswerDifferences(fa, *a, vol, {}).empty());
      if (recognised) continue;
      Duration since(op->invoke_ns() - first->complete_ns());
      violations.Add(MakeFinding("key " + g.key + " (" + g.action + "): retry " + OpName(*op) + " " +
                                     FormatDuration(since) + " after the first answer (window " +
                                     FormatDuration(*window) + ") was not recognised: " + AnswerSummary(*a),
                                 {{"key", g.key}, {"since_first_ns", since.count()}})
                         .With(FindingRole::kFirst, OpJson(*first))
                         .With(FindingRole::kRetry, OpJson(*op)));
    }
    const auto* action = in.target.FindAction(g.action);
    if (had_retry && action != nullptr && action->records && g.payload == "default") {
      // Requests after the window passed may rightly execute again: one
      // record per retry window (found by explore: send; send; wait past the
      // window; send, against the correct service).
      auto count = RecordCount(in.history, g.action, g.biz);
      const int windows = BizWindowExecutions(in.history, g.action, g.biz, contract);
      if (count && *count > windows)
      {
        Finding v = MakeFinding("key " + g.key + " (" + g.action + "): " + std::to_string(*count) +
                                    " records for biz " + g.biz + " after retries inside the window",
                                {{"key", g.key}});
        v.records = *count;
        violations.Add(v);
      }
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.window_ns = window->count();
  details.counts.retries_in_window = retries;
  details.counts.undecided = undecided;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  const std::string aside = SetAsideClause(set_aside);
  return Conclude(name, violations, details, retries, undecided,
                  std::to_string(retries) + " retry(ies) inside " + FormatDuration(*window) + " recognised" + aside,
                  "no retry inside the window got a decisive answer" + aside, "no retry was sent inside the window");
}

}  // namespace idemproof::oracles
