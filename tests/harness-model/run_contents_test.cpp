// ReadRunDirectory over the literal run directories in tests/reports/data:
// a complete one as it is, and copies of it with a file removed or spoiled.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "session/run_contents.h"

using namespace idemproof;
namespace fs = std::filesystem;

namespace {

fs::path DataRun(const std::string& run) { return fs::path(IDEMPROOF_SOURCE_DIR) / "tests/reports/data" / run; }

// A fresh copy of data/<run> under the build tree, removed at scope exit;
// named by pid too, as ctest -j runs cases (each its own process) at once.
struct RunCopy {
  explicit RunCopy(const std::string& run)
      : path(fs::path(IDEMPROOF_BINARY_DIR) / "test-scratch" /
             ("run-contents-" + run + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path.parent_path());
    fs::copy(DataRun(run), path, fs::copy_options::recursive);
  }
  ~RunCopy() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

std::string ReadText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces line `line` (1-based) of `file` with `text`.
void SpoilLine(const fs::path& file, int line, const std::string& text) {
  std::istringstream in(ReadText(file));
  std::string out, current;
  for (int n = 1; std::getline(in, current); ++n) out += (n == line ? text : current) + "\n";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << out;
}

std::size_t IndexOf(const RunDirectoryContents& contents, const std::string& scenario) {
  for (std::size_t i = 0; i < contents.results.scenarios.size(); ++i) {
    if (contents.results.scenarios[i].name == scenario) return i;
  }
  FAIL("no scenario " << scenario << " in " << contents.path);
  return 0;
}

}  // namespace

TEST_CASE("a complete run directory is read whole: results, the target copy, every history", "[run_contents]") {
  const std::string dir = DataRun("clean").string();
  auto contents = ReadRunDirectory(dir);
  REQUIRE(contents.ok());
  CHECK(contents->path == dir);
  CHECK(contents->results.run_id == "20240501-121500-s2a");
  REQUIRE(contents->results.scenarios.size() == 4);
  CHECK(contents->target_copied);
  CHECK(contents->target_file == (fs::path(dir) / "target.yaml").string());
  REQUIRE(contents->target.has_value());
  CHECK(contents->target->name == contents->results.target_name);
  CHECK(contents->target_error.ok());
  CHECK(contents->history_errors.empty());
  CHECK(contents->Gaps().empty());
  for (std::size_t i = 0; i < contents->results.scenarios.size(); ++i) {
    const ScenarioResult& s = contents->results.scenarios[i];
    INFO(s.name);
    const History* history = contents->HistoryOf(i);
    REQUIRE(history != nullptr);
    const std::string jsonl = ReadText(fs::path(dir) / s.history_file);
    CHECK(history->size() == static_cast<std::size_t>(std::count(jsonl.begin(), jsonl.end(), '\n')));
    CHECK(contents->ScenarioCopyOf(i) == (fs::path(dir) / s.name / (s.name + ".yaml")).string());
    CHECK(fs::exists(contents->ScenarioCopyOf(i)));
  }
}

TEST_CASE("a missing history is an error naming its file, the rest is still read", "[run_contents]") {
  RunCopy run("clean");
  const fs::path missing = run.path / "double-submit" / "history.jsonl";
  fs::remove(missing);
  auto contents = ReadRunDirectory(run.path.string());
  REQUIRE(contents.ok());
  const std::size_t i = IndexOf(*contents, "double-submit");
  CHECK(contents->HistoryOf(i) == nullptr);
  REQUIRE(contents->history_errors.count(i) == 1);
  const Status& error = contents->history_errors.at(i);
  CHECK(error.code() == StatusCode::kIoError);
  CHECK(error.ToString().find(missing.string()) != std::string::npos);
  CHECK(contents->history_errors.size() == 1);
  CHECK(contents->histories.size() == contents->results.scenarios.size() - 1);
  const std::vector<std::string> gaps = contents->Gaps();
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].find("history of double-submit not read") != std::string::npos);
  CHECK(gaps[0].find(missing.string()) != std::string::npos);
}

TEST_CASE("a corrupt history line is an error at file:line", "[run_contents]") {
  RunCopy run("clean");
  const fs::path file = run.path / "identical-burst" / "history.jsonl";
  SpoilLine(file, 3, "{\"index\": 2, \"type\": ");
  auto contents = ReadRunDirectory(run.path.string());
  REQUIRE(contents.ok());
  const std::size_t i = IndexOf(*contents, "identical-burst");
  REQUIRE(contents->history_errors.count(i) == 1);
  const Status& error = contents->history_errors.at(i);
  REQUIRE(error.mark().has_value());
  CHECK(error.mark()->file == file.string());
  CHECK(error.mark()->line == 3);
  CHECK(contents->HistoryOf(i) == nullptr);
}

TEST_CASE("a corrupt results.json line fails the read at file:line:column", "[run_contents]") {
  RunCopy run("clean");
  const fs::path file = run.path / "results.json";
  // Line 4 is `  "flaw": "",`; the value becomes a bare word.
  REQUIRE(ReadText(file).find("\n  \"flaw\": \"\",\n") != std::string::npos);
  SpoilLine(file, 4, "  \"flaw\": oops,");
  auto contents = ReadRunDirectory(run.path.string());
  REQUIRE_FALSE(contents.ok());
  const Status error = contents.status();
  CHECK(error.code() == StatusCode::kInvalidArgument);
  REQUIRE(error.mark().has_value());
  CHECK(error.mark()->file == file.string());
  CHECK(error.mark()->line == 4);
  CHECK(error.mark()->column > 1);
  CHECK(error.ToString().rfind(file.string() + ":4:", 0) == 0);
}

TEST_CASE("results.json that is JSON but no results document names the file", "[run_contents]") {
  RunCopy run("clean");
  const fs::path file = run.path / "results.json";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "{\"scenarios\": []}\n";  // no run_id
  auto contents = ReadRunDirectory(run.path.string());
  REQUIRE_FALSE(contents.ok());
  CHECK(contents.status().code() == StatusCode::kInvalidArgument);
  CHECK(contents.status().ToString().rfind(file.string() + ": ", 0) == 0);
}

TEST_CASE("a folder without results.json is not a run directory", "[run_contents]") {
  RunCopy run("clean");
  fs::remove(run.path / "results.json");
  auto contents = ReadRunDirectory(run.path.string());
  REQUIRE_FALSE(contents.ok());
  CHECK(contents.status().code() == StatusCode::kNotFound);
  CHECK(contents.status().message().find("no results.json") != std::string::npos);
}

TEST_CASE("without the target copy the file results.json names is read, and said so", "[run_contents]") {
  RunCopy run("clean");
  const fs::path original = run.path / "original-target.yaml";
  fs::rename(run.path / "target.yaml", original);
  const fs::path results_file = run.path / "results.json";
  auto doc = nlohmann::json::parse(ReadText(results_file));
  doc["target"]["file"] = original.string();
  std::ofstream(results_file, std::ios::binary | std::ios::trunc) << doc.dump(2);

  auto contents = ReadRunDirectory(run.path.string());
  REQUIRE(contents.ok());
  CHECK_FALSE(contents->target_copied);
  CHECK(contents->target_file == original.string());
  CHECK(contents->target.has_value());
  CHECK(contents->Gaps().empty());

  SECTION("and when that file is gone too, the error names it") {
    fs::remove(original);
    auto again = ReadRunDirectory(run.path.string());
    REQUIRE(again.ok());
    CHECK_FALSE(again->target.has_value());
    CHECK(again->target_error.code() == StatusCode::kIoError);
    CHECK(again->target_error.ToString().find(original.string()) != std::string::npos);
    REQUIRE(again->Gaps().size() == 1);
    CHECK(again->Gaps()[0].find("target file not read") != std::string::npos);
    CHECK(again->histories.size() == again->results.scenarios.size());
  }
}
