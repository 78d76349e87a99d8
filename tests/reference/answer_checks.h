// Checks of the reference's answers that several integration test files
// share (Catch2 assertions, so only for test cases).
#pragma once

#include <catch2/catch.hpp>

#include <vector>

#include "order_api.h"

namespace idemproof::ref::testing {

inline bool is_replay(const HttpResult& r) { return r.header("idempotent-replayed") == "true"; }

// `results` answer identical requests: exactly one is an original 201, every
// other one a 409 problem or a byte-for-byte replay of that original.
inline void check_one_execution(const std::vector<HttpResult>& results) {
  std::vector<const HttpResult*> originals;
  for (const auto& r : results) {
    if (r.status == 201 && !is_replay(r)) originals.push_back(&r);
  }
  REQUIRE(originals.size() == 1);
  for (const auto& r : results) {
    INFO("status " << r.status << " error " << r.error << " body " << r.body);
    if (&r == originals.front()) continue;
    if (r.status == 409) {
      CHECK(is_problem(r, 409));
    } else {
      CHECK(r.status == 201);
      CHECK(is_replay(r));
      CHECK(r.body == originals.front()->body);
    }
  }
}

}  // namespace idemproof::ref::testing
