#include "injectors/fault_event.h"

#include <chrono>

#include <nlohmann/json.hpp>

namespace idemproof::injectors {

static nlohmann::json headers_json(const HeaderList& headers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [k, v] : headers) out.push_back({k, v});
  return out;
}

static nlohmann::json answer_json(const AnswerSnapshot& a) {
  return {{"status", a.status}, {"headers", headers_json(a.headers)}, {"body", a.body},
          {"time_ns", a.time_ns}};
}

static nlohmann::json request_json(const RequestSnapshot& r) {
  return {{"method", r.method}, {"target", r.target}, {"headers", headers_json(r.headers)}, {"body", r.body}};
}

void to_json(nlohmann::json& out, const UpstreamExchange& x) {
  out = {{"request", request_json(x.request)},
         {"answer", x.answer ? answer_json(*x.answer) : nlohmann::json()},
         {"error", x.error},
         {"timed_out", x.timed_out},
         {"sent_ns", x.sent_ns}};
}

void to_json(nlohmann::json& out, const FaultEvent& e) {
  out = {{"time_ns", e.time_ns}, {"fault", e.fault},   {"name", e.name},
         {"phase", e.phase},     {"detail", e.detail}, {"upstream_sends", e.upstream_sends}};
  if (e.request) {
    out["request"] = request_json(*e.request);
  } else {
    out["request"] = nullptr;
  }
  out["upstream"] = nlohmann::json::array();
  for (const auto& a : e.upstream) out["upstream"].push_back(answer_json(a));
  out["client_answer"] = e.client_answer ? answer_json(*e.client_answer) : nlohmann::json();
  if (!e.missed.empty()) out["missed"] = e.missed;
}

void FaultEventLog::record(FaultEvent event) {
  base::MutexLock lock(mu_);
  if (sink_) sink_(event);
  events_.push_back(std::move(event));
}

std::vector<FaultEvent> FaultEventLog::snapshot() const {
  base::MutexLock lock(mu_);
  return events_;
}

std::size_t FaultEventLog::size() const {
  base::MutexLock lock(mu_);
  return events_.size();
}

}  // namespace idemproof::injectors
