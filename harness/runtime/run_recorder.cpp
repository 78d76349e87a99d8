#include "runtime/run_recorder.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "clients/http_client.h"
#include "model/history_events.h"
#include "model/scenario.h"

namespace idemproof::runtime {

RunRecorder::RunRecorder(std::uint64_t seed, const std::string& run_namespace, const std::string& scenario_name,
                         int ordinal)
    : naming_(seed, run_namespace, scenario_name, ordinal) {}

void RunRecorder::MarkStart() { t0_ = monotonic_ns(); }

std::int64_t RunRecorder::Append(HistoryEvent e, std::int64_t at_ns) {
  base::MutexLock lock(mu_);
  e.time_ns = at_ns - t0_;
  return out_.history.Append(std::move(e));
}

void RunRecorder::Note(int step, const std::string& text) { Append(idemproof::Note(step, text), monotonic_ns()); }

std::string RunRecorder::KeyFor(const std::string& name, std::size_t length) {
  if (length > 0 && name != kFreshKey && name != kNoKey) return naming_.Key(name, length);
  if (name != kFreshKey) return naming_.Key(name);
  base::MutexLock lock(mu_);
  return naming_.FreshKey(++fresh_counter_);
}

void RecordInjectorEvent(RunRecorder& recorder, nlohmann::json event, std::int64_t steady_ns) {
  if (event.contains("upstream") && event["upstream"].is_array()) {
    for (auto& a : event["upstream"]) {
      if (a.contains("time_ns") && a["time_ns"].is_number_integer())
        a["at_ns"] = a["time_ns"].get<std::int64_t>() - recorder.start_ns();
    }
  }
  recorder.Append(InjectorEvent(std::move(event)), steady_ns);
}

}  // namespace idemproof::runtime
