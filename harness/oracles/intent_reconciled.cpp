// intent_reconciled: after whatever happened between the target and the
// external system (a kill right after the charge, a timeout, a retry), the
// ledger — the external system's own record, read as a probe — holds exactly
// one effect for the business action, and the target's record names that
// effect (its transaction id).
//
// The ledger probe's value is the list of the business action's effects
// (their ids), or their count; the record probe's value is the list of
// effect ids the target recorded (or one id). The target file's probe
// declarations pick those values out of the answers.
// Effects, not calls: one id listed twice is one effect (a ledger read from
// the calls that reached the downstream lists a call re-sent under the same
// downstream key, and answered with the first effect, twice: that is
// reconciliation). A ledger of whole egress record entries (an egress probe
// with no value) names an effect by the downstream idempotency key the
// target sent (the entry's "key"): entries under one key are one effect,
// answered with an effect id or not (DistinctEffects). The evidence names
// the ids and keys.
#include <optional>

#include "oracles/oracle_support.h"
#include "oracles/side_effect_oracles.h"

namespace idemproof::oracles {
namespace {

// One entry of a probe value as an effect id: a scalar's text, or an
// object's JSON; nullopt for null.
std::optional<std::string> id_of(const nlohmann::json& x) {
  if (x.is_string()) return x.get<std::string>();
  if (x.is_null()) return std::nullopt;
  return x.dump();
}

// Effect ids from a probe value: an array of scalars, one scalar, or null.
std::vector<std::string> ids_of(const nlohmann::json& v) {
  std::vector<std::string> out;
  auto one = [&](const nlohmann::json& x) {
    if (auto id = id_of(x)) out.push_back(*id);
  };
  if (v.is_array()) {
    for (const auto& x : v) one(x);
  } else {
    one(v);
  }
  return out;
}

}  // namespace

Verdict IntentReconciled(const OracleInput& in) {
  const std::string name = "intent_reconciled";
  const std::string ledger_label = in.params.value("ledger", std::string("ledger"));
  const std::string record_label = in.params.value("record", std::string());
  const auto filter = ActionsParam(in.params);

  int successes = 0, requests = 0, unsent = 0;
  nlohmann::json ops = nlohmann::json::array();
  std::vector<Operation> sent;
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    ++requests;
    sent.push_back(op);
    if (Classify(op, in.target.idempotency) == AnswerClass::kSuccess) ++successes;
    if (op.never_sent()) ++unsent;
    ops.push_back(OpJson(op));
  }
  if (requests == 0) return Verdict::Unknown(name, "the scenario sent no request of the business action").Counted(0);
  // Deliveries that could charge again: those past the first that may have
  // reached the target (a request that could not connect charged nothing).
  const std::int64_t repeats = std::max<std::int64_t>(0, requests - unsent - 1);

  const auto ledger = ProbeValue(in.history, ledger_label);
  if (!ledger) {
    if (in.target.probes.count(ledger_label) == 0)
      return Verdict::NotApplicable(name, "needs a ledger probe '" + ledger_label + "' (the external system's record)");
    return Verdict::Unknown(name, "the ledger probe '" + ledger_label + "' has no value (it failed or never ran)");
  }
  std::int64_t effects = 0;
  DistinctEffects distinct;
  if (ledger->is_number_integer()) {
    effects = ledger->get<std::int64_t>();
  } else {
    const auto entry = [&](const nlohmann::json& x) {
      // A whole egress entry: the effect its downstream key names.
      const auto key = DownstreamKeyOf(x);
      if (key) distinct.Add(std::nullopt, key);
      else if (auto id = id_of(x)) distinct.Add(id, std::nullopt);
    };
    if (ledger->is_array()) {
      for (const auto& x : *ledger) entry(x);
    } else {
      entry(*ledger);
    }
    effects = distinct.count();
  }
  const std::vector<std::string>& effect_ids = distinct.ids();
  VerdictDetails details;
  details.records.ledger = *ledger;
  details.counts.effects = effects;
  details.counts.successes = successes;
  details.records.requests = ops;
  if (!effect_ids.empty()) details.lists.effect_ids = effect_ids;
  if (!distinct.keys().empty()) details.lists.downstream_keys = distinct.keys();
  const std::string ids = distinct.Names();  // " (tx_1, downstream key k-2)"
  // A ledger listing one effect more than once: the downstream answered a
  // re-sent call with the effect it had already taken, or the target re-sent
  // it under the same downstream key.
  const std::string reconciled =
      distinct.added() > distinct.count()
          ? "; the ledger lists it " + std::to_string(distinct.added()) + " times: " +
                (effect_ids.empty() ? "calls re-sent under the same downstream key"
                                    : "calls answered with the same effect")
          : "";

  // Retries after the declared window may rightly charge again.
  const int windows = WindowExecutions(sent, in.target.idempotency);
  if (windows > 1) details.counts.window_executions = windows;
  // An invalid verdict's finding: every request of the action, and what was
  // counted (the ledger's effects, the target's records) against what was
  // allowed, if a count broke.
  const auto invalid = [&](const std::string& problem, std::optional<std::int64_t> count, std::int64_t expected) {
    Finding f = MakeFinding(problem);
    for (const Operation& op : sent) f.With(FindingRole::kOps, OpJson(op));
    if (count) {
      f.records = *count;
      f.expected = expected;
    }
    Violations violations;
    violations.Add(f);
    VerdictDetails with = details;
    with.violations = violations.findings();
    return Verdict::Invalid(name, problem, with);
  };
  if (effects > windows)
    return invalid(std::to_string(effects) + " external effects" + ids + " for one business action (" +
                       std::to_string(requests) + " requests): charged more than once",
                   effects, windows)
        .Counted(repeats);
  if (effects == 0) {
    if (successes > 0)
      return invalid("the target answered success but the external system has no effect", 0, 1);
    return Verdict::Unknown(name, "no external effect and no success: nothing was decided", details).Counted(repeats);
  }
  // No success yet (a crash, a retry refused while the lease lives): only
  // the target's record can show that it reconciled the one effect.
  if (successes == 0 && record_label.empty())
    return Verdict::Unknown(name, "one external effect, but no request was answered with success yet", details)
        .Counted(repeats);

  if (!record_label.empty()) {
    const auto record = ProbeValue(in.history, record_label);
    if (!record) return Verdict::Unknown(name, "the record probe '" + record_label + "' has no value", details);
    const auto recorded = ids_of(*record);
    details.records.recorded = *record;
    if (successes == 0 && recorded.empty())
      return Verdict::Unknown(name, "one external effect, not recorded, and no request was answered with success yet",
                              details)
          .Counted(repeats);
    if (recorded.size() != 1)
      return invalid("the target recorded " + std::to_string(recorded.size()) + " effect ids for one external effect",
                     static_cast<std::int64_t>(recorded.size()), 1);
    if (!effect_ids.empty() && recorded.front() != effect_ids.front())
      return invalid("the target recorded " + recorded.front() + " but the external effect is " + effect_ids.front(),
                     std::nullopt, 1);
  }
  return Verdict::Valid(name, "exactly one external effect" + ids +
                                  std::string(record_label.empty() ? "" : ", recorded by the target") + " (" +
                                  std::to_string(requests) + " requests" + reconciled + ")",
                        details)
      .Counted(repeats);
}

}  // namespace idemproof::oracles
