#include <exception>

#include "model/profile.h"
#include "oracles/oracle.h"
#include "oracles/oracle_support.h"

namespace idemproof {

Status OracleRegistry::Register(OracleSignature signature, OracleFn fn) {
  if (signature.name.empty()) return Status::InvalidArgument("oracle name is empty");
  if (entries_.count(signature.name)) return Status::InvalidArgument("oracle '" + signature.name + "' registered twice");
  std::string name = signature.name;
  entries_.emplace(name, Entry{std::move(signature), std::move(fn)});
  return Status::Ok();
}

std::vector<OracleSignature> OracleRegistry::Signatures() const {
  std::vector<OracleSignature> out;
  for (const auto& [name, e] : entries_) out.push_back(e.signature);
  return out;
}

ScenarioVocabulary OracleRegistry::Vocabulary() const {
  ScenarioVocabulary v;
  v.oracles = Signatures();
  return v;
}

namespace {
// The rule the target's semantics profile applies to `v`, and its level: a
// finding against a SHOULD is a deviation. Findings that are all about the
// status code alone (violations tagged "rule": "status") apply the
// oracle's status rule. An oracle's own deviation is never made a violation.
Verdict WithRule(Verdict v, const TargetDescription& target) {
  const SemanticsProfile* profile = FindProfile(target.idempotency.profile);
  if (profile == nullptr) return v;
  bool status_only = false;
  if (v.status == VerdictStatus::kInvalid && !v.details.Findings().empty()) {
    status_only = true;
    for (const Finding& f : v.details.Findings())
      if (f.rule != "status") status_only = false;
  }
  const ProfileRule* rule = profile->RuleFor(v.oracle, status_only);
  if (rule == nullptr) return v;
  v.rule = {rule->id, rule->text, RuleLevelName(rule->level)};
  if (v.status == VerdictStatus::kInvalid && rule->level == RuleLevel::kShould) v.severity = Severity::kDeviation;
  return v;
}

// A verdict about requests that were not the same says how they differed
// (model/request_groups.h, RequestDifferences): a client's retry repeats its
// request byte for byte, so "the duplicate executed" over a duplicate with
// another query string may be the target keying on the query, not a broken
// guard. Every verdict judged over the oracle's actions (not
// not_applicable) gets it, once for every oracle.
Verdict WithRequestDifferences(Verdict v, const OracleSpec& spec, const TargetDescription& target,
                               const History& history) {
  if (v.status == VerdictStatus::kNotApplicable) return v;
  std::vector<std::string> actions;
  try {
    actions = oracles::ActionsParam(spec.params);
  } catch (const std::exception&) {
    return v;  // not a list of action names: nothing of ours to compare
  }
  std::vector<std::string> lines;
  for (const auto& g : GroupRequestsByKey(history, actions)) {
    const std::string text = RequestDifferencesText(g, target);
    if (!text.empty()) lines.push_back(text);
  }
  if (lines.empty()) return v;
  v.details.lists.request_differences = lines;
  v.evidence += " (" + lines[0] +
                (lines.size() > 1 ? "; and " + std::to_string(lines.size() - 1) + " more key(s) whose requests differ"
                                  : std::string()) +
                ")";
  return v;
}
}  // namespace

Verdict OracleRegistry::Check(const OracleSpec& spec, const Scenario& scenario, const TargetDescription& target,
                              const History& history) const {
  return WithRequestDifferences(WithRule(CheckUnder(spec, scenario, target, history), target), spec, target, history);
}

Verdict OracleRegistry::CheckUnder(const OracleSpec& spec, const Scenario& scenario, const TargetDescription& target,
                                   const History& history) const {
  auto it = entries_.find(spec.name);
  if (it == entries_.end()) return Verdict::Unknown(spec.name, "no oracle named '" + spec.name + "'");
  // A crashing oracle proves nothing: unknown, never valid.
  try {
    OracleInput in{scenario, target, history, spec.params};
    Verdict v = it->second.fn(in);
    v.oracle = spec.name;
    const OracleSignature& sig = it->second.signature;
    v.premise.what = sig.premise;
    if (v.status == VerdictStatus::kValid) {
      if (auto why = oracles::PremiseBroken(sig, history)) {
        Verdict u = Verdict::Unknown(spec.name, *why, v.details);
        u.premise = v.premise;
        return u;
      }
      // A property whose premise never occurred was never exercised.
      if (!sig.premise.empty() && v.premise.count.value_or(0) <= 0) {
        Verdict u = Verdict::Unknown(spec.name, std::string(kPremiseNotReached) + "no " + sig.premise + " in this run",
                                     v.details);
        u.premise = {sig.premise, 0};
        return u;
      }
    }
    if (v.PremiseNotReached()) v.evidence = kPremiseNotReached + v.evidence;
    return v;
  } catch (const std::exception& e) {
    return Verdict::Unknown(spec.name, std::string("oracle crashed: ") + e.what());
  } catch (...) {
    return Verdict::Unknown(spec.name, "oracle crashed with a non-standard exception");
  }
}

std::vector<Verdict> OracleRegistry::CheckAll(const Scenario& scenario, const TargetDescription& target,
                                              const History& history) const {
  std::vector<Verdict> out;
  bool judges_errors = false;
  for (const auto& spec : scenario.expect) {
    out.push_back(Check(spec, scenario, target, history));
    judges_errors = judges_errors || spec.name == "problem_details";
  }
  // A target that declares `errors: problem+json` has every 4xx of the
  // suite judged: problem_details joins each scenario that got one.
  if (target.errors_problem_json && !judges_errors && entries_.count("problem_details")) {
    for (const auto& op : RequestOperations(history)) {
      auto a = op.answer();
      if (a && a->status >= 400 && a->status < 500) {
        OracleSpec spec;
        spec.name = "problem_details";
        out.push_back(Check(spec, scenario, target, history));
        break;
      }
    }
  }
  return out;
}

}  // namespace idemproof
