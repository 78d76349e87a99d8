// RecheckRunDirectory (`idemproof check`) over the literal run directories of
// tests/reports/data: their verdicts were computed by the real oracles, so a
// recheck gives them again; a gap the reports can live with is an error here.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "session/run_contents.h"
#include "session/session.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::testing;
namespace fs = std::filesystem;

namespace {

std::string DataRunCopy(const std::string& run) {
  const std::string dir = ScratchDir("recheck-" + run);
  fs::copy(SourceDir() + "/tests/reports/data/" + run, dir, fs::copy_options::recursive);
  return dir;
}

}  // namespace

TEST_CASE("check over a recorded run gives its recorded verdicts again", "[check]") {
  for (const std::string run : {"clean", "broken"}) {
    INFO(run);
    const std::string dir = SourceDir() + "/tests/reports/data/" + run;
    auto recorded = ReadRunDirectory(dir);
    REQUIRE(recorded.ok());
    auto again = session::RecheckRunDirectory(dir);
    REQUIRE(again.ok());
    REQUIRE(again->scenarios.size() == recorded->results.scenarios.size());
    for (std::size_t i = 0; i < again->scenarios.size(); ++i) {
      const ScenarioResult& was = recorded->results.scenarios[i];
      const ScenarioResult& is = again->scenarios[i];
      INFO(was.name);
      CHECK(is.events == static_cast<std::int64_t>(recorded->HistoryOf(i)->size()));
      // The data predate the faults_fired verdict, which a recheck adds:
      // every recorded verdict must come back with its status.
      for (const Verdict& v : was.verdicts) {
        INFO(v.oracle);
        auto same = std::find_if(is.verdicts.begin(), is.verdicts.end(),
                                 [&](const Verdict& w) { return w.oracle == v.oracle; });
        REQUIRE(same != is.verdicts.end());
        CHECK(same->status == v.status);
      }
    }
  }
}

TEST_CASE("check stops at a missing history, naming the file", "[check]") {
  const std::string dir = DataRunCopy("broken");
  const std::string missing = dir + "/identical-burst/history.jsonl";
  fs::remove(missing);
  auto again = session::RecheckRunDirectory(dir);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().ToString().find(missing) != std::string::npos);
}

TEST_CASE("check needs the run directory's copy of the target file", "[check]") {
  const std::string dir = DataRunCopy("clean");
  fs::remove(dir + "/target.yaml");
  auto again = session::RecheckRunDirectory(dir);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == StatusCode::kNotFound);
  CHECK(again.status().ToString().find(dir + "/target.yaml") != std::string::npos);
}
