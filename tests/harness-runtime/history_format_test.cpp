// A run directory written before histories had a format (format 1: a
// request's and an answer's headers as {name: value}, no "format" in
// results.json) is still read and re-checked. data/format-1-run is the
// lost-answer-retry row of a real run of the reference with the
// empty-replay flaw, written by the build of 2026-12-03 before format 2
// (idemproof run scenarios/gateway/lost-answer-retry.yaml --flaw
// empty-replay), trimmed to that row; only target.yaml lost its comments.
#include <algorithm>
#include <catch2/catch.hpp>

#include "model/operation.h"
#include "session/run_contents.h"
#include "session/session.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

std::string Format1Run() { return SourceDir() + "/tests/harness-runtime/data/format-1-run"; }

}  // namespace

TEST_CASE("a format-1 run directory reads with every header as the ordered list", "[check]") {
  auto contents = ReadRunDirectory(Format1Run());
  REQUIRE(contents.ok());
  CHECK(contents->Gaps().empty());
  CHECK(contents->results.format == 1);
  const History* history = contents->HistoryOf(0);
  REQUIRE(history != nullptr);
  int requests = 0, proxied = 0;
  for (const auto& e : history->events()) {
    for (const char* part : {"request", "response"}) {
      if (!e.value.contains(part) || !e.value[part].contains("headers")) continue;
      INFO(e.index << " " << part);
      CHECK(e.value[part]["headers"].is_array());
      ++(e.process == "proxy" ? proxied : requests);
    }
  }
  CHECK(requests >= 4);  // two sends and their answers, converted from objects
  CHECK(proxied >= 1);   // the proxy's record, a list already
  bool key_sent = false;
  for (const auto& op : RequestOperations(*history)) {
    const HeaderList sent = HeadersFromJson(op.invoke->value["request"]["headers"]);
    key_sent = key_sent || find_header(sent, "Idempotency-Key") == op.invoke->key;
  }
  CHECK(key_sent);
}

TEST_CASE("check over a format-1 run directory gives its recorded verdicts again", "[check]") {
  auto recorded = ReadRunDirectory(Format1Run());
  REQUIRE(recorded.ok());
  auto again = session::RecheckRunDirectory(Format1Run());
  INFO(again.status().ToString());
  REQUIRE(again.ok());
  REQUIRE(again->scenarios.size() == 1);
  const ScenarioResult& was = recorded->results.scenarios[0];
  const ScenarioResult& is = again->scenarios[0];
  REQUIRE(is.verdicts.size() == was.verdicts.size());
  for (std::size_t i = 0; i < was.verdicts.size(); ++i) {
    INFO(was.verdicts[i].oracle);
    CHECK(is.verdicts[i].oracle == was.verdicts[i].oracle);
    CHECK(is.verdicts[i].status == was.verdicts[i].status);
    CHECK(is.verdicts[i].evidence == was.verdicts[i].evidence);
  }
  // The flaw is still caught: the empty replay differs from the first answer.
  CHECK(is.Outcome(false) == VerdictStatus::kInvalid);
}
