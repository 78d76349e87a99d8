// BatchRoutes: the reference service's rerunnable batch jobs, a
// RouteExtension (docs/reference-service.md, "Batch"):
//
//   POST /jobs/{job}/run     {"from": A, "to": B, "fail_after": K?}
//   GET  /jobs/{job}/result  [?rows=true]
//
// A run processes source rows [A, B) partition by partition (partition p
// holds rows [p*N, (p+1)*N), N = --batch-partition-rows). A partition whose
// range marker already covers its part of [A, B) is skipped; any other is
// (re)written by upsert and its marker written in the same transaction. A
// failed run leaves the rows it wrote of the partition it was in, unmarked:
// the rerun redoes that one partition by upsert and nothing else. Batch
// runs are keyed by their data range, never by the request table.
// `?slow_ms=N` on the run (0..600000): each partition's work takes N ms
// more, before its transaction (a kill then loses that partition's work only).
//
// BatchDiscipline selects one of the batch flaws instead (see flaw.h).
//
// Thread-safe: runs of different jobs proceed concurrently; runs of one job
// are serialised (a job is one process's work at a time).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/flaw.h"
#include "idemproof/ref/range_marker_store.h"
#include "idemproof/ref/route_extension.h"
#include "idemproof/ref/service_config.h"
#include "idemproof/ref/store.h"

namespace idemproof::ref {

enum class BatchDiscipline {
  range_markers,              // correct: a marker per (job, partition), upsert
  whole_batch_marker,         // the job is marked done when its run starts
  no_range_marker,            // no markers, plain inserts
  batch_id_in_request_table,  // the job id is a request-dedup key (TTL), plain inserts
  coarse_marker,              // one marker per whole run range, written at its end
  marker_before_rows,         // a partition's marker commits before its rows, in its own transaction
};

// The discipline a service flaw implies (range_markers for every other flaw).
BatchDiscipline batch_discipline_for(Flaw flaw);

struct BatchConfig {
  std::int64_t partition_rows = 10;
  std::int64_t max_run_rows = 1'000'000;  // a larger [from, to) is rejected (400)
  BatchDiscipline discipline = BatchDiscipline::range_markers;
};

class BatchRoutes final : public RouteExtension {
 public:
  // `service` gives the replay header, lease and TTL the request table uses
  // under batch-id-in-request-table. Every reference must outlive this object.
  BatchRoutes(BatchConfig config, const ServiceConfig& service, Store& requests, RangeMarkerStore& markers,
              const Clock& clock);

  std::optional<HttpResponse> route(const HttpRequest& request, std::string_view rel, const std::string& path,
                                    const std::string& query) override;

 private:
  HttpResponse run(const HttpRequest& request, const std::string& job, const std::string& query);
  HttpResponse result(const std::string& job, const std::string& query);
  std::mutex& job_mutex(const std::string& job);

  BatchConfig config_;
  const ServiceConfig& service_;
  Store& requests_;
  RangeMarkerStore& markers_;
  const Clock& clock_;
  std::mutex jobs_mu_;
  std::map<std::string, std::unique_ptr<std::mutex>> job_mus_;
};

}  // namespace idemproof::ref
