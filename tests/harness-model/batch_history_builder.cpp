#include "batch_history_builder.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/history_events.h"
#include "model/job_result.h"

namespace idemproof::testing {

const TargetDescription& BatchTarget() {
  static const TargetDescription t = [] {
    auto r = ParseTarget(R"(
name: batchy
base_url: "http://127.0.0.1:{{port}}"
idempotency: {replay: {header: Idempotent-Replayed, value: "true"}}
actions:
  noop: {role: create, request: {path: /healthz}}
batch:
  run: {method: POST, path: "/jobs/{{job}}/run", body: '{"from": {{from}}, "to": {{to}}}'}
  failing_run: {method: POST, path: "/jobs/{{job}}/run", body: '{"from": {{from}}, "to": {{to}}, "fail_after": {{fail_after}}}'}
  result:
    request: {path: "/jobs/{{job}}/result?rows=true"}
    rows: "$.rows"
    row_id: "$.id"
    volatile: ["$.run"]
    markers: "$.markers"
  marker: {key: "$.partition", from: "$.from", to: "$.to", rows_written: "$.rows_written", checksum: "$.checksum"}
  checksum: sha256-rows
  partition_rows: 10
)",
                         "batchy.yaml");
    if (!r.ok()) throw std::runtime_error(r.status().ToString());
    return *r;
  }();
  return t;
}

nlohmann::json ResultRowJson(std::int64_t id, int run) {
  return {{"id", id}, {"amount", (id * 7919) % 10007}, {"run", run}};
}

nlohmann::json RowsJson(std::int64_t from, std::int64_t to, int run) {
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t i = from; i < to; ++i) out.push_back(ResultRowJson(i, run));
  return out;
}

nlohmann::json Concat(std::initializer_list<nlohmann::json> parts) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : parts)
    for (const auto& r : p) out.push_back(r);
  return out;
}

nlohmann::json MarkersJson(const nlohmann::json& rows, std::int64_t from, std::int64_t to) {
  auto result = ReadJobResult(*BatchTarget().batch, {{"rows", rows}, {"markers", nlohmann::json::array()}}, std::nullopt);
  if (!result.ok()) throw std::runtime_error(result.status().ToString());
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t p = from / 10; p * 10 < to; ++p) {
    auto in = result->RowsIn(p * 10, p * 10 + 10);
    out.push_back({{"partition", std::to_string(p)},
                   {"from", p * 10},
                   {"to", p * 10 + 10},
                   {"rows_written", in.size()},
                   {"checksum", RowsChecksum(ChecksumAlgorithm::kSha256Rows, in)}});
  }
  return out;
}

std::int64_t BatchHistory::Run(const std::string& job, const std::string& role, std::int64_t from, std::int64_t to,
                               std::optional<std::int64_t> fail_after, int status, bool replayed,
                               const std::string& of) {
  nlohmann::json b = {{"job", "job-" + job}, {"job_name", job}, {"role", role}, {"from", from}, {"to", to}};
  if (fail_after) b["fail_after"] = *fail_after;
  if (!of.empty()) b["of"] = of;
  HistoryEvent inv = BatchInvoke({"POST", "http://127.0.0.1:1/jobs/job-" + job + "/run", {}, ""}, b, -1);
  inv.time_ns = static_cast<std::int64_t>(t_++) * 1'000'000;
  std::int64_t index = h_.Append(inv);
  RecordedExchange answered;
  answered.type = status == 0 ? EventType::kInfo : EventType::kOk;  // 0: cut off, no answer
  answered.status = status;
  answered.body = "{}";
  if (status == 0) answered.error = "connection reset (the target was killed)";
  if (replayed) answered.headers = {{"Idempotent-Replayed", "true"}};
  HistoryEvent done = BatchCompletion(inv, answered);
  done.time_ns = static_cast<std::int64_t>(t_++) * 1'000'000;
  h_.Append(done);
  return index;
}

BatchHistory& BatchHistory::Result(const std::string& job, std::int64_t after, const nlohmann::json& rows,
                                   const nlohmann::json& markers) {
  return ResultDoc(job, after, {{"rows", rows}, {"markers", markers}});
}

BatchHistory& BatchHistory::ResultDoc(const std::string& job, std::int64_t after, const nlohmann::json& doc) {
  HistoryEvent inv = BatchResultInvoke("job-" + job, job, after, -1);
  inv.time_ns = static_cast<std::int64_t>(t_++) * 1'000'000;
  h_.Append(inv);
  HistoryEvent done = CompletionOf(inv, EventType::kOk);
  done.value["result"] = doc;
  h_.Append(done);
  return *this;
}

BatchHistory& BatchHistory::ResultFailed(const std::string& job, std::int64_t after, const std::string& error) {
  HistoryEvent inv = BatchResultInvoke("job-" + job, job, after, -1);
  h_.Append(inv);
  HistoryEvent done = CompletionOf(inv, EventType::kFail);
  done.value["error"] = error;
  h_.Append(done);
  return *this;
}

}  // namespace idemproof::testing
