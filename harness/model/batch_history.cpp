#include "model/batch_history.h"
#include "model/history_events.h"

namespace idemproof {

const char* BatchRoleName(BatchRole role) {
  switch (role) {
    case BatchRole::kRun: return "run";
    case BatchRole::kRerun: return "rerun";
    case BatchRole::kClean: return "clean";
  }
  return "?";
}

bool BatchRun::answered_2xx() const {
  auto a = answer();
  return a && a->is_2xx();
}

std::vector<BatchRun> BatchRuns(const History& history) {
  std::vector<BatchRun> out;
  for (const auto& op : PairOperations(history)) {
    const HistoryEvent& e = *op.invoke;
    if (e.f != event_f::kBatch || !e.value.is_object() || !e.value.contains("batch")) continue;
    const nlohmann::json& b = e.value["batch"];
    if (!b.is_object() || !b.contains("job") || !b["job"].is_string()) continue;
    BatchRun r;
    r.op = op;
    r.job = b["job"].get<std::string>();
    r.job_name = b.value("job_name", r.job);
    std::string role = b.value("role", "run");
    r.role = role == "rerun" ? BatchRole::kRerun : role == "clean" ? BatchRole::kClean : BatchRole::kRun;
    if (b.contains("from") && b["from"].is_number_integer()) r.from = b["from"].get<std::int64_t>();
    if (b.contains("to") && b["to"].is_number_integer()) r.to = b["to"].get<std::int64_t>();
    if (b.contains("fail_after") && b["fail_after"].is_number_integer())
      r.fail_after = b["fail_after"].get<std::int64_t>();
    r.of = b.value("of", "");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<JobSnapshot> JobSnapshots(const History& history) {
  std::vector<JobSnapshot> out;
  for (const auto& op : PairOperations(history)) {
    const HistoryEvent& e = *op.invoke;
    if (e.f != event_f::kBatchResult || op.completion == nullptr || !e.value.is_object()) continue;
    const nlohmann::json& b = e.value.value("batch", nlohmann::json::object());
    JobSnapshot s;
    s.job = b.value("job", "");
    s.job_name = b.value("job_name", s.job);
    s.after = e.value.value("after", std::int64_t{-1});
    s.index = e.index;
    const nlohmann::json& v = op.completion->value;
    s.ok = op.completion->type == EventType::kOk && v.is_object() && v.contains("result");
    if (s.ok) {
      s.result = v["result"];
      if (v.contains("markers")) s.markers = v["markers"];
    } else {
      s.error = v.is_object() && v.contains("error") && v["error"].is_string() ? v["error"].get<std::string>()
                                                                             : "the result could not be read";
    }
    out.push_back(std::move(s));
  }
  return out;
}

const JobSnapshot* SnapshotAfter(const std::vector<JobSnapshot>& snapshots, const BatchRun& run) {
  for (const auto& s : snapshots)
    if (s.after == run.index() && s.job == run.job) return &s;
  return nullptr;
}

}  // namespace idemproof
