// Clang's thread-safety annotations (-Wthread-safety), empty on GCC, and a
// mutex the analysis understands: libstdc++'s std::mutex carries no
// capability attribute, so a member GUARDED_BY a std::mutex is not checked.
// base::Mutex is std::mutex with the attribute (as Abseil's Mutex is), and
// base::MutexLock its scoped lock (std::lock_guard's part). A class that
// holds a mutex declares what it guards:
//
//   mutable base::Mutex mu_;
//   std::vector<Event> events_ GUARDED_BY(mu_);
//   void AddLocked(Event e) REQUIRES(mu_);
//
// and `ctest -L thread-safety` compiles the annotated files with clang++
// -Wthread-safety -Werror=thread-safety (tests/thread_safety/). A wait on a
// condition variable takes std::condition_variable_any over the MutexLock.
//
// Thread-safety: Mutex is a mutex; MutexLock is one thread's.
#pragma once

#include <mutex>

#if defined(__clang__)
#define IDEMPROOF_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define IDEMPROOF_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) IDEMPROOF_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY IDEMPROOF_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) IDEMPROOF_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) IDEMPROOF_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) IDEMPROOF_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) IDEMPROOF_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) IDEMPROOF_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) IDEMPROOF_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) IDEMPROOF_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define RETURN_CAPABILITY(x) IDEMPROOF_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS IDEMPROOF_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace idemproof::base {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope. It is BasicLockable itself (lock/unlock the
// mutex it holds), so std::condition_variable_any can wait on it.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  // For std::condition_variable_any only (it unlocks and relocks around a wait).
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }

 private:
  Mutex& mu_;
};

}  // namespace idemproof::base
