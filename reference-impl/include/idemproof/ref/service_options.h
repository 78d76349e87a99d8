// ServiceOptions: the whole command line of `idemproof-ref`, parsed with
// CLI11. Durations use the syntax of duration.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "idemproof/ref/service_config.h"

namespace idemproof::ref {

struct ServiceOptions {
  ServiceConfig service;
  std::string host = "127.0.0.1";
  unsigned short port = 0;
  std::string db = "idemproof-ref.db";
  // Every durable table (request records, orders, stock, movements, batch
  // markers, payment intents, callbacks, inbox): "" = the SQLite file `db`;
  // a postgres:// or postgresql:// URL = that PostgreSQL database (`db` unused).
  std::string store;
  std::optional<Nanos> sweep_interval;  // default: min(1s, effective TTL / 10)
  unsigned threads = 4;                 // io_context threads
  unsigned workers = 64;                // threads running the (blocking) business steps
  // Business-step threads run as SCHED_BATCH by default: a woken worker does
  // not preempt the I/O threads, so reading (and stamping) a burst of arrivals
  // is not interleaved with answering the first of them. false: SCHED_OTHER.
  bool batch_workers = true;
  // A fully read request is handed to the workers after the completions
  // already queued (the reads that became ready with it): each hand-off wakes
  // a thread, which would delay reading the rest of a burst. false: at once.
  bool dispatch_after_reads = true;
  Nanos check_insert_pause = std::chrono::microseconds(200);
  bool report_arrival = false;
  std::size_t body_limit = 64 * 1024;   // bytes; a larger body gets 413
  // How long the client may take, on HTTP/1.1 and h2c alike: to send a whole
  // request (counted from when its connection, or its h2 stream, starts
  // waiting for it), to take a whole answer, and to start a request on an
  // idle connection. Past it the request is dropped (h2: the stream reset)
  // and an idle connection closed. The business step has no such deadline.
  Nanos io_timeout = std::chrono::seconds(30);
  // Open client connections, HTTP/1.1 and h2c together; one past it is
  // closed as soon as it is accepted.
  std::size_t max_connections = 4096;
  // Side effects (side_effect_routes.h, stream_consumer.h).
  std::string payment_provider;         // base URL of the provider; "" = none
  Nanos provider_timeout = std::chrono::seconds(5);
  std::string redis;                    // "HOST:PORT": consume a Redis stream; "" = no consumer
  std::string stream = "idemproof:inbox";
  std::string group = "idemproof-ref";
  std::string consumer;                 // "" = "ref-<pid>"
  Nanos claim_idle = std::chrono::seconds(1);  // pending entries idle this long are claimed
  // Batch jobs (batch_job.h): rows per partition, the range a marker covers.
  std::int64_t batch_partition_rows = 10;

  Nanos effective_sweep_interval() const;
};

// What main() should do: run with `options`, or exit with `exit_code` (after
// --help, --flaw list, or an error, already printed).
struct CommandLine {
  std::optional<ServiceOptions> options;
  int exit_code = 0;
};

CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace idemproof::ref
