// RunRecorder: what one scenario run records: its names (model/naming.h),
// the history its steps append to, their notes, and what the run produced
// (runtime/run_types.h ScenarioRun: errors, fault counts, pids). The step
// context (step_context.h) owns one per run and hands it out by reference,
// so code that only records (an injector's events, wait and join steps)
// takes a RunRecorder instead of the whole context.
//
// Thread-safety: Append, Note and KeyFor from any thread; MarkStart and out()
// from the interpreter's thread only.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/history.h"
#include "model/naming.h"
#include "runtime/run_types.h"
#include "base/thread_annotations.h"

namespace idemproof::runtime {

class RunRecorder {
 public:
  RunRecorder(std::uint64_t seed, const std::string& run_namespace, const std::string& scenario_name, int ordinal);

  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  const RunNaming& naming() const { return naming_; }
  // What the run produced so far (errors, fault counts, pids).
  ScenarioRun& out() { return out_; }

  // The steady-clock time (monotonic_ns()) event times are relative to.
  std::int64_t start_ns() const { return t0_; }
  void MarkStart();
  // Any thread. Appends at a steady-clock time (monotonic_ns()); returns the index.
  std::int64_t Append(HistoryEvent e, std::int64_t at_ns);
  void Note(int step, const std::string& text);

  // Any thread. The concrete key of a symbolic one ("fresh": a new one each call);
  // `length` > 0: `key_form: max_length`, the key grown to that many characters.
  std::string KeyFor(const std::string& name, std::size_t length = 0);

 private:
  const RunNaming naming_;
  ScenarioRun out_;
  std::int64_t t0_ = 0;

  base::Mutex mu_;
  int fresh_counter_ GUARDED_BY(mu_) = 0;
};

// Appends an injector's event (a fault's, on the proxy lane) to the run's
// history; the times of the swallowed answers also relative to the run's
// start (at_ns). Any thread.
void RecordInjectorEvent(RunRecorder& recorder, nlohmann::json event, std::int64_t steady_ns);

}  // namespace idemproof::runtime
