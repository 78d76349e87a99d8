#include "reports/design_review/run_review.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <tuple>

#include "base/duration.h"
#include "model/operation.h"
#include "model/request_groups.h"
#include "model/target_commands.h"
#include "model/finding.h"
#include "model/history_events.h"

namespace idemproof {
namespace {

constexpr int kViolationsShown = 3;  // per verdict; the rest are counted

const Layer kLayers[] = {Layer::kClient,      Layer::kGateway, Layer::kQueue,  Layer::kSideEffect,
                         Layer::kConcurrency, Layer::kBatch,   Layer::kCluster};

std::string LayerTitle(Layer layer) {
  switch (layer) {
    case Layer::kClient: return "client";
    case Layer::kGateway: return "gateway / network";
    case Layer::kQueue: return "queue";
    case Layer::kSideEffect: return "side effect";
    case Layer::kConcurrency: return "concurrency";
    case Layer::kBatch: return "batch re-run";
    case Layer::kCluster: return "cluster (another instance)";
  }
  return "?";
}

std::string Plural(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "201 x2, 409 x1" from a status -> count map (ordered by status).
std::string StatusHistogram(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [what, n] : counts) {
    if (!out.empty()) out += ", ";
    out += what + (n > 1 ? " \u00d7" + std::to_string(n) : "");
  }
  return out;
}

std::string AnswerLabel(const Operation& op, const IdempotencyContract& contract) {
  if (op.completion == nullptr) return "no completion";
  if (op.completion->type == EventType::kInfo) return "lost (no answer)";
  if (op.completion->type == EventType::kFail) return "not sent";
  auto a = op.answer();
  if (!a) return "unreadable answer";
  return std::to_string(a->status) + (IsReplayMarked(*a, contract) ? " replay" : "");
}

AnswerView AnswerFromOp(const std::string& role, const OpRefView& op) {
  AnswerView v;
  v.role = role;
  v.index = op.index;
  v.process = op.process;
  v.key = op.key;
  v.outcome = op.outcome;
  v.error = op.error;
  if (op.answer.is_object()) {
    if (auto a = AnswerFromJson(op.answer)) {
      v.status = a->status;
      v.headers = a->headers;
      v.body = a->body;
    }
  }
  return v;
}

std::string JsonText(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

constexpr int kOpsShownPerRole = 4;  // a burst's executions: four say enough

// One finding (model/finding.h), its ops in role order.
ViolationView ReadViolation(const std::string& oracle, const Finding& f, std::set<std::int64_t>& highlight) {
  ViolationView out;
  out.oracle = oracle;
  out.problem = f.problem;
  std::map<FindingRole, int> shown;
  for (const FindingOp& op : f.ops) {
    std::string role = FindingRoleName(op.role);
    if (FindingRoleHoldsSeveral(op.role)) {
      const int n = ++shown[op.role];
      if (n > kOpsShownPerRole) continue;
      // "ops" (one_record) are simply the requests for the business id.
      role = (op.role == FindingRole::kOps ? std::string("request") : role) + " " + std::to_string(n);
    }
    const OpRefView ref = ReadOpRef(op.ref);
    AnswerView a = AnswerFromOp(role, ref);
    if (a.index >= 0) highlight.insert(a.index);
    if (ref.completion_index) highlight.insert(*ref.completion_index);
    out.answers.push_back(std::move(a));
  }
  out.differences = f.differences;
  out.records = f.records;
  if (!f.expected.is_null()) out.expected_records = JsonText(f.expected);
  out.missing_ranges = f.missing_ranges;
  // Values it compares that are no answer (probe_equal's probes).
  for (const FindingValue& v : f.values) {
    AnswerView a;
    a.role = "probe " + v.label;
    a.outcome = "ok";
    a.body = v.value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    out.answers.push_back(std::move(a));
  }
  return out;
}

void ReviewVerdicts(const ScenarioResult& s, ScenarioReview& review) {
  for (const Verdict& verdict : s.verdicts) {
    if (verdict.status != VerdictStatus::kInvalid) continue;
    if (verdict.is_deviation() && review.outcome != VerdictStatus::kInvalid) continue;  // shown in its row only
    if (review.what_broke.empty()) {
      review.what_broke = "The " + review.layer_title + " layer broke on " + verdict.oracle + ": " +
                          verdict.evidence + (verdict.evidence.empty() || verdict.evidence.back() == '.' ? "" : ".");
      if (!verdict.rule.id.empty()) review.what_broke += " Rule " + RuleText(verdict) + ".";
    }
    int shown = 0;
    if (const auto& findings = verdict.details.Findings(); !findings.empty()) {
      for (const Finding& f : findings) {
        if (shown == kViolationsShown) {
          ++review.violations_omitted;
          continue;
        }
        review.violations.push_back(ReadViolation(verdict.oracle, f, review.highlighted));
        ++shown;
      }
    } else {
      ViolationView v;
      v.oracle = verdict.oracle;
      v.problem = verdict.evidence;
      review.violations.push_back(std::move(v));
    }
  }
  if (!s.error.empty() && review.what_broke.empty() && review.outcome == VerdictStatus::kInvalid)
    review.what_broke = "The tool could not run it: " + s.error;
}

std::optional<std::int64_t> MicrosToNanos(std::optional<double> us) {
  if (!us) return std::nullopt;
  return static_cast<std::int64_t>(*us * 1000.0 + (*us >= 0 ? 0.5 : -0.5));
}

std::vector<BurstSpreadView> BurstSpreads(const History& h) {
  std::vector<BurstSpreadView> out;
  for (const auto& e : h.events()) {
    const auto b = BurstSpreadOf(e);
    if (!b) continue;
    BurstSpreadView v;
    v.step = b->step;
    v.n = b->n;
    v.mode = b->mode;
    v.arrival_header = b->arrival_header;
    v.harness_ns = MicrosToNanos(b->harness_spread_us);
    v.target_ns = MicrosToNanos(b->target_spread_us);
    if (v.harness_ns || v.target_ns) out.push_back(v);
  }
  return out;
}

// What the layer's histories show about keys on the wire.
std::string KeyObserved(const std::vector<const History*>& histories, const IdempotencyContract& contract) {
  int requests = 0, keyed = 0, same_key_groups = 0, changed_key_groups = 0;
  std::string example;
  for (const History* h : histories) {
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> keys_by_action;
    for (const auto& op : RequestOperations(*h)) {
      const HistoryEvent& e = *op.invoke;
      ++requests;
      if (!e.key.empty()) {
        ++keyed;
        if (example.empty()) example = e.key;
      }
      keys_by_action[{e.action, e.biz, e.payload}].push_back(e.key);
    }
    for (const auto& [id, keys] : keys_by_action) {
      if (keys.size() < 2) continue;
      bool same = std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return k == keys.front(); });
      (same && !keys.front().empty() ? same_key_groups : changed_key_groups)++;
    }
  }
  if (requests == 0) return "no request sent";
  const std::string carrier = contract.key_header.empty() ? "a key" : contract.key_header;  // key_header: none
  std::string out = carrier + " on " + std::to_string(keyed) + "/" + std::to_string(requests) + " requests";
  int groups = same_key_groups + changed_key_groups;
  if (groups > 0) {
    out += "; repeated business actions kept one key in " + std::to_string(same_key_groups) + "/" +
           std::to_string(groups);
    if (changed_key_groups > 0) out += " (" + std::to_string(changed_key_groups) + " changed or dropped it)";
  }
  if (!example.empty()) out += "; e.g. " + example;
  return out;
}

// Duplicates that overlapped a running request with the same key, and what
// the target answered them.
std::string ConcurrencyGuard(const std::vector<const History*>& histories, const IdempotencyContract& contract) {
  int overlaps = 0;
  std::map<std::string, int> answers;
  for (const History* h : histories) {
    for (const auto& g : GroupRequestsByKey(*h)) {
      for (const auto& op : g.ops) {
        bool overlapping = std::any_of(g.ops.begin(), g.ops.end(), [&](const Operation& other) {
          return other.invoke != op.invoke && other.invoke_ns() <= op.invoke_ns() &&
                 (other.completion == nullptr || other.complete_ns() > op.invoke_ns()) &&
                 other.invoke->index < op.invoke->index;
        });
        if (!overlapping) continue;
        ++overlaps;
        AnswerClass c = Classify(op, contract);
        std::string label = AnswerLabel(op, contract);
        if (c == AnswerClass::kInProgress) label += " (in progress)";
        ++answers[label];
      }
    }
  }
  if (overlaps == 0) return "no duplicate overlapped a running request";
  return Plural(overlaps, "overlapping duplicate", "overlapping duplicates") + ": " + StatusHistogram(answers);
}

std::string Reconciliation(const std::vector<const History*>& histories, const IdempotencyContract& contract) {
  std::map<std::string, int> crashes;
  std::map<std::string, int> after;
  std::map<std::string, std::int64_t> records;
  for (const History* h : histories) {
    std::optional<std::int64_t> crash_ns;
    for (const auto& e : h->events()) {
      if (e.process != event_process::kNemesis || e.type != EventType::kInvoke) continue;
      if (e.f == event_f::kKill || e.f == event_f::kStop || e.f == event_f::kRestart) {
        ++crashes[e.f];
        if (!crash_ns) crash_ns = e.time_ns;
      } else if (e.f == event_f::kStart && crash_ns) {
        ++crashes["start"];
      }
    }
    if (!crash_ns) continue;
    for (const auto& op : RequestOperations(*h)) {
      if (op.invoke_ns() < *crash_ns) continue;
      ++after[AnswerLabel(op, contract)];
      if (auto n = RecordCount(*h, op.invoke->action, op.invoke->biz))
        records[op.invoke->action + " " + op.invoke->biz_name] = *n;
    }
  }
  if (crashes.empty()) return "no crash or restart exercised";
  std::string out = StatusHistogram(crashes);
  out += after.empty() ? "; no request after it" : "; requests after it: " + StatusHistogram(after);
  if (!records.empty()) {
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& [k, n] : records) {
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    out += "; records per business id: " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + "\u2013" + std::to_string(hi));
  }
  return out;
}

std::string StoreWindow(const std::optional<TargetDescription>& target) {
  if (!target) return "target file not available";
  const auto& c = target->idempotency;
  std::string out = "window " + (c.window ? FormatDuration(*c.window) : std::string("not declared"));
  out += "; lease " + (c.lease ? FormatDuration(*c.lease) : std::string("not declared"));
  // Target files have no store field yet: say so rather than guess from argv.
  out += "; store not declared";
  return out;
}

// Worse of two outcomes: invalid > unknown > valid > not_applicable.
VerdictStatus WorseOutcome(VerdictStatus a, VerdictStatus b) {
  auto rank = [](VerdictStatus o) {
    switch (o) {
      case VerdictStatus::kInvalid: return 3;
      case VerdictStatus::kUnknown: return 2;
      case VerdictStatus::kValid: return 1;
      case VerdictStatus::kNotApplicable: return 0;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

// Families against actions (FamilyCoverage): a family is a scenario before
// binding; a row counts for every target action its binding names.
FamilyCoverage CoverFamilies(const RunDirectoryContents& contents, const std::vector<ScenarioReview>& reviews,
                             const std::map<Layer, std::vector<std::size_t>>& by_layer) {
  const RunResults& results = contents.results;
  FamilyCoverage coverage;
  std::set<std::string> actions;
  if (contents.target) {
    for (const auto& [name, action] : contents.target->actions) actions.insert(name);
  } else {  // no target file to tell actions from probes: every bound name
    for (const auto& s : results.scenarios)
      for (const auto& [param, bound] : s.binding) actions.insert(bound);
  }
  std::map<std::string, std::size_t> family_index;
  auto add_rows = [&](const std::vector<std::size_t>& rows) {
    std::vector<std::size_t> in_layer;
    for (std::size_t i : rows) {
      const ScenarioResult& s = results.scenarios[i];
      const std::string family = s.bound_from.empty() ? s.name : s.bound_from;
      auto [it, fresh] = family_index.emplace(family, coverage.families.size());
      if (fresh) {
        FamilyRow row;
        row.family = family;
        row.layer_title = reviews[i].layer_title;
        row.hunts = s.hunts;
        coverage.families.push_back(std::move(row));
        in_layer.push_back(it->second);
      }
      FamilyRow& row = coverage.families[it->second];
      const VerdictStatus outcome = reviews[i].outcome;
      bool bound_to_action = false;
      for (const auto& [param, bound] : s.binding) {
        if (actions.count(bound) == 0) continue;  // a probe
        bound_to_action = true;
        auto [cell, added] = row.by_action.emplace(bound, outcome);
        if (!added) cell->second = WorseOutcome(cell->second, outcome);
      }
      if (!bound_to_action && outcome != VerdictStatus::kNotApplicable) {
        row.target_wide = row.target_wide ? WorseOutcome(*row.target_wide, outcome) : outcome;
        coverage.any_target_wide = true;
      }
      if (outcome == VerdictStatus::kInvalid && row.anchor.empty()) row.anchor = reviews[i].anchor;
      std::string lacking = !s.error.empty() ? "could not run: " + s.error : s.NotApplicableReason();
      if (outcome == VerdictStatus::kNotApplicable &&
          std::find(row.lacking.begin(), row.lacking.end(), lacking) == row.lacking.end())
        row.lacking.push_back(lacking);
      if (outcome == VerdictStatus::kNotApplicable) {
        for (const auto& [param, bound] : s.binding) {
          if (actions.count(bound) == 0) continue;
          const std::string on = bound + ": " + lacking;
          if (std::find(row.not_applicable_on.begin(), row.not_applicable_on.end(), on) == row.not_applicable_on.end())
            row.not_applicable_on.push_back(on);
        }
      }
      // What its properties are about, as often as it happened (judged verdicts only).
      for (const auto& v : s.verdicts) {
        if (v.premise.what.empty() || !v.premise.count || v.status == VerdictStatus::kNotApplicable) continue;
        auto p = std::find_if(row.premises.begin(), row.premises.end(),
                              [&](const auto& e) { return e.first == v.premise.what; });
        if (p == row.premises.end()) row.premises.emplace_back(v.premise.what, *v.premise.count);
        else p->second += *v.premise.count;
      }
    }
    std::sort(in_layer.begin(), in_layer.end(), [&](std::size_t a, std::size_t b) {
      return coverage.families[a].family < coverage.families[b].family;
    });
    return in_layer;
  };
  std::vector<std::size_t> order;
  for (Layer layer : kLayers) {
    auto it = by_layer.find(layer);
    if (it == by_layer.end()) continue;
    for (std::size_t f : add_rows(it->second)) order.push_back(f);
  }
  std::vector<std::size_t> unlayered;  // a layer this build does not know
  for (std::size_t i = 0; i < results.scenarios.size(); ++i)
    if (!ParseLayer(results.scenarios[i].layer).ok()) unlayered.push_back(i);
  for (std::size_t f : add_rows(unlayered)) order.push_back(f);

  std::vector<FamilyRow> ordered;
  for (std::size_t f : order) ordered.push_back(std::move(coverage.families[f]));
  coverage.families = std::move(ordered);
  std::set<std::string> judged;
  for (auto& row : coverage.families) {
    bool exercised = row.target_wide.has_value();
    for (const auto& [action, outcome] : row.by_action) {
      if (outcome == VerdictStatus::kNotApplicable) continue;
      exercised = true;
      judged.insert(action);
    }
    if (exercised) row.lacking.clear();
    else row.not_applicable_on.clear();  // said once, by `lacking`
    // Ran, yet every premise it counted stayed at 0: it proved nothing.
    const bool reached = row.premises.empty() ||
                         std::any_of(row.premises.begin(), row.premises.end(), [](const auto& p) { return p.second > 0; });
    row.exercise = !exercised ? FamilyExercise::kNotExercised
                   : reached  ? FamilyExercise::kExercised
                              : FamilyExercise::kPremiseUnreached;
  }
  // A run with no bound row (an older run directory) says nothing per action.
  const bool any_bound = std::any_of(results.scenarios.begin(), results.scenarios.end(),
                                     [](const ScenarioResult& s) { return !s.binding.empty(); });
  if (!any_bound) return coverage;
  coverage.actions.assign(actions.begin(), actions.end());
  for (const auto& a : coverage.actions)
    if (judged.count(a) == 0) coverage.unexercised.push_back(a);
  return coverage;
}

CellState CellOf(const Verdict& v, bool strict) {
  switch (v.status) {
    case VerdictStatus::kInvalid:
      return v.is_violation() || strict ? CellState::kBroken : CellState::kDeviation;
    case VerdictStatus::kUnknown: return CellState::kUndecided;
    case VerdictStatus::kValid: return CellState::kHeld;
    case VerdictStatus::kNotApplicable: return CellState::kNotApplicable;
  }
  return CellState::kNone;
}

// The layers against the properties, from the verdicts.
std::vector<MatrixRow> Matrix(const RunResults& results, const std::vector<ScenarioReview>& reviews,
                              const std::vector<LayerRow>& layers,
                              const std::map<Layer, std::vector<std::size_t>>& by_layer) {
  std::vector<MatrixRow> out;
  for (const LayerRow& layer : layers) {
    MatrixRow row;
    row.layer_title = layer.title;
    row.state = layer.state;
    const auto rows = by_layer.find(layer.layer);
    for (const MatrixProperty& p : MatrixProperties()) {
      MatrixCell cell;
      if (rows != by_layer.end()) {
        for (std::size_t i : rows->second) {
          for (const Verdict& v : results.scenarios[i].verdicts) {
            if (std::find(p.oracles.begin(), p.oracles.end(), v.oracle) == p.oracles.end()) continue;
            const CellState c = CellOf(v, results.strict);
            if (c > cell.state) cell = {c, 0, reviews[i].anchor};
            if (c == cell.state) ++cell.count;
          }
        }
      }
      row.cells.push_back(cell);
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

const std::vector<MatrixProperty>& MatrixProperties() {
  static const std::vector<MatrixProperty> properties = {
      {"one record", {"one_record"}},
      {"identical replay", {"identical_replay"}},
      {"mismatch rejected", {"mismatch_rejected"}},
      {"in progress", {"in_progress"}},
      {"lease recovery", {"lease_recovery"}},
      {"effects once", {"intent_reconciled", "applied_once"}},
      {"ranges", {"range_continuity"}},
  };
  return properties;
}

const char* CellStateName(CellState state) {
  switch (state) {
    case CellState::kNone: return "\u2014";
    case CellState::kNotApplicable: return "n/a";
    case CellState::kHeld: return "held";
    case CellState::kDeviation: return "deviation";
    case CellState::kUndecided: return "undecided";
    case CellState::kBroken: return "broken";
  }
  return "?";
}

const char* LayerStateName(LayerState state) {
  switch (state) {
    case LayerState::kBroken: return "broken";
    case LayerState::kUndecided: return "undecided";
    case LayerState::kHeld: return "held";
    case LayerState::kNotTested: return "not tested";
  }
  return "?";
}

std::string FamilyRow::PremisesText() const {
  std::string out;
  for (const auto& [what, n] : premises) out += (out.empty() ? "" : ", ") + what + " \u00d7" + std::to_string(n);
  return out;
}

std::string FamilyRow::LackingText() const {
  std::string out;
  for (const auto& l : lacking) out += (out.empty() ? "" : "; ") + l;
  for (const auto& l : not_applicable_on) out += (out.empty() ? "not applicable on " : "; ") + l;
  return out;
}

const char* FamilyExerciseName(FamilyExercise e) {
  switch (e) {
    case FamilyExercise::kExercised: return "exercised";
    case FamilyExercise::kPremiseUnreached: return "ran, premise never occurred";
    case FamilyExercise::kNotExercised: return "not exercised";
  }
  return "?";
}

const char* OutcomeName(VerdictStatus outcome) {
  switch (outcome) {
    case VerdictStatus::kInvalid: return "broken";
    case VerdictStatus::kValid: return "held";
    case VerdictStatus::kUnknown: return "undecided";
    case VerdictStatus::kNotApplicable: return "not applicable";
  }
  return "?";
}

std::string DisplayBody(const std::string& body, std::size_t max_chars) {
  std::string text = body;
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_discarded() && (parsed.is_object() || parsed.is_array()))
    text = parsed.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_chars) {
    const std::size_t cut = text.size() - max_chars;
    text = text.substr(0, max_chars) + "\n… (" + std::to_string(cut) + " more characters in the history)";
  }
  return text;
}

std::string ScenarioAnchor(std::size_t index, const std::string& name) {
  std::string slug;
  for (char c : name) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok) {
      slug += l;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return "s-" + std::to_string(index + 1) + (slug.empty() ? "" : "-" + slug);
}

std::string FormatNanos(std::int64_t ns) {
  char buf[64];
  double v = static_cast<double>(ns);
  if (ns < 0) return "-" + FormatNanos(-ns);
  if (ns < 1000) std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  else if (ns < 1000000) std::snprintf(buf, sizeof buf, "%.0f \u00b5s", v / 1e3);
  else if (ns < 1000000000) std::snprintf(buf, sizeof buf, "%.1f ms", v / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f s", v / 1e9);
  return buf;
}

namespace {

std::string Rate(const std::optional<double>& rate, std::int64_t num, std::int64_t den) {
  if (!rate) return "\u2014 (nothing to measure)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %%", *rate * 100.0);
  return std::string(buf) + " (" + std::to_string(num) + " / " + std::to_string(den) + ")";
}

}  // namespace

std::vector<MetricRow> MetricRows(const RunReview& review,
                                  const std::function<std::string(const std::string&)>& escape) {
  const Metrics& m = review.metrics;
  std::vector<MetricRow> rows = {
      {"duplicate rate", Rate(m.duplicate_rate(), m.keys_sent_more_than_once, m.keys_sent),
       "keys sent more than once / keys sent"},
      {"false-dedup rate", Rate(m.false_dedup_rate(), m.replay_answers_without_record, m.replay_answers),
       "replay-marked answers with no record behind them / replay-marked answers"},
      {"window hit rate", Rate(m.window_hit_rate(), m.window_retries_recognised, m.window_retries),
       "retries inside the declared window recognised / retries inside it"},
      {"rerun diff rows",
       m.rerun_diff_rows ? std::to_string(*m.rerun_diff_rows) : std::string("\u2014 (no batch rerun in this run)"),
       "rows that differ between a rerun and a clean run"},
  };
  bool spreads = false;
  for (const auto& sr : review.scenarios) {
    for (const auto& b : sr.burst_spreads) {
      spreads = true;
      const std::string where = sr.result->name + ", step " + std::to_string(b.step + 1) + " (" +
                                std::to_string(b.n) + " requests, " + b.mode + ")";
      if (b.target_ns)
        rows.push_back({"burst arrival spread", escape(FormatNanos(*b.target_ns)),
                        escape(where) + ": last minus first arrival, as the target reported (" +
                            escape(b.arrival_header) + ")"});
      if (b.harness_ns)
        rows.push_back({"burst release spread", escape(FormatNanos(*b.harness_ns)),
                        escape(where) + ": last minus first final write, harness side"});
    }
  }
  if (!spreads) rows.push_back({"burst arrival spread", "\u2014", "no burst recorded its spread"});
  return rows;
}

std::string ReproCommand(const RunResults& results, const ScenarioResult& scenario) {
  std::string cmd = "idemproof run " + ShellQuote(scenario.file.empty() ? "scenarios" : scenario.file);
  cmd += " --target " + ShellQuote(results.target_file.empty() ? "TARGET.yaml" : results.target_file);
  cmd += " --seed " + std::to_string(results.seed);
  cmd += " --filter " + ShellQuote(scenario.name);
  if (!results.flaw.empty()) cmd += " --flaw " + ShellQuote(results.flaw);
  if (!results.profile.empty() && results.profile != "ietf") cmd += " --profile " + ShellQuote(results.profile);
  return cmd;
}

std::string RuleText(const Verdict& verdict) {
  if (verdict.rule.id.empty()) return "";
  return verdict.rule.id + " (" + verdict.rule.level + "): " + verdict.rule.text;
}

std::string PremiseText(const Verdict& verdict) {
  if (verdict.premise.what.empty()) return "";
  if (!verdict.premise.count) return verdict.premise.what + ": not counted";
  return verdict.premise.what + " \u00d7" + std::to_string(*verdict.premise.count);
}

RunReview ReviewRun(const RunDirectoryContents& contents) {
  RunReview review;
  const RunResults& results = contents.results;
  const IdempotencyContract contract = contents.target ? contents.target->idempotency : IdempotencyContract{};
  review.metrics = results.TotalMetrics();
  review.exit_code = results.ExitCode();

  std::map<Layer, std::vector<std::size_t>> by_layer;
  for (std::size_t i = 0; i < results.scenarios.size(); ++i) {
    const ScenarioResult& s = results.scenarios[i];
    ScenarioReview r;
    r.index = i;
    r.result = &s;
    r.anchor = ScenarioAnchor(i, s.name);
    auto layer = ParseLayer(s.layer);
    r.layer_title = layer.ok() ? LayerTitle(*layer) : s.layer;
    if (layer.ok()) by_layer[*layer].push_back(i);
    r.outcome = s.Outcome(results.strict);
    ReviewVerdicts(s, r);
    r.repro_command = ReproCommand(results, s);
    if (const History* h = contents.HistoryOf(i)) r.burst_spreads = BurstSpreads(*h);
    review.scenarios.push_back(std::move(r));

    for (const auto& w : s.warnings) review.warnings.push_back(s.name + ": " + w);
    if (!s.error.empty()) review.warnings.push_back(s.name + ": could not run: " + s.error);
    for (const auto& [fault, n] : s.fault_counts) {
      auto it = std::find_if(review.faults.begin(), review.faults.end(),
                             [&](const FaultTotal& f) { return f.name == fault; });
      if (it == review.faults.end()) {
        review.faults.push_back({fault, 0, {}});
        it = std::prev(review.faults.end());
      }
      it->injected += n;
      it->scenarios.push_back(s.name);
    }
  }
  std::sort(review.faults.begin(), review.faults.end(),
            [](const FaultTotal& a, const FaultTotal& b) { return a.name < b.name; });
  std::map<std::string, PremiseTotal> premises;
  for (const auto& s : results.scenarios) {
    for (const auto& v : s.verdicts) {
      if (v.premise.what.empty() || v.status == VerdictStatus::kNotApplicable) continue;
      PremiseTotal& p = premises[v.oracle];
      p.oracle = v.oracle;
      p.what = v.premise.what;
      ++p.scenarios;
      p.count += v.premise.count.value_or(0);
      if (v.premise.count.value_or(0) == 0) p.unreached.push_back(s.name);
    }
  }
  for (auto& [name, p] : premises) review.premises.push_back(std::move(p));
  review.coverage = CoverFamilies(contents, review.scenarios, by_layer);
  for (const auto& g : contents.Gaps()) review.warnings.push_back(g);

  std::vector<std::string> broken, undecided, held;
  for (Layer layer : kLayers) {
    LayerRow row;
    row.layer = layer;
    row.title = LayerTitle(layer);
    row.store_window = StoreWindow(contents.target);
    std::vector<const History*> histories;
    for (std::size_t i : by_layer[layer]) {
      const ScenarioResult& s = results.scenarios[i];
      const ScenarioReview& r = review.scenarios[i];
      ++row.scenarios;
      switch (r.outcome) {
        case VerdictStatus::kInvalid: ++row.broken; break;
        case VerdictStatus::kUnknown: ++row.undecided; break;
        case VerdictStatus::kValid: ++row.held; break;
        case VerdictStatus::kNotApplicable: ++row.not_applicable; break;
      }
      if (!s.hunts.empty() && std::find(row.sources.begin(), row.sources.end(), s.hunts) == row.sources.end())
        row.sources.push_back(s.hunts);
      for (const auto& [fault, n] : s.fault_counts)
        row.sources.push_back("fault " + fault + " injected " + std::to_string(n) + "\u00d7");
      row.evidence.push_back({r.anchor, s.name, r.outcome, !s.error.empty()});
      if (const History* h = contents.HistoryOf(i)) histories.push_back(h);
    }
    if (row.broken > 0) row.state = LayerState::kBroken;
    else if (row.undecided > 0) row.state = LayerState::kUndecided;
    else if (row.held > 0) row.state = LayerState::kHeld;
    else row.state = LayerState::kNotTested;
    if (row.scenarios == 0) {
      row.key_observed = row.concurrency_guard = row.reconciliation = "\u2014";
    } else if (histories.empty()) {
      row.key_observed = row.concurrency_guard = row.reconciliation = "no history recorded";
    } else {
      row.key_observed = KeyObserved(histories, contract);
      row.concurrency_guard = ConcurrencyGuard(histories, contract);
      row.reconciliation = Reconciliation(histories, contract);
    }
    if (row.state == LayerState::kBroken) broken.push_back(row.title);
    if (row.state == LayerState::kUndecided) undecided.push_back(row.title);
    if (row.state == LayerState::kHeld) held.push_back(row.title);
    review.layers.push_back(std::move(row));
  }
  review.matrix = Matrix(results, review.scenarios, review.layers, by_layer);
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  if (!broken.empty()) review.headline = "Broken: " + join(broken);
  else if (!undecided.empty()) review.headline = "Undecided: " + join(undecided);
  else if (!held.empty()) review.headline = "Held: " + join(held);
  else review.headline = "Nothing tested";
  // A violation the hunt found breaks the run whatever the suite said.
  if (results.hunt && results.hunt->outcome == "violation")
    review.headline = broken.empty() ? "Broken: hunt" : review.headline + ", hunt";
  return review;
}

std::vector<MetricRow> HuntRows(const HuntResults& h, const std::function<std::string(const std::string&)>& escape) {
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  std::vector<MetricRow> rows;
  const std::string outcome = h.outcome == "violation" ? "VIOLATION"
                              : h.outcome == "clean"   ? "no violation"
                              : h.outcome == "not_run" ? "NOT RUN"
                                                       : "UNDECIDED";
  std::string why = h.outcome == "not_run" ? h.reason : h.stop_reason;
  if (h.outcome == "undecided" && why.empty()) why = "no workload was judged: not a clean result";
  rows.push_back({"outcome", escape(outcome) + (why.empty() ? "" : ": " + escape(why)),
                  "exit code " + n(h.exit_code) + " (a hunt is a search: a clean one is no proof)"});
  rows.push_back({"budget", escape(h.budget),
                  escape(n(h.elapsed_ms) + " ms hunted" + (h.time_budget_hit ? ", the budget reached" : "")) +
                      (h.seed != 0 ? ", seed " + escape(std::to_string(h.seed)) : std::string())});
  if (h.outcome == "not_run") return rows;
  rows.push_back({"workloads", n(h.workloads), "generated workloads run (" + n(h.runs) + " run(s) with shrinking)"});
  std::string kinds;
  for (const auto& [kind, count] : h.ops_by_kind) kinds += (kinds.empty() ? "" : ", ") + kind + " \u00d7" + n(count);
  rows.push_back({"operations", n(h.operations), kinds.empty() ? "none" : escape(kinds)});
  rows.push_back({"faults fired", n(h.faults_fired), "kills, restarts, pauses, faults, hooks and causes among them"});
  rows.push_back({"passed", n(h.passed), "workloads every oracle judged clean"});
  rows.push_back({"undecided", n(h.undecided), "workloads an oracle could not decide (an answer lost to a fault)"});
  rows.push_back({"unexercised", n(h.unexercised), "workloads whose oracles found nothing to judge"});
  rows.push_back({"errors", n(h.errors), "runs the harness could not complete"});
  rows.push_back({"oracles", n(static_cast<std::int64_t>(h.oracles.size())), "judging every workload's whole history"});
  for (const auto& x : h.excluded) rows.push_back({"not generated: " + escape(x.op), "\u2014", escape(x.reason)});
  if (!h.failure) return rows;
  const HuntFailure& f = *h.failure;
  rows.push_back({"first failing workload", n(f.first_failure_ops) + " op(s)",
                  escape(f.first_failure + " (after " + std::to_string(f.to_first_failure_ms) + " ms)")});
  rows.push_back({"shrunk to", n(f.minimal_ops) + " op(s)",
                  escape(f.minimal + " (" + std::to_string(f.shrink_steps) + " shrink step(s), " +
                         std::to_string(f.shrinking_ms) + " ms)")});
  rows.push_back({"reproduced", n(f.reproduced) + " / " + n(f.confirm_runs), "confirming runs of the shrunk workload"});
  for (const auto& [oracle, evidence] : f.invalid) rows.push_back({"broken: " + escape(oracle), "invalid", escape(evidence)});
  rows.push_back({"repro.yaml", escape(f.repro_file), "the shrunk workload as a scenario `idemproof run` replays"});
  return rows;
}

}  // namespace idemproof
