#include "runtime/scenario_files.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace idemproof::runtime {

namespace fs = std::filesystem;

namespace {

bool is_yaml(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

}  // namespace

Result<std::vector<std::string>> CollectScenarioFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
      files.push_back(fs::path(path).lexically_normal().string());
      continue;
    }
    if (!fs::is_directory(path, ec)) return Status::NotFound("no such file or directory: " + path);
    fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec);
    if (ec) return Status::IoError("cannot read " + path + ": " + ec.message());
    for (auto end = fs::recursive_directory_iterator(); it != end; it.increment(ec)) {
      if (ec) return Status::IoError("cannot read " + path + ": " + ec.message());
      if (it->is_directory() && (it->path().filename() == "targets" || it->path().filename() == "explore")) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && is_yaml(it->path())) {
        files.push_back(it->path().lexically_normal().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

bool GlobMatches(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

}  // namespace idemproof::runtime
