// Interrupt handling: what Ctrl-C (SIGINT) or SIGTERM does to a run.
//
// InstallInterruptHandling() blocks SIGINT and SIGTERM in the calling thread
// — call it first thing in main(), before any thread exists, so every later
// thread inherits the mask — and starts one watcher thread that waits for
// them with sigwait(). On the first signal the watcher raises the interrupt
// flag: HTTP requests in flight are abandoned (HttpClient's cancel flag), waits
// end early (SleepUnlessInterrupted), and the interpreter stops its targets,
// reaps them and lets the CLI write the partial run directory and exit 130.
// If a second signal comes, or the main thread has not exited within
// `hard_exit_after`, the watcher SIGKILLs and reaps every registered child
// itself and calls _exit(130): nothing the harness started outlives it.
//
// Children re-enable the signals before exec (see child_process.h).
//
// Thread-safety: every function is safe from any thread.
#pragma once

#include <atomic>
#include <chrono>

namespace idemproof::runtime {

void InstallInterruptHandling(std::chrono::milliseconds hard_exit_after);

// The flag itself, for HttpClient's cancel pointer. Lives forever.
const std::atomic<bool>& InterruptFlag();

// The signal that interrupted the run (SIGINT / SIGTERM), 0 if none.
int InterruptSignal();

// Raises the flag as a signal would (used by tests and by the CLI on fatal
// errors). `sig` is what InterruptSignal() then reports.
void RequestInterrupt(int sig);

// Sleeps for `d` or until interrupted. Returns false if interrupted.
bool SleepUnlessInterrupted(std::chrono::nanoseconds d);

}  // namespace idemproof::runtime
