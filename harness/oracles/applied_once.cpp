// applied_once: a consumer applies each business message once, however often
// it is delivered (lost acks, redeliveries, two consumers, late or
// out-of-order redelivery). The consumer's effect is read as a probe (a
// counter of applied messages) and compared with the distinct messages:
//  - definite: a message with at least one acknowledged delivery (a 2xx
//    answer to a push, an "ok" publish into a broker);
//  - uncertain: delivered, but never acknowledged (may or may not apply).
// valid when definite <= counter - before <= definite + uncertain; more is a
// message applied twice, less is an acknowledged message lost.
//
// What the counter moves by per application is the probe's to say: one
// (`counts: applications`, the default), or a member of the message
// (`sums: "$.amount"`: a balance adding each message's amount), read from
// the message as delivered (its push body, its broker entry's fields). Then
// definite and uncertain are sums of those members, not message counts.
//
// A message is identified by the `key` of its delivery events: requests of
// the `actions` (the target puts {{key}} into the message id) and f
// "deliver" / "publish" events. Broker redeliveries the harness does not send
// itself count too: an entry the broker still held unacknowledged (the
// runtime's settle note lists it) when the target was killed or restarted can
// only be acknowledged by being delivered again, so once the group settles
// later, that message was delivered once more.
#include <map>
#include <set>
#include <stdexcept>

#include "oracles/oracle_support.h"
#include "oracles/side_effect_oracles.h"
#include "model/history_events.h"

namespace idemproof::oracles {

Verdict AppliedOnce(const OracleInput& in) {
  const std::string name = "applied_once";
  const std::string counter_label = in.params.value("counter", std::string());
  const std::string before_label = in.params.value("before", std::string());
  const auto filter = ActionsParam(in.params);

  // The probe read under `counter`, for what its value counts.
  const ProbeDescription* counter_probe = nullptr;
  for (const auto& e : in.history.events()) {
    if (e.f != event_f::kProbe || !e.value.is_object() || e.value.value("label", "") != counter_label) continue;
    auto p = in.target.probes.find(e.value.value("probe", ""));
    if (p != in.target.probes.end()) counter_probe = &p->second;
  }
  const std::optional<JsonPath> sums = counter_probe != nullptr ? counter_probe->sums : std::nullopt;

  // message id -> acknowledged at least once?
  std::map<std::string, bool> messages;
  std::map<std::string, nlohmann::json> sent;  // message id -> its body (push, request) or broker entry
  std::map<std::string, int> deliveries;
  std::vector<nlohmann::json> delivered;  // each delivery (OpJson), for a finding
  for (const auto& op : PairOperations(in.history)) {
    const HistoryEvent& e = *op.invoke;
    const bool request = e.is_request();
    const bool delivery = e.f == event_f::kDeliver || e.f == event_f::kPublish;
    if (!request && !delivery) continue;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    if (e.key.empty()) continue;
    bool acked = false;
    if (op.completion && op.completion->type == EventType::kOk) {
      if (e.f == event_f::kPublish) {
        acked = true;
      } else if (auto a = op.answer()) {
        acked = a->is_2xx();
      }
    }
    messages[e.key] = messages[e.key] || acked;
    ++deliveries[e.key];
    if (!sent.count(e.key)) {
      if (e.f == event_f::kPublish) {
        sent[e.key] = e.value.value("entry", nlohmann::json());
      } else if (e.value.contains("request") && e.value["request"].is_object()) {
        sent[e.key] = nlohmann::json::parse(e.value["request"].value("body", ""), nullptr, false);
      }
    }
    delivered.push_back(OpJson(op));
  }
  if (messages.empty()) return Verdict::Unknown(name, "no message was delivered").Counted(0);

  std::map<std::string, std::string> message_of_entry;  // broker entry id -> message key
  std::set<std::string> pending, orphaned;
  int redelivered = 0;
  for (const auto& e : in.history.events()) {
    if (e.f == event_f::kPublish && e.type == EventType::kOk && e.value.contains("entry_id") && messages.count(e.key)) {
      message_of_entry[e.value["entry_id"].get<std::string>()] = e.key;
    } else if (e.f == event_f::kNote && e.value.contains("group") && e.value["group"].is_object()) {
      const auto& group = e.value["group"];
      if (group.value("pending", -1) == 0) {
        for (const auto& id : orphaned) {
          if (auto m = message_of_entry.find(id); m != message_of_entry.end()) {
            ++deliveries[m->second];
            ++redelivered;
          }
        }
        orphaned.clear();
        pending.clear();
      } else if (group.contains("pending_ids")) {
        pending.clear();
        for (const auto& id : group["pending_ids"]) pending.insert(id.get<std::string>());
      }
    } else if ((e.f == event_f::kKill || e.f == event_f::kRestart) && e.type == EventType::kOk) {
      orphaned.insert(pending.begin(), pending.end());
      pending.clear();
    }
  }

  auto read = [&](const std::string& label) -> std::optional<std::int64_t> {
    auto v = ProbeValue(in.history, label);
    if (!v || !v->is_number_integer()) return std::nullopt;
    return v->get<std::int64_t>();
  };
  if (counter_label.empty()) return Verdict::Unknown(name, "no counter probe label given");
  const auto counter = read(counter_label);
  if (!counter) {
    if (in.target.probes.count(counter_label) == 0)
      return Verdict::NotApplicable(name, "needs a probe '" + counter_label + "' (the consumer's effect)");
    return Verdict::Unknown(name, "the counter probe '" + counter_label + "' has no integer value");
  }
  std::int64_t base = 0;
  if (!before_label.empty()) {
    auto b = read(before_label);
    if (!b) return Verdict::Unknown(name, "the probe '" + before_label + "' has no integer value");
    base = *b;
  }
  // What each message moves the counter by: 1, or its `sums` member (a
  // broker entry's fields are text: "5" is 5).
  std::map<std::string, std::int64_t> worth;
  for (const auto& [id, acked] : messages) {
    if (!sums) {
      worth[id] = 1;
      continue;
    }
    auto it = sent.find(id);
    auto member = it == sent.end() ? Result<nlohmann::json>(Status::NotFound("not recorded")) : sums->Find(it->second);
    std::optional<std::int64_t> n;
    if (member.ok() && member->is_number_integer()) n = member->get<std::int64_t>();
    if (member.ok() && member->is_string()) {
      try {
        std::size_t used = 0;
        const std::string text = member->get<std::string>();
        const long long v = std::stoll(text, &used);
        if (used == text.size()) n = v;
      } catch (const std::exception&) {
      }
    }
    if (!n)
      return Verdict::Unknown(name, "the counter probe '" + counter_probe->name + "' sums " + sums->text() +
                                        ", which message " + id + " does not carry as an integer")
          .Counted(0);
    worth[id] = *n;
  }
  // A message never acknowledged may or may not have applied: its worth is
  // in the allowed range either way (a negative amount lowers the floor).
  std::int64_t definite = 0, low = 0, high = 0, uncertain = 0, total_deliveries = 0;
  for (const auto& [id, acked] : messages) {
    const std::int64_t w = worth[id];
    if (acked) {
      definite += w;
    } else {
      uncertain += w;
      (w < 0 ? low : high) += w;
    }
  }
  for (const auto& [id, n] : deliveries) total_deliveries += n;
  const std::int64_t applied = *counter - base;
  const std::int64_t redeliveries = total_deliveries - static_cast<std::int64_t>(messages.size());
  VerdictDetails details;
  details.counts.applied = applied;
  details.counts.counter = *counter;
  details.counts.before = base;
  details.counts.definite = definite;
  details.counts.uncertain = uncertain;
  details.counts.deliveries = total_deliveries;
  details.tallies.messages.emplace(deliveries.begin(), deliveries.end());
  details.counts.broker_redeliveries = redelivered;
  details.texts.counts = sums ? "sums " + sums->text() : std::string("applications");
  if (sums) details.tallies.worth.emplace(worth.begin(), worth.end());
  // An invalid verdict's finding: every delivery, the applications counted
  // against the messages.
  const auto invalid = [&](const std::string& problem, std::int64_t expected) {
    Finding f = MakeFinding(problem);
    for (const auto& op : delivered) f.With(FindingRole::kOps, op);
    f.records = applied;
    f.expected = expected;
    Violations violations;
    violations.Add(f);
    VerdictDetails with = details;
    with.violations = violations.findings();
    return Verdict::Invalid(name, problem, with).Counted(redeliveries);
  };
  const std::int64_t most = definite + high, least = definite + low;
  const std::string distinct = std::to_string(messages.size()) + " distinct message(s)";
  if (sums) {
    // The counter sums a member: the evidence speaks of its total, not of applications.
    const std::string moved = "the consumer's counter (" + counter_label + ", summing each message's " +
                              sums->text() + ") moved by " + std::to_string(applied);
    if (applied > most)
      return invalid(moved + " for " + distinct + " worth " + std::to_string(most) + " (" +
                         std::to_string(total_deliveries) + " deliveries): a redelivery applied again",
                     most);
    if (applied < least)
      return invalid(moved + " where the acknowledged message(s) are worth " + std::to_string(least) +
                         ": one was lost",
                     least);
  } else {
    if (applied > most)
      return invalid("the consumer applied " + std::to_string(applied) + " times for " +
                         std::to_string(definite + uncertain) + " distinct message(s) (" +
                         std::to_string(total_deliveries) + " deliveries): a redelivery applied again",
                     most);
    if (applied < least)
      return invalid("the consumer applied " + std::to_string(applied) + " of " + std::to_string(definite) +
                         " acknowledged message(s): one was lost",
                     least);
  }
  if (redeliveries <= 0) return Verdict::Unknown(name, "no message was delivered twice: nothing to judge", details).Counted(0);
  return Verdict::Valid(name, (sums ? "the counter moved by " + std::to_string(applied) + " (summing " + sums->text() +
                                          ") for "
                                    : std::to_string(applied) + " application(s) for ") +
                                  distinct + " over " + std::to_string(total_deliveries) + " deliveries",
                        details)
      .Counted(redeliveries);
}

void RegisterSideEffectOracles(OracleRegistry& registry) {
  const OracleParamSpec actions{"actions", ParamType::kStringList, false, "only these actions (default: all)"};
  registry.Register({"intent_reconciled",
                     "exactly one external effect per business action in the ledger, and the target's record "
                     "names it",
                     {actions,
                      {"ledger", ParamType::kString, false, "label of the ledger probe (default: ledger)"},
                      {"record", ParamType::kString, false,
                       "label of a probe giving the effect id(s) the target recorded"}},
                     false,
                     "repeated deliveries"},
                    IntentReconciled);
  registry.Register({"lease_recovery",
                     "after a crash mid-request: in-progress while the lease holds, one completion after, never "
                     "stuck",
                     {actions, {"lease", ParamType::kDuration, false, "overrides the target's idempotency.lease"}},
                     false,
                     "requests running when their owner ended"},
                    LeaseRecovery);
  registry.Register({"applied_once",
                     "the consumer's counter equals the number of distinct messages, however often delivered",
                     {actions,
                      {"counter", ParamType::kString, true, "label of the probe reading the consumer's counter"},
                      {"before", ParamType::kString, false, "label of the same probe before the deliveries"}},
                     false,
                     "redeliveries"},
                    AppliedOnce);
  registry.Register({"downstream_once",
                     "after a kill right after a downstream answered, that call took effect once per business "
                     "action (the egress proxy's record)",
                     {actions,
                      {"fault", ParamType::kString, true,
                       "the kill-after-answer fault on the egress whose struck call is the effect"}},
                     false,
                     "repeated deliveries"},
                    DownstreamOnce);
}

}  // namespace idemproof::oracles
