#include "idemproof/ref/batch_job.h"

#include <algorithm>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/problem.h"
#include "idemproof/ref/chaos_control.h"
#include "idemproof/ref/random_token.h"
#include "base/query_string.h"

namespace idemproof::ref {
namespace {

using nlohmann::json;
constexpr const char* kRouteRun = "/jobs/{job}/run";

HttpResponse method_not_allowed(const std::string& allow) {
  auto r = problem_response(405, "method-not-allowed", "Method not allowed", "allowed: " + allow);
  r.set_header("Allow", allow);
  return r;
}

std::optional<std::int64_t> row_field(const json& j, const char* f) {
  if (!j.contains(f) || !j[f].is_number_integer()) return std::nullopt;
  if (j[f].is_number_unsigned() && j[f].get<std::uint64_t>() > 1'000'000'000'000ULL) return std::nullopt;
  const auto n = j[f].get<std::int64_t>();
  if (n < 0 || n > 1'000'000'000'000) return std::nullopt;
  return n;
}

// The run's progress: rows written so far, and the injected failure.
struct RunState {
  std::string job;
  std::int64_t run = 0;
  std::optional<std::int64_t> fail_after;
  std::int64_t written = 0;
  std::int64_t processed = 0;  // partitions (or ranges) written
  std::int64_t skipped = 0;

  // True when the next row may not be written: the fault fires.
  bool must_fail() const { return fail_after && written >= *fail_after; }
};

HttpResponse failed(const RunState& s) {
  HttpResponse r = problem_response(500, "batch-failed", "Batch run failed",
                                    "injected failure after " + std::to_string(s.written) +
                                        " rows (fail_after); rerun the job to finish it");
  json body = json::parse(r.body);
  body["job"] = s.job;
  body["run"] = s.run;
  body["rows_written"] = s.written;
  r.body = body.dump();
  return r;
}

HttpResponse completed(const RunState& s, std::int64_t from, std::int64_t to) {
  return json_response(200, {{"job", s.job},
                             {"run", s.run},
                             {"from", from},
                             {"to", to},
                             {"status", "complete"},
                             {"rows_written", s.written},
                             {"partitions_processed", s.processed},
                             {"partitions_skipped", s.skipped}});
}

}  // namespace

BatchDiscipline batch_discipline_for(Flaw flaw) {
  switch (flaw) {
    case Flaw::whole_batch_marker: return BatchDiscipline::whole_batch_marker;
    case Flaw::no_range_marker: return BatchDiscipline::no_range_marker;
    case Flaw::batch_id_in_request_table: return BatchDiscipline::batch_id_in_request_table;
    case Flaw::coarse_marker: return BatchDiscipline::coarse_marker;
    case Flaw::marker_before_rows: return BatchDiscipline::marker_before_rows;
    default: return BatchDiscipline::range_markers;
  }
}

BatchRoutes::BatchRoutes(BatchConfig config, const ServiceConfig& service, Store& requests,
                         RangeMarkerStore& markers, const Clock& clock)
    : config_(config), service_(service), requests_(requests), markers_(markers), clock_(clock) {}

std::optional<HttpResponse> BatchRoutes::route(const HttpRequest& request, std::string_view rel,
                                               const std::string& path, const std::string& query) {
  if (!rel.starts_with("/jobs/")) return std::nullopt;
  std::string_view rest = rel.substr(6);
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string job(rest.substr(0, slash));
  const std::string_view action = rest.substr(slash);
  static const std::regex kJob("[A-Za-z0-9_.-]{1,128}");
  if (action != "/run" && action != "/result") return std::nullopt;
  if (!std::regex_match(job, kJob)) {
    return problem_response(404, "not-found", "Not found", path + " does not exist (a job name is 1-128 of A-Z a-z 0-9 _ . -)");
  }
  if (action == "/run") {
    if (request.method != "POST") return method_not_allowed("POST");
    return run(request, job, query);
  }
  if (request.method != "GET") return method_not_allowed("GET");
  return result(job, query);
}

std::mutex& BatchRoutes::job_mutex(const std::string& job) {
  std::lock_guard lock(jobs_mu_);
  auto& m = job_mus_[job];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

HttpResponse BatchRoutes::run(const HttpRequest& request, const std::string& job, const std::string& query) {
  ChaosForStep chaos;
  if (auto error = request_chaos(query, chaos)) {
    return problem_response(400, "invalid-chaos", "Invalid chaos settings", *error);
  }
  json body = json::parse(request.body, nullptr, false);
  std::optional<std::int64_t> from, to, fail_after;
  bool fail_ok = true;
  if (body.is_object()) {
    from = row_field(body, "from");
    to = row_field(body, "to");
    if (body.contains("fail_after") && !body["fail_after"].is_null()) {
      fail_after = row_field(body, "fail_after");
      fail_ok = fail_after.has_value();
    }
  }
  if (body.is_discarded()) {
    return problem_response(400, "malformed-json", "Malformed JSON", "the request body is not a JSON document");
  }
  if (!from || !to || *to <= *from || *to - *from > config_.max_run_rows || !fail_ok) {
    return problem_response(400, "invalid-run", "Invalid run",
                            "expected {\"from\": integer >= 0, \"to\": integer > from, at most " +
                                std::to_string(config_.max_run_rows) +
                                " rows, \"fail_after\": integer >= 0 (optional)}");
  }
  std::lock_guard job_lock(job_mutex(job));

  if (config_.discipline == BatchDiscipline::batch_id_in_request_table) {
    // The flaw: the job id is a request-dedup key, recorded before any work
    // under the request TTL, and reruns are answered from the request table.
    const TimePoint now = clock_.now();
    const RequestScope scope{"POST", kRouteRun, job};
    const Lease lease{random_token(), saturating_add(now, service_.lease)};
    const ClaimOutcome outcome = requests_.claim(ClaimRequest{scope, "", lease, now});
    if (outcome.kind == ClaimKind::completed) {
      const StoredResponse& stored = *outcome.existing->response;
      HttpResponse r;
      r.status = stored.status;
      r.body = stored.body;
      r.set_header("Content-Type", stored.content_type);
      r.set_header(service_.replay_header, "true");
      return r;
    }
    if (outcome.kind == ClaimKind::in_progress || outcome.kind == ClaimKind::mismatch) {
      auto r = problem_response(409, "request-in-progress", "Request in progress", "job " + job + " is running");
      r.set_header("Retry-After", "1");
      return r;
    }
    const json accepted = {{"job", job}, {"status", "accepted"}};
    requests_.transact([&](StoreTransaction& tx) {
      return tx.complete(scope, lease.owner,
                         StoredResponse{202, std::string(kJsonContentType), "", accepted.dump()}, now,
                         saturating_add(now, service_.effective_dedup_ttl()), Fencing::by_owner);
    });
  }

  RunState s;
  s.job = job;
  s.run = markers_.start_run(job);
  s.fail_after = fail_after;
  const std::string done_at = format_rfc3339(clock_.now());
  const auto rows_of = [&](std::int64_t lo, std::int64_t hi, std::vector<BatchRow>& out) {
    // Transforms rows [lo, hi) until the fault fires; true when all were done.
    for (std::int64_t id = lo; id < hi; ++id) {
      if (s.must_fail()) return false;
      out.push_back(transform_source_row(id, s.run));
      ++s.written;
    }
    return true;
  };

  // Each partition's own work (slow_ms), before anything of it is written.
  const auto work = [&] {
    if (chaos.delay.count() > 0) std::this_thread::sleep_for(chaos.delay);
  };
  switch (config_.discipline) {
    case BatchDiscipline::range_markers:
    case BatchDiscipline::marker_before_rows: {
      const std::int64_t n = config_.partition_rows;
      for (std::int64_t p = *from / n; p * n < *to; ++p) {
        const std::int64_t lo = std::max(*from, p * n), hi = std::min(*to, (p + 1) * n);
        const std::string part = std::to_string(p);
        if (auto m = markers_.marker(job, part); m && m->from <= lo && m->to >= hi) {
          ++s.skipped;
          continue;
        }
        std::vector<BatchRow> rows;
        const bool whole = rows_of(lo, hi, rows);
        if (!whole) {
          if (!rows.empty()) markers_.write(job, rows, RowWrite::upsert, std::nullopt);
          return failed(s);
        }
        const RangeMarker marker{part, lo, hi, hi - lo, rows_checksum(rows), done_at, s.run};
        if (config_.discipline == BatchDiscipline::marker_before_rows) {
          // The flaw: "done" commits first; a crash during the work leaves the
          // partition marked with no rows, and the rerun skips it.
          markers_.write(job, {}, RowWrite::upsert, marker);
          work();
          markers_.write(job, rows, RowWrite::upsert, std::nullopt);
        } else {
          work();
          markers_.write(job, rows, RowWrite::upsert, marker);
        }
        ++s.processed;
      }
      return completed(s, *from, *to);
    }
    case BatchDiscipline::whole_batch_marker: {
      if (markers_.marker(job, "job")) {
        ++s.skipped;
        return completed(s, *from, *to);
      }
      // The flaw: "done" is claimed for the whole job before any row is written.
      markers_.write(job, {}, RowWrite::upsert, RangeMarker{"job", *from, *to, *to - *from, "", done_at, s.run});
      break;
    }
    case BatchDiscipline::coarse_marker: {
      const std::string part = std::to_string(*from) + "-" + std::to_string(*to);
      if (markers_.marker(job, part)) {
        ++s.skipped;
        return completed(s, *from, *to);
      }
      break;
    }
    case BatchDiscipline::no_range_marker:
    case BatchDiscipline::batch_id_in_request_table:
      break;
  }

  // The flawed disciplines write the whole range, partition-sized chunk by chunk.
  const RowWrite how = (config_.discipline == BatchDiscipline::no_range_marker ||
                        config_.discipline == BatchDiscipline::batch_id_in_request_table)
                           ? RowWrite::insert
                           : RowWrite::upsert;
  std::vector<BatchRow> all;
  for (std::int64_t lo = *from; lo < *to; lo += config_.partition_rows) {
    const std::int64_t hi = std::min(*to, lo + config_.partition_rows);
    std::vector<BatchRow> rows;
    const bool whole = rows_of(lo, hi, rows);
    work();
    if (!rows.empty()) markers_.write(job, rows, how, std::nullopt);
    if (!whole) return failed(s);
    all.insert(all.end(), rows.begin(), rows.end());
    ++s.processed;
  }
  if (config_.discipline == BatchDiscipline::coarse_marker) {
    const std::string part = std::to_string(*from) + "-" + std::to_string(*to);
    markers_.write(job, {}, RowWrite::upsert, RangeMarker{part, *from, *to, *to - *from, rows_checksum(all), done_at, s.run});
  }
  return completed(s, *from, *to);
}

HttpResponse BatchRoutes::result(const std::string& job, const std::string& query) {
  const auto runs = markers_.runs(job);
  if (!runs) return problem_response(404, "not-found", "Not found", "job " + job + " has never run");
  const auto with_rows = query_parameter(query, "rows");
  const auto rows = markers_.rows(job);
  std::int64_t amount = 0, fee = 0;
  json items = json::array();
  for (const auto& r : rows) {
    amount += r.amount;
    fee += r.fee;
    if (with_rows == "true") items.push_back(batch_row_to_json(r));
  }
  // ?checksum=sum: each marker's checksum is an integer, the sum of the
  // amounts of the rows in its range (a target whose checksums are numbers).
  const bool summed = query_parameter(query, "checksum") == "sum";
  json markers = json::array();
  for (const auto& m : markers_.markers(job)) {
    json marker = range_marker_to_json(m);
    if (summed) {
      std::int64_t sum = 0;
      for (const auto& r : rows)
        if (r.id >= m.from && r.id < m.to) sum += r.amount;
      marker["checksum"] = sum;
    }
    markers.push_back(std::move(marker));
  }
  json out = {{"job", job},
              {"runs", *runs},
              {"totals", {{"rows", rows.size()}, {"amount", amount}, {"fee", fee}}},
              {"digest", rows_checksum(rows)},
              {"markers", markers}};
  if (with_rows == "true") out["rows"] = items;
  return json_response(200, out);
}

}  // namespace idemproof::ref
