#include "idemproof/ref/service_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "base/duration.h"
#include "idemproof/ref/postgres_store.h"

namespace idemproof::ref {

Nanos ServiceOptions::effective_sweep_interval() const {
  if (sweep_interval) return *sweep_interval;
  const Nanos tenth = service.effective_dedup_ttl() / 10;
  return std::max(Nanos(std::chrono::milliseconds(1)),
                  std::min<Nanos>(std::chrono::seconds(1), tenth));
}

CommandLine parse_command_line(int argc, const char* const* argv) {
  CLI::App app{"idemproof-ref: the reference idempotent order service"};
  ServiceOptions o;
  std::string lease = "30s", ttl = "24h", sweep, delay = "0", pause = "200us", flaw = "none";
  app.add_option("--host", o.host, "address to bind");
  app.add_option("--port", o.port, "0 picks a free port");
  app.add_option("--db", o.db, "SQLite file (unused with --store: everything is in PostgreSQL)");
  app.add_option("--store", o.store,
                 "request records, orders, stock, movements, batch markers and side-effect records in PostgreSQL:"
                 " postgres://USER@HOST:PORT/DB"
                 " (default: the --db SQLite file)");
  app.add_option("--lease", lease, "in-progress lease duration");
  app.add_option("--dedup-ttl", ttl, "how long a completed request record is kept");
  app.add_option("--sweep-interval", sweep, "how often dead request records are deleted");
  app.add_option("--key-header", o.service.key_header, "idempotency key header");
  app.add_option("--replay-header", o.service.replay_header, "header marking a replay");
  app.add_option("--base-path", o.service.base_path, "prefix of every route");
  app.add_option("--threads", o.threads, "io_context threads")->check(CLI::Range(1u, 256u));
  app.add_option("--workers", o.workers, "business-step threads")->check(CLI::Range(1u, 1024u));
  std::string worker_sched = "batch";
  app.add_option("--worker-sched", worker_sched,
                 "scheduling of business-step threads: batch (never preempt I/O) or normal")
      ->check(CLI::IsMember({"batch", "normal"}));
  std::string dispatch = "after-reads";
  app.add_option("--dispatch", dispatch,
                 "when a read request goes to the workers: after-reads (the reads ready with it first) or immediate")
      ->check(CLI::IsMember({"after-reads", "immediate"}));
  app.add_option("--business-delay", delay, "sleep inside every business step");
  app.add_option("--check-insert-pause", pause, "pause of the check-then-insert and claim-conflict-500 flaws");
  std::string reconcile = "lookup";
  app.add_option("--reconcile", reconcile,
                 "how a payment retried after a provider call settles it: lookup (ask the provider by the "
                 "intent's key) or resend (charge again with the same key)")
      ->check(CLI::IsMember({"lookup", "resend"}));
  app.add_flag("--report-arrival", o.report_arrival, "add X-Arrival-Ns to every answer");
  app.add_option("--body-limit", o.body_limit, "largest accepted body in bytes (else 413)");
  app.add_option("--max-connections", o.max_connections,
                 "open client connections (HTTP/1.1 and h2c together); one more is closed at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  std::string io_timeout = "30s";
  app.add_option("--io-timeout", io_timeout,
                 "how long a client may take to send a request or take an answer, and an idle connection stays"
                 " open (HTTP/1.1 and h2c)");
  app.add_option("--flaw", flaw, "one named mistake; 'list' prints them");
  app.add_option("--flaw-route", o.service.flaw_route,
                 "only this route template has the flaw (e.g. /refunds); request-path flaws only");
  std::string provider_timeout = "5s", claim_idle = "1s";
  app.add_option("--payment-provider", o.payment_provider, "base URL of the payment provider");
  app.add_option("--provider-timeout", provider_timeout, "deadline of each provider call");
  app.add_option("--redis", o.redis, "HOST:PORT of a Redis server: consume --stream");
  app.add_option("--stream", o.stream, "Redis stream the consumer reads");
  app.add_option("--group", o.group, "Redis consumer group");
  app.add_option("--consumer", o.consumer, "consumer name in the group (default ref-<pid>)");
  app.add_option("--claim-idle", claim_idle, "claim pending entries idle this long (XAUTOCLAIM)");
  app.add_option("--batch-partition-rows", o.batch_partition_rows,
                 "rows per batch partition (one range marker each)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return {std::nullopt, code == 0 ? 0 : 2};
  }

  o.batch_workers = worker_sched == "batch";
  o.service.reconcile_by_resend = reconcile == "resend";
  o.dispatch_after_reads = dispatch == "after-reads";
  if (flaw == "list") {
    for (const auto& info : all_flaws()) std::cout << info.name << "  " << info.mistake << "\n";
    std::cout.flush();
    return {std::nullopt, 0};
  }
  // NAME@ROUTE aims the flaw at one route, as --flaw-route ROUTE does (a
  // target file's flaw_args pass one value).
  if (const auto at = flaw.find('@'); at != std::string::npos) {
    o.service.flaw_route = flaw.substr(at + 1);
    flaw.resize(at);
  }
  const auto parsed_flaw = parse_flaw(flaw);
  if (!parsed_flaw) {
    std::cerr << "idemproof-ref: unknown flaw '" << flaw << "' (--flaw list prints them)\n";
    return {std::nullopt, 2};
  }
  o.service.flaw = *parsed_flaw;
  if (!o.service.flaw_route.empty() && o.service.flaw != Flaw::none && !flaw_can_be_aimed(o.service.flaw)) {
    std::cerr << "idemproof-ref: --flaw-route: flaw '" << flaw << "' is not a request-path flaw; it cannot be aimed at one route\n";
    return {std::nullopt, 2};
  }

  struct DurationFlag {
    const char* name;
    const std::string& text;
    Nanos* out;
  };
  Nanos sweep_value{0};
  const DurationFlag durations[] = {
      {"--lease", lease, &o.service.lease},
      {"--dedup-ttl", ttl, &o.service.dedup_ttl},
      {"--business-delay", delay, &o.service.business_delay},
      {"--check-insert-pause", pause, &o.check_insert_pause},
      {"--sweep-interval", sweep, &sweep_value},
      {"--provider-timeout", provider_timeout, &o.provider_timeout},
      {"--claim-idle", claim_idle, &o.claim_idle},
      {"--io-timeout", io_timeout, &o.io_timeout},
  };
  for (const auto& d : durations) {
    if (d.out == &sweep_value && sweep.empty()) continue;
    auto value = ParseDuration(d.text);
    if (!value) {
      std::cerr << "idemproof-ref: " << d.name << " '" << d.text
                << "' is not a duration like 250ms, 30s, 24h\n";
      return {std::nullopt, 2};
    }
    *d.out = *value;
  }
  o.service.claim_race_pause = o.check_insert_pause;
  if (!sweep.empty()) {
    if (sweep_value.count() <= 0) {
      std::cerr << "idemproof-ref: --sweep-interval must be positive\n";
      return {std::nullopt, 2};
    }
    o.sweep_interval = sweep_value;
  }
  if (o.service.lease.count() <= 0 || o.service.dedup_ttl.count() <= 0) {
    std::cerr << "idemproof-ref: --lease and --dedup-ttl must be positive\n";
    return {std::nullopt, 2};
  }
  if (o.io_timeout.count() <= 0) {
    std::cerr << "idemproof-ref: --io-timeout must be positive\n";
    return {std::nullopt, 2};
  }
  if (!o.store.empty() && !is_postgres_url(o.store)) {
    std::cerr << "idemproof-ref: --store '" << o.store << "' is not a postgres:// or postgresql:// URL\n";
    return {std::nullopt, 2};
  }
  if (!o.service.base_path.empty() &&
      (o.service.base_path.front() != '/' || o.service.base_path.back() == '/')) {
    std::cerr << "idemproof-ref: --base-path must start with '/' and not end with it\n";
    return {std::nullopt, 2};
  }
  return {o, 0};
}

}  // namespace idemproof::ref
