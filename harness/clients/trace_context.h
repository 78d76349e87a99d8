// W3C Trace Context (https://www.w3.org/TR/trace-context/): the
// `traceparent` header every request of a scenario run carries, so a
// target's own traces join the harness's timeline:
//   00-<trace id: 32 hex>-<span id: 16 hex>-01
// One trace id per scenario run, one span id per request.
//
// Thread-safety: NewSpanId() may be called from any thread.
#pragma once

#include <string>

namespace idemproof::runtime {

inline constexpr const char* kTraceparentHeader = "traceparent";
// The template variable holding the scenario run's trace id ({{trace_id}}):
// a request rendered with it set carries a traceparent (runtime/request_render).
inline constexpr const char* kTraceIdVariable = "trace_id";

// A 32-hex trace id derived from `seed_text` (the scenario run's name): the
// same run gets the same trace id; never all zeros.
std::string TraceIdFor(const std::string& seed_text);

// A fresh random 16-hex span id, never all zeros.
std::string NewSpanId();

// "00-TRACE-SPAN-01" (sampled).
std::string Traceparent(const std::string& trace_id, const std::string& span_id);

// Whether `value` is a well-formed version-00 traceparent: 00, a 32-hex
// non-zero trace id, a 16-hex non-zero span id, 2-hex flags (lowercase).
bool WellFormedTraceparent(const std::string& value);

}  // namespace idemproof::runtime
