// The counting oracles' premise (issue 16, path 3): a service that executed
// nothing — every request 401 or 302 — is never judged valid; refusals the
// scenario asked for (missing key, another payload) still are judged.
#include <catch2/catch.hpp>

#include "literal_history.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {
const Answer kUnauthorized{401, R"({"title":"missing auth"})"};
const Answer kRedirect{302, "", {{"Location", "/login"}}};
}  // namespace

TEST_CASE("one_record: every request refused with 401 or 302 and no record is unknown: nothing executed") {
  for (const Answer& refusal : {kUnauthorized, kRedirect}) {
    LiteralHistory h;
    for (int i = 0; i < 8; ++i) h.Send("burst-" + std::to_string(i), "create_order", "k1", "b1", 0, 10 + i, refusal);
    h.Records("create_order", "b1", 0, 100);
    Verdict v = RunOracle("one_record", h.history());
    CHECK(v.status == VerdictStatus::kUnknown);
    CHECK(v.evidence.find("nothing executed") != std::string::npos);
    CHECK(v.evidence.find(std::to_string(refusal.status) + " x8") != std::string::npos);
  }
}

TEST_CASE("one_record: a refusal the scenario asked for (missing key) with no record is still valid") {
  LiteralHistory h;
  h.Send("client-0", "create_order", "", "b1", 0, 10, Answer{400, "{}"}).Records("create_order", "b1", 0, 100);
  CHECK(RunOracle("one_record", h.history()).status == VerdictStatus::kValid);
}

TEST_CASE("in_progress: a burst answered 401 throughout is unknown: nothing executed") {
  LiteralHistory h;
  for (int i = 0; i < 8; ++i) h.Send("burst-" + std::to_string(i), "create_order", "k1", "b1", 0, 10 + i, kUnauthorized);
  h.Records("create_order", "b1", 0, 100);
  Verdict v = RunOracle("in_progress", h.history());
  CHECK(v.status == VerdictStatus::kUnknown);
  CHECK(v.evidence.find("nothing executed") != std::string::npos);
}
