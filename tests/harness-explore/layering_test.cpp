// The rooms' include direction (issue 45): explore depends on the step kinds,
// never the reverse, and the model (the ground floor) includes nothing of the
// rooms above it. The step kinds run through the runtime's StepContext, so
// harness/steps includes runtime headers by design; it may not include
// explore's.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Calls `visit(line, "FILE:LINE: line")` for every line of every file under `root`/`folder`.
template <typename Visit>
void ForEachLine(const fs::path& root, const std::string& folder, Visit visit) {
  for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      visit(line, fs::relative(e.path(), root).string() + ":" + std::to_string(n) + ": " + line);
  }
}

// "FILE:LINE: #include ..." for every include under `root`/`folder` of a
// header in one of `forbidden` (room folders, "explore/").
std::vector<std::string> ForbiddenIncludes(const fs::path& root, const std::string& folder,
                                           const std::vector<std::string>& forbidden) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> out;
  ForEachLine(root, folder, [&](const std::string& line, const std::string& where) {
    std::smatch m;
    if (!std::regex_search(line, m, kInclude)) return;
    std::string header = m[1].str();
    if (header.rfind("harness/", 0) == 0) header = header.substr(8);
    for (const auto& room : forbidden) {
      if (header.rfind(room, 0) == 0) out.push_back(where);
    }
  });
  return out;
}

// "FILE:LINE: ..." for every line of code (comments aside) under
// `root`/`folder` naming one of `names` ("runtime::", "namespace explore").
std::vector<std::string> ForbiddenNames(const fs::path& root, const std::string& folder,
                                        const std::vector<std::string>& names) {
  std::vector<std::string> out;
  ForEachLine(root, folder, [&](const std::string& line, const std::string& where) {
    const std::string code = line.substr(0, line.find("//"));
    for (const auto& name : names) {
      if (code.find(name) != std::string::npos) out.push_back(where);
    }
  });
  return out;
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("the step kinds include nothing of explore", "[layering]") {
  const auto found = ForbiddenIncludes(IDEMPROOF_SOURCE_DIR, "harness/steps", {"explore/"});
  INFO(Lines(found));
  CHECK(found.empty());
}

TEST_CASE("the model includes nothing of explore, the runtime or the step kinds", "[layering]") {
  const auto found = ForbiddenIncludes(IDEMPROOF_SOURCE_DIR, "harness/model", {"explore/", "runtime/", "steps/"});
  INFO(Lines(found));
  CHECK(found.empty());
}

// Not even forward-declared: the step kinds' interface (model/step_kind.h)
// is the model's own; its runtime half is runtime/step_execution.h.
TEST_CASE("the model names no explore or runtime type", "[layering]") {
  const auto found = ForbiddenNames(IDEMPROOF_SOURCE_DIR, "harness/model",
                                    {"explore::", "runtime::", "namespace explore", "namespace runtime"});
  INFO(Lines(found));
  CHECK(found.empty());
}

TEST_CASE("the layering check finds a forbidden include", "[layering]") {
  const fs::path root = fs::temp_directory_path() / ("idemproof-layering-" + std::to_string(::getpid()));
  fs::create_directories(root / "harness/steps");
  std::ofstream(root / "harness/steps/x_step.cpp") << "#include \"model/scenario.h\"\n"
                                                      "  # include \"explore/alphabet.h\"\n"
                                                      "#include \"runtime/step_context.h\"\n";
  const auto found = ForbiddenIncludes(root, "harness/steps", {"explore/"});
  fs::remove_all(root);
  REQUIRE(found.size() == 1);
  CHECK(found[0].rfind("harness/steps/x_step.cpp:2:", 0) == 0);
}
