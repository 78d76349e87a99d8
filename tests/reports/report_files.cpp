#include "report_files.h"

#include <boost/property_tree/detail/rapidxml.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <vector>
#include <sstream>

namespace idemproof::testing {

namespace fs = std::filesystem;

fs::path DataRun(const std::string& run) { return fs::path(IDEMPROOF_SOURCE_DIR) / "tests/reports/data" / run; }
fs::path GoldenDir() { return fs::path(IDEMPROOF_SOURCE_DIR) / "tests/reports/golden"; }

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

void CheckGolden(const fs::path& golden, const std::string& actual) {
  const char* update = std::getenv("IDEMPROOF_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    WriteText(golden, actual);
    WARN("golden file rewritten: " << golden.string());
    return;
  }
  INFO("golden file " << golden.string() << " (IDEMPROOF_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(fs::exists(golden));
  const std::string expected = ReadText(golden);
  if (expected == actual) return;
  const fs::path saved = fs::path(IDEMPROOF_BINARY_DIR) / "tests/reports/actual" / fs::relative(golden, GoldenDir());
  WriteText(saved, actual);
  std::istringstream e(expected), a(actual);
  std::string le, la;
  int line = 0;
  while (true) {
    ++line;
    bool he = static_cast<bool>(std::getline(e, le)), ha = static_cast<bool>(std::getline(a, la));
    if (!he && !ha) break;
    if (le != la || he != ha) {
      FAIL("differs from golden at line " << line << "\n  golden: " << le.substr(0, 300) << "\n  actual: "
                                          << la.substr(0, 300) << "\n  (actual saved to " << saved.string()
                                          << "; diff -u the two)");
    }
  }
  FAIL("differs from golden (line endings?); actual saved to " << saved.string());
}

ScratchDir::ScratchDir(const std::string& name) {
  path = fs::path(IDEMPROOF_BINARY_DIR) / "tests/reports/scratch" / name;
  std::error_code ec;
  fs::remove_all(path, ec);
  fs::create_directories(path);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

fs::path CopyRun(const std::string& run, const ScratchDir& scratch) {
  const fs::path to = scratch.path / run;
  fs::copy(DataRun(run), to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return to;
}

bool HasEventHandlerAttribute(const std::string& text) {
  static const std::regex tag("<[a-zA-Z][^>]*>");
  static const std::regex quoted("\"[^\"]*\"|'[^']*'");
  static const std::regex handler("\\son[a-zA-Z]+\\s*=", std::regex::icase);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string bare = std::regex_replace(it->str(), quoted, "\"\"");
    if (std::regex_search(bare, handler)) return true;
  }
  return false;
}

std::string XmlProblem(const std::string& text) {
  // Boost's bundled rapidxml, with closing tags validated (read_xml does not).
  namespace rx = boost::property_tree::detail::rapidxml;
  static const std::regex bad_ampersand("&(?!(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)");
  if (std::regex_search(text, bad_ampersand)) return "a bare '&' that is no entity";
  std::vector<char> buffer(text.begin(), text.end());
  buffer.push_back('\0');
  try {
    rx::xml_document<char> doc;
    doc.parse<rx::parse_validate_closing_tags>(buffer.data());
    if (doc.first_node() == nullptr) return "no root element";
    return "";
  } catch (const rx::parse_error& e) {
    return std::string(e.what()) + " near: " + std::string(e.where<char>()).substr(0, 80);
  }
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace idemproof::testing
