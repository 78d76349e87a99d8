// Comparing two answers for one idempotency key, as the oracles and metrics
// do: same status, same body minus the declared volatile JSON paths (JSON
// bodies compared as JSON, others byte for byte), same declared headers
// (names case-insensitive; every value of a repeated one, in order; absent
// on both sides counts as equal). The evidence names the difference: the
// JSON path of the first differing member with both values, and shows the
// bodies cut around it rather than at their start.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/json_path.h"
#include "model/operation.h"

namespace idemproof {

// Human-readable differences, empty when the answers are equal:
// "status 200 != 201", "body differs at $.order.status: \"paid\" → \"cancelled\"",
// "header Location 'x' != 'y'" (the later answer's value first, as the
// status and header phrases always did; the body's path reads first → later).
std::vector<std::string> AnswerDifferences(const HttpAnswer& first, const HttpAnswer& later,
                                           const std::vector<JsonPath>& volatile_paths,
                                           const std::vector<std::string>& compare_headers);

// Bodies equal minus volatile paths (JSON when both parse, else bytes).
bool BodiesEqual(const std::string& a, const std::string& b, const std::vector<JsonPath>& volatile_paths);

// Where two bodies first differ (minus volatile paths). JSON bodies: the
// path of the first differing member (members in name order, elements in
// index order) and both values there; other bodies: the first differing
// byte. `first_at` / `later_at` are byte offsets into the raw bodies to cut
// evidence around.
struct BodyDifference {
  std::string path;           // "$.order.status"; "" when the bodies are not both JSON
  std::string first, later;   // the values at `path` as JSON text, cut; "<absent>" when missing
  std::size_t first_at = 0, later_at = 0;
  // "$.order.status: \"paid\" → \"cancelled\"", or "byte 120".
  std::string Text() const;
};
std::optional<BodyDifference> FirstBodyDifference(const std::string& first, const std::string& later,
                                                  const std::vector<JsonPath>& volatile_paths);

// "201 {\"id\":7,...}" with the body cut to max_body characters.
std::string AnswerSummary(const HttpAnswer& answer, std::size_t max_body = 100);
// The same, the body cut to max_body characters around byte `at` ("..." on
// each side cut; never inside a UTF-8 character).
std::string AnswerSummaryAround(const HttpAnswer& answer, std::size_t at, std::size_t max_body = 100);

// Both answers summarised for evidence that compares them: each body cut
// around their first difference (AnswerSummary when the bodies are equal).
struct ComparedSummaries {
  std::string first, later;
};
ComparedSummaries SummariesAroundDifference(const HttpAnswer& first, const HttpAnswer& later,
                                            const std::vector<JsonPath>& volatile_paths,
                                            std::size_t max_body = 100);

}  // namespace idemproof
