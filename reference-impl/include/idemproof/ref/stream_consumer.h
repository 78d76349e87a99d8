// StreamConsumer: the reference service's Redis Streams consumer (hiredis),
// on when `--redis HOST:PORT` is given. One thread, one consumer of
// `--group` on `--stream` (the group is created at the stream's start if
// missing). Each entry {message_id, account, amount} is applied through
// SideEffectRoutes::apply_message — the dedup row and the effect in one
// transaction — and XACKed only after that commit, so a crash in between
// leaves the entry pending and it is delivered again. Entries pending on
// this consumer's name (a restart) are processed first; entries idle longer
// than `--claim-idle` on any consumer (a dead one) are taken over with
// XAUTOCLAIM. An entry without the three fields is acknowledged and skipped.
// An entry's own chaos: `slow_ms` (its work's duration, as POST /inbox's
// query: a kill lands mid-work) and `die_before_ack` (> 0: the consumer
// SIGKILLs itself after this entry's effect, before its XACK; on the entry's
// first delivery only, so its redelivery gets through).
//
// Thread-safe: start()/stop() from the owning thread; stop() wakes the
// consumer out of its blocking read (shutdown of its socket) and joins, so a
// graceful stop does not wait out XREADGROUP's BLOCK.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "idemproof/ref/service_options.h"
#include "idemproof/ref/side_effect_routes.h"

namespace idemproof::ref {

class StreamConsumer {
 public:
  StreamConsumer(const ServiceOptions& options, SideEffectRoutes& routes);
  ~StreamConsumer();
  StreamConsumer(const StreamConsumer&) = delete;
  StreamConsumer& operator=(const StreamConsumer&) = delete;

  void start();
  void stop();

 private:
  void run();
  // Waits `d`, or less when stop() comes.
  void pause_unless_stopping(std::chrono::milliseconds d);

  std::string host_;
  int port_ = 6379;
  std::string stream_, group_, consumer_;
  Nanos claim_idle_;
  SideEffectRoutes& routes_;
  std::atomic<bool> stopping_{false};
  std::mutex socket_mu_;            // guards socket_fd_ against reuse of the number after redisFree
  int socket_fd_ = -1;              // the connected context's socket, -1 when none
  std::condition_variable stop_cv_;  // with socket_mu_: wakes a pause on stop()
  std::thread thread_;
};

}  // namespace idemproof::ref
