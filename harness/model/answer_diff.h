// Comparing two answers for one idempotency key, as the oracles and metrics
// do: same status, same body minus the declared volatile JSON paths (JSON
// bodies compared as JSON, others byte for byte), same declared headers
// (names case-insensitive; every value of a repeated one, in order; absent
// on both sides counts as equal).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "model/json_path.h"
#include "model/operation.h"

namespace idemproof {

// Human-readable differences, empty when the answers are equal:
// "status 200 != 201", "body differs", "header Location 'x' != 'y'".
std::vector<std::string> AnswerDifferences(const HttpAnswer& first, const HttpAnswer& later,
                                           const std::vector<JsonPath>& volatile_paths,
                                           const std::vector<std::string>& compare_headers);

// Bodies equal minus volatile paths (JSON when both parse, else bytes).
bool BodiesEqual(const std::string& a, const std::string& b, const std::vector<JsonPath>& volatile_paths);

// "201 {\"id\":7,...}" with the body cut to max_body characters.
std::string AnswerSummary(const HttpAnswer& answer, std::size_t max_body = 100);

}  // namespace idemproof
