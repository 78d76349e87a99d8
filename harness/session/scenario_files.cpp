#include "session/scenario_files.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace idemproof::session {

namespace fs = std::filesystem;

namespace {

bool is_yaml(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

constexpr int kMaxDepth = 64;

// A path that is neither a regular file nor a folder (a FIFO, a device, a
// socket, or a link to one) cannot be a scenario file: reading a FIFO would
// block, /dev/zero never ends, and skipping it would hide a scenario the user
// meant to run. `type` comes from stat (fs::status), which opens nothing.
Status NotRegularFile(const fs::path& p, fs::file_type type) {
  std::string what;
  switch (type) {
    case fs::file_type::fifo: what = "a FIFO"; break;
    case fs::file_type::character: what = "a character device"; break;
    case fs::file_type::block: what = "a block device"; break;
    case fs::file_type::socket: what = "a socket"; break;
    default: what = "an unknown kind of file"; break;
  }
  std::error_code ec;
  if (fs::is_symlink(p, ec)) {
    const fs::path to = fs::read_symlink(p, ec);
    if (!ec) what += " (a symbolic link to " + to.string() + ")";
  }
  return Status::InvalidArgument(p.string() + ": " + what + ", not a regular file; a scenario file must be one");
}

// Walks `dir` (canonical path `real`), following directory symlinks unless
// one leads back to a folder being walked: that loop is an error naming the
// link, where the recursive iterator would throw filesystem_error.
Status Walk(const fs::path& dir, const fs::path& real, std::vector<fs::path>& ancestors,
            std::vector<std::string>& files) {
  if (static_cast<int>(ancestors.size()) > kMaxDepth)
    return Status::InvalidArgument("scenario folders nest deeper than " + std::to_string(kMaxDepth) + " at " +
                                   dir.string());
  ancestors.push_back(real);
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::IoError("cannot read " + dir.string() + ": " + ec.message());
  std::vector<fs::directory_entry> entries;
  for (auto end = fs::directory_iterator(); it != end; it.increment(ec)) {
    if (ec) return Status::IoError("cannot read " + dir.string() + ": " + ec.message());
    entries.push_back(*it);
  }
  for (const auto& entry : entries) {
    const fs::path& p = entry.path();
    const bool is_dir = fs::is_directory(p, ec);  // follows links; a dangling or looping one is no folder
    if (is_dir) {
      if (p.filename() == "targets" || p.filename() == "explore") continue;
      const fs::path target = fs::canonical(p, ec);
      if (ec) return Status::IoError("cannot resolve " + p.string() + ": " + ec.message());
      if (std::find(ancestors.begin(), ancestors.end(), target) != ancestors.end())
        return Status::InvalidArgument("symbolic link loop: " + p.string() + " leads back to " + target.string());
      if (Status st = Walk(p, target, ancestors, files); !st.ok()) return st;
      continue;
    }
    if (fs::is_symlink(p, ec) && !fs::exists(p, ec)) {
      // ELOOP or a dangling link: say which, never skip silently.
      std::error_code why;
      (void)fs::canonical(p, why);
      if (is_yaml(p) || why == std::errc::too_many_symbolic_link_levels)
        return Status::InvalidArgument("broken symbolic link " + p.string() + ": " +
                                       (why ? why.message() : "it points nowhere"));
      continue;
    }
    if (!is_yaml(p)) continue;
    const fs::file_status status = fs::status(p, ec);  // follows links, opens nothing
    if (ec) return Status::IoError("cannot read " + p.string() + ": " + ec.message());
    if (!fs::is_regular_file(status)) return NotRegularFile(p, status.type());
    files.push_back(p.lexically_normal().string());
  }
  ancestors.pop_back();
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> CollectScenarioFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);  // follows links, opens nothing
    if (fs::is_regular_file(status)) {
      files.push_back(fs::path(path).lexically_normal().string());
      continue;
    }
    if (!fs::is_directory(status)) {
      if (fs::exists(status)) return NotRegularFile(path, status.type());
      if (fs::is_symlink(path, ec)) return Status::InvalidArgument("broken or looping symbolic link: " + path);
      return Status::NotFound("no such file or directory: " + path);
    }
    const fs::path real = fs::canonical(path, ec);
    if (ec) return Status::IoError("cannot resolve " + path + ": " + ec.message());
    std::vector<fs::path> ancestors;
    if (Status st = Walk(path, real, ancestors, files); !st.ok()) return st;
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

bool GlobMatches(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

}  // namespace idemproof::session
