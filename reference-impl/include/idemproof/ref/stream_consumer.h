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
//
// Thread-safe: start()/stop() from the owning thread; stop() joins.
#pragma once

#include <atomic>
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

  std::string host_;
  int port_ = 6379;
  std::string stream_, group_, consumer_;
  Nanos claim_idle_;
  SideEffectRoutes& routes_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace idemproof::ref
