#include "model/metrics.h"

#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "model/answer_diff.h"
#include "model/batch_history.h"
#include "model/job_result.h"
#include "model/request_groups.h"
#include "model/target/description.h"

namespace idemproof {
namespace {
std::optional<double> Rate(std::int64_t num, std::int64_t den) {
  if (den == 0) return std::nullopt;
  return static_cast<double>(num) / static_cast<double>(den);
}
nlohmann::json OptJson(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// The last readable result of `job` in `snapshots`, if any.
std::optional<JobResult> LastResult(const BatchDescription& batch, const std::vector<JobSnapshot>& snapshots,
                                    const std::string& job) {
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    if (it->job != job || !it->ok) continue;
    auto r = ReadJobResult(batch, it->result, it->markers);
    if (r.ok()) return *r;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::int64_t> RerunDiffRows(const TargetDescription& target, const History& history) {
  // A totals result has no rows to diff: the metric is absent, not 0.
  if (!target.batch || target.batch->totals()) return std::nullopt;
  auto runs = BatchRuns(history);
  auto snapshots = JobSnapshots(history);
  std::optional<std::int64_t> total;
  std::set<std::string> done;
  for (const auto& r : runs) {
    if (r.role != BatchRole::kRerun || !done.insert(r.job).second) continue;
    const BatchRun* clean = nullptr;
    for (const auto& c : runs) {
      if (c.role != BatchRole::kClean) continue;
      if (c.of == r.job_name) { clean = &c; break; }
      if (clean == nullptr) clean = &c;
    }
    if (clean == nullptr) continue;
    auto mine = LastResult(*target.batch, snapshots, r.job);
    auto reference = LastResult(*target.batch, snapshots, clean->job);
    if (!mine || !reference) continue;
    total = total.value_or(0) + CompareRows(*mine, *reference).diff_rows();
  }
  return total;
}

}  // namespace

std::optional<double> Metrics::duplicate_rate() const { return Rate(keys_sent_more_than_once, keys_sent); }
std::optional<double> Metrics::false_dedup_rate() const { return Rate(replay_answers_without_record, replay_answers); }
std::optional<double> Metrics::swallowed_new_rate() const {
  return Rate(new_key_answers_as_replay, new_key_answers);
}
std::optional<double> Metrics::window_hit_rate() const { return Rate(window_retries_recognised, window_retries); }

void Metrics::Add(const Metrics& o) {
  keys_sent += o.keys_sent;
  keys_sent_more_than_once += o.keys_sent_more_than_once;
  replay_answers += o.replay_answers;
  replay_answers_without_record += o.replay_answers_without_record;
  new_key_answers += o.new_key_answers;
  new_key_answers_as_replay += o.new_key_answers_as_replay;
  window_retries += o.window_retries;
  window_retries_recognised += o.window_retries_recognised;
  if (o.rerun_diff_rows) rerun_diff_rows = rerun_diff_rows.value_or(0) + *o.rerun_diff_rows;
}

Metrics ComputeMetrics(const TargetDescription& target, const History& history) {
  Metrics m;
  const IdempotencyContract& contract = target.idempotency;
  std::map<std::string, int> sends_per_key;
  std::set<std::tuple<std::string, std::string, std::string>> keys_begun;  // (action, caller, key)
  const auto ops = RequestOperations(history);
  for (const auto& op : ops) {
    const HistoryEvent& e = *op.invoke;
    if (!e.key.empty()) ++sends_per_key[e.key];
    auto a = op.answer();
    const bool first_of_key = !e.key.empty() && keys_begun.insert({e.action, CallerOf(e), e.key}).second;
    // A burst's first invoke may lose the race to a copy; a proxy may replay it: only a request alone counts.
    if (first_of_key && a && contract.replay && RanAlone(history, ops, op) &&
        (Classify(op, contract) == AnswerClass::kSuccess || Classify(op, contract) == AnswerClass::kRetryable)) {
      ++m.new_key_answers;
      if (IsReplayMarked(*a, contract)) ++m.new_key_answers_as_replay;
    }
    // A replayed 4xx (a stored validation failure) has no record by design;
    // a replayed 2xx or retryable failure claims work that must exist.
    AnswerClass c = Classify(op, contract);
    if (a && IsReplayMarked(*a, contract) && (c == AnswerClass::kSuccess || c == AnswerClass::kRetryable)) {
      auto count = RecordCount(history, e.action, e.biz);
      if (count) {
        ++m.replay_answers;
        if (*count == 0) ++m.replay_answers_without_record;
      }
    }
  }
  m.keys_sent = static_cast<std::int64_t>(sends_per_key.size());
  for (const auto& [k, n] : sends_per_key)
    if (n > 1) ++m.keys_sent_more_than_once;

  for (const auto& g : GroupRequestsByKey(history)) {
    const Operation* first = EarliestTerminal(g, contract);
    if (first == nullptr) continue;
    auto first_answer = first->answer();
    auto volatile_paths = target.VolatilePathsFor(g.action);
    for (const Operation* op : RetriesAfter(g, *first, contract.window)) {
      ++m.window_retries;
      auto a = op->answer();
      if (!a) continue;
      bool recognised;
      if (contract.replay) {
        recognised = IsReplayMarked(*a, contract) || contract.IsInProgress(a->status);
      } else {
        recognised = AnswerDifferences(*first_answer, *a, volatile_paths, {}).empty();
      }
      if (recognised) ++m.window_retries_recognised;
    }
  }
  m.rerun_diff_rows = RerunDiffRows(target, history);
  return m;
}

nlohmann::json MetricsToJson(const Metrics& m) {
  return {{"keys_sent", m.keys_sent},
          {"keys_sent_more_than_once", m.keys_sent_more_than_once},
          {"duplicate_rate", OptJson(m.duplicate_rate())},
          {"replay_answers", m.replay_answers},
          {"replay_answers_without_record", m.replay_answers_without_record},
          {"false_dedup_rate", OptJson(m.false_dedup_rate())},
          {"new_key_answers", m.new_key_answers},
          {"new_key_answers_as_replay", m.new_key_answers_as_replay},
          {"swallowed_new_rate", OptJson(m.swallowed_new_rate())},
          {"window_retries", m.window_retries},
          {"window_retries_recognised", m.window_retries_recognised},
          {"window_hit_rate", OptJson(m.window_hit_rate())},
          {"rerun_diff_rows", m.rerun_diff_rows ? nlohmann::json(*m.rerun_diff_rows) : nlohmann::json(nullptr)}};
}

Result<Metrics> MetricsFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("metrics: expected an object");
  Metrics m;
  try {
    m.keys_sent = doc.value("keys_sent", std::int64_t{0});
    m.keys_sent_more_than_once = doc.value("keys_sent_more_than_once", std::int64_t{0});
    m.replay_answers = doc.value("replay_answers", std::int64_t{0});
    m.replay_answers_without_record = doc.value("replay_answers_without_record", std::int64_t{0});
    m.new_key_answers = doc.value("new_key_answers", std::int64_t{0});
    m.new_key_answers_as_replay = doc.value("new_key_answers_as_replay", std::int64_t{0});
    m.window_retries = doc.value("window_retries", std::int64_t{0});
    m.window_retries_recognised = doc.value("window_retries_recognised", std::int64_t{0});
    if (doc.contains("rerun_diff_rows") && !doc["rerun_diff_rows"].is_null())
      m.rerun_diff_rows = doc["rerun_diff_rows"].get<std::int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("metrics: ") + e.what());
  }
  return m;
}

}  // namespace idemproof
