// Synchronized bursts: N requests released together on N connections, to make
// two identical requests arrive at the target "at the same instant".
//
// kLastByte, last-byte sync (the real thing): connect N sockets first, write all but the
// final `final_bytes` of each request, wait `settle` so the target has read
// and parked every partial request, then release the final bytes of all N
// from one thread: by default in one io_uring submit (the sends run back to
// back in the kernel, where this thread cannot be preempted between them),
// else (kSendLoop, or io_uring unavailable) in a tight send() loop. A request cannot be handled before its last
// byte arrives, so the spread between the first and the last complete request
// is the spread of N small send() calls, not of N connects.
// kThreads, naive threads (for contrast): N threads start together and each connects,
// writes its whole request and reads its answer.
//
// Each burst reports the spread it achieved: on the harness side, the time of
// the last final write minus the first (steady clock; for the io_uring
// release, the duration of the one submit, an upper bound); on the target side,
// when the target reports arrival times in the header named by
// `arrival_header` (steady-clock ns when the request was fully read, e.g. the
// reference service's --report-arrival), max - min of those.
//
// Every request gets an outcome: kAnswered (status, headers, body), kNotSent
// (it never went out complete: connect or write failed, so the target cannot
// have executed it) or kNoAnswer (it went out; no answer within the read
// deadline, or the connection broke: outcome unknown). Every connect, write
// and read has a deadline. Answers are read with Beast's HTTP parser.
//
// Thread-safety: fire_burst() is reentrant; it owns every socket and thread it
// uses and returns only after all are closed and joined.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "injectors/endpoint.h"
#include "injectors/fault_event.h"
#include "base/burst_mode.h"
#include "base/status.h"
#include "base/tls_options.h"

namespace idemproof::injectors {

using ::idemproof::BurstMode;  // kLastByte: last-byte sync; kThreads: naive threads
// How last-byte sync writes the final bytes (see above).
enum class BurstRelease { kIoUring, kSendLoop };
const char* to_string(BurstRelease release);

const char* to_string(BurstMode mode);
// "sync" / "last-byte" / "threads" / "naive"; invalid_config otherwise.
Result<BurstMode> parse_burst_mode(const std::string& text);

struct BurstOptions {
  Endpoint target;
  // One endpoint per request (several instances of a target, released
  // together); empty = every request goes to `target`.
  std::vector<Endpoint> targets;
  BurstMode mode = BurstMode::kLastByte;
  BurstRelease release = BurstRelease::kIoUring;  // last-byte sync only
  std::size_t final_bytes = 1;  // withheld per request until the release (>= 1)
  std::chrono::nanoseconds settle = std::chrono::milliseconds(5);
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);
  std::chrono::nanoseconds write_timeout = std::chrono::seconds(5);
  std::chrono::nanoseconds read_timeout = std::chrono::seconds(30);
  // The most of one answer body kept; a longer answer is read no further
  // (the connection is closed) and recorded truncated.
  std::size_t max_body = std::size_t{4} << 20;
  // Header in which the target reports when it read each request (steady
  // clock ns, same host); empty: the target reports none.
  std::string arrival_header;
  // Set: every connection speaks TLS (last-byte sync only). Each does its
  // handshake (SNI and verification as these say, ALPN http/1.1) and writes
  // its prefix as TLS records; the final bytes are sealed into one record
  // ahead of the release, and the release writes those record bytes raw
  // from the same loop (or io_uring submit) as plain bursts: the spread is
  // that of N small writes, as over plain TCP. A handshake that fails
  // verification is kNotSent with the TLS error: nothing was sent.
  std::optional<TlsOptions> tls = std::nullopt;
};

enum class BurstOutcome { kAnswered, kNotSent, kNoAnswer };

const char* to_string(BurstOutcome outcome);

struct BurstAnswer {
  BurstOutcome outcome = BurstOutcome::kNotSent;
  std::string error;  // why not answered
  int status = 0;
  HeaderList headers;
  std::string body;
  // The body went past max_body: `body` holds what was read (at most
  // max_body); body_size is the declared Content-Length (exact) or a lower bound.
  bool body_truncated = false;
  std::uint64_t body_size = 0;
  bool body_size_exact = false;
  std::int64_t sent_ns = 0;      // the request's final bytes were written (0: never)
  std::int64_t answered_ns = 0;  // the answer was fully read (0: never)
  std::optional<std::int64_t> arrival_ns;  // from options.arrival_header, if reported
};

struct BurstResult {
  BurstMode mode = BurstMode::kLastByte;
  BurstRelease release = BurstRelease::kSendLoop;  // what last-byte sync used
  std::vector<BurstAnswer> answers;  // one per request, in request order
  std::optional<std::int64_t> harness_spread_ns;  // needs >= 2 requests sent
  std::optional<std::int64_t> target_spread_ns;   // needs >= 2 arrivals reported
  std::size_t count(BurstOutcome outcome) const;
};

// Fires requests[i] (complete raw HTTP/1.1 requests, see format_request) on
// connection i. invalid_config for no requests or a request shorter than
// final_bytes + 1; resolve_failed for a bad target. Failures of the target are
// outcomes in the result, never errors.
Result<BurstResult> fire_burst(const std::vector<std::string>& requests, const BurstOptions& options);

// Raw HTTP/1.1 bytes for `request`: adds Host (`host`) and Content-Length
// when absent. Header order is kept.
std::string format_request(const RequestSnapshot& request, const std::string& host);

}  // namespace idemproof::injectors
