// Test support: the literal run directories under tests/reports/data, golden
// file comparison, scratch folders, and an XML well-formedness check.
#pragma once

#include <filesystem>
#include <string>

namespace idemproof::testing {

// <source>/tests/reports/data/<run>.
std::filesystem::path DataRun(const std::string& run);
// <source>/tests/reports/golden.
std::filesystem::path GoldenDir();

std::string ReadText(const std::filesystem::path& path);

// How often `what` occurs in `text` (non-overlapping).
int Count(const std::string& text, const std::string& what);
void WriteText(const std::filesystem::path& path, const std::string& text);

// Compares `actual` with the golden file; with IDEMPROOF_UPDATE_GOLDEN=1 set,
// rewrites the golden file instead. Fails the current test on a difference,
// naming the first differing line and where the actual output was saved.
void CheckGolden(const std::filesystem::path& golden, const std::string& actual);

// A fresh folder under the build tree, removed when it goes out of scope.
struct ScratchDir {
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  std::filesystem::path path;
};

// A copy of data/<run> in a scratch folder (the reports write into it).
std::filesystem::path CopyRun(const std::string& run, const ScratchDir& scratch);

// True when some start tag in `text` (HTML/SVG markup) carries an on*=
// event-handler attribute. Quoted attribute values are skipped, so escaped
// text that merely reads "onerror=" does not count.
bool HasEventHandlerAttribute(const std::string& text);

// "" when `text` is well-formed XML; else the parser's message.
std::string XmlProblem(const std::string& text);

}  // namespace idemproof::testing
