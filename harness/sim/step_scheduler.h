// StepScheduler: runs the simulated requests of the reference core one step
// at a time, in the order the simulation's plan chooses.
//
// Each request runs the real handle_request() on a stack of its own (a
// ucontext fiber on the driver's thread): the driver (the caller of
// Send/Advance/AbandonAll) switches to one request, which runs until it
// reaches a step point (StepPoint(), called by the instrumented store,
// provider and the check-then-insert seam) or answers, then switches back.
// Only one runs at any moment and switching is a user-space context swap,
// not an OS scheduling decision: a run is a function of the plan alone, and
// cheap (no thread to wake on a busy machine).
//
// A crash unwinds every request in flight: each is resumed once more and
// StepPoint() throws ProcessCrash, which is not a std::exception, so the
// service's catch-all for internal errors does not turn it into an answer.
// Step points must therefore sit outside any lock or open transaction: a
// lock held across a switch would be held by the driver's thread for the
// next request too (and the unwinding runs destructors, nothing else).
//
// The scheduler also keeps the trace: one readable line per send, step and
// driver event, which the running request annotates (Note) with what its
// step did.
//
// Thread-safety: one thread (the driver) uses a scheduler and its requests;
// different schedulers may run on different threads. StepPoint/Current do
// nothing while no request runs (e.g. during the restart's reconciliation,
// which the driver runs itself).
#pragma once

#include <ucontext.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/http_message.h"

namespace idemproof::sim {

// Thrown from a step point when the process crashes; never caught by the
// reference core.
struct ProcessCrash {};

// One line of a run's trace.
struct TraceLine {
  int request = 0;       // the request it is about; 0 for process events
  std::string text;      // "r1 create_order k1 b1: claim -> claimed"
  bool drained = false;  // run after the plan ended (requests left in flight)
};

class StepScheduler {
 public:
  using RequestId = int;  // 1, 2, ... in order of sending

  StepScheduler();
  // Abandons whatever is still in flight.
  ~StepScheduler();
  StepScheduler(const StepScheduler&) = delete;
  StepScheduler& operator=(const StepScheduler&) = delete;

  // Starts a request called `title` whose body is `run` and runs it up to its
  // first step point (or its answer). `run` may throw ProcessCrash. Throws
  // std::runtime_error when no stack can be allocated.
  RequestId Send(std::string title, std::function<HttpResponse()> run);

  // Runs request `id` (in flight) through the step it waits at, up to its
  // next step point or its answer. `drained`: marks the trace line.
  void Advance(RequestId id, bool drained);

  // The crash: every request in flight is unwound; their answers are lost.
  // Returns their ids.
  std::vector<RequestId> AbandonAll();

  // Requests started and not yet answered or abandoned, lowest id first.
  std::vector<RequestId> InFlight() const;

  // The answer of request `id`; nullopt while in flight or when abandoned.
  const std::optional<HttpResponse>& Answer(RequestId id) const;
  // An exception other than ProcessCrash escaped the request (a harness
  // bug or an escaped store error): its message, else "".
  const std::string& Failure(RequestId id) const;
  std::size_t RequestCount() const { return requests_.size(); }

  // Appends a process event line ("crash", "wait 31s").
  void Log(std::string text);
  const std::vector<TraceLine>& trace() const { return trace_; }

  // --- called by the code a request runs ---

  // Switches back to the driver until the plan advances this request;
  // `label` names what it will do then ("claim", "provider charge"). Throws
  // ProcessCrash when resumed by a crash.
  void StepPoint(std::string_view label);
  // Appends `text` to the newest line (the step now running, or the driver's
  // last event).
  void Note(std::string_view text);
  // The request now running; 0 while the driver runs.
  RequestId Current() const;

 private:
  struct Request;
  struct Stack;

  void RunUntilPause(Request& r);
  static void Entry(unsigned hi, unsigned lo);

  // This thread's spare stacks: they outlive schedulers (one per trial).
  static std::vector<std::unique_ptr<Stack>>& SpareStacks();

  std::vector<std::unique_ptr<Request>> requests_;  // index = id - 1
  std::vector<TraceLine> trace_;
  std::size_t current_line_ = 0;

  ucontext_t driver_{};
  Request* running_ = nullptr;  // the request switched to; null = the driver runs
  bool crashing_ = false;
};

}  // namespace idemproof::sim
