#include "platform/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "platform/child_process.h"

namespace idemproof::runtime {

namespace {

std::atomic<bool> g_flag{false};
std::atomic<int> g_signal{0};

// Heap-allocated and never freed: the watcher thread may still use them while
// static destructors run at exit.
std::mutex& wake_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::condition_variable& wake_cv() {
  static auto* cv = new std::condition_variable;
  return *cv;
}

void write_stderr(const char* text) {
  ssize_t ignored = ::write(2, text, std::strlen(text));
  (void)ignored;
}

void watch(sigset_t set, std::chrono::milliseconds hard_exit_after) {
  int sig = 0;
  while (::sigwait(&set, &sig) != 0) {
  }
  RequestInterrupt(sig);
  timespec timeout{};
  timeout.tv_sec = hard_exit_after.count() / 1000;
  timeout.tv_nsec = (hard_exit_after.count() % 1000) * 1000000L;
  int second = ::sigtimedwait(&set, nullptr, &timeout);
  write_stderr(second > 0 ? "\nidemproof: interrupted again: killing every target process now\n"
                          : "\nidemproof: shutdown took too long: killing every target process now\n");
  SignalAllChildren(SIGKILL);
  for (int i = 0; i < 2000 && ReapExitedChildren() > 0; ++i) ::usleep(5000);
  ::_exit(130);
}

}  // namespace

void InstallInterruptHandling(std::chrono::milliseconds hard_exit_after) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  std::thread(watch, set, hard_exit_after).detach();
}

const std::atomic<bool>& InterruptFlag() { return g_flag; }

int InterruptSignal() { return g_signal.load(); }

void RequestInterrupt(int sig) {
  {
    std::lock_guard<std::mutex> lock(wake_mutex());
    g_signal.store(sig);
    g_flag.store(true);
  }
  wake_cv().notify_all();
}

bool SleepUnlessInterrupted(std::chrono::nanoseconds d) {
  std::unique_lock<std::mutex> lock(wake_mutex());
  return !wake_cv().wait_for(lock, d, [] { return g_flag.load(); });
}

}  // namespace idemproof::runtime
