#include "session/run_directory.h"
#include "model/results_json.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace idemproof::session {

namespace fs = std::filesystem;

namespace {

std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "scenario";
  return out;
}

}  // namespace

std::string RunDirectory::NewRunId(std::uint64_t seed) {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  char seed_hex[24];
  std::snprintf(seed_hex, sizeof seed_hex, "%llx", static_cast<unsigned long long>(seed));
  return std::string(buf) + "-s" + seed_hex;
}

Result<RunDirectory> RunDirectory::Create(const std::string& out_root, const std::string& run_id) {
  std::error_code ec;
  fs::create_directories(out_root, ec);
  if (ec) return Status::IoError("cannot create " + out_root + ": " + ec.message());
  fs::path root = fs::absolute(out_root, ec);
  // create_directory is the claim: two runs with one seed in one second
  // race for a name, and the loser takes the next suffix (an exists() check
  // first would let both pick the same one).
  fs::path dir = root / run_id;
  for (int i = 2;; ++i) {
    if (fs::create_directory(dir, ec)) break;
    if (ec && ec != std::errc::file_exists)
      return Status::IoError("cannot create " + dir.string() + ": " + ec.message());
    ec.clear();
    if (i > 10000) return Status::IoError("cannot create a run folder: " + dir.string() + " and 9999 more exist");
    dir = root / (run_id + "-" + std::to_string(i));
  }
  // Repoint `latest` atomically: a new link beside it, renamed over it.
  fs::path tmp = root / (".latest-" + dir.filename().string());
  fs::remove(tmp, ec);
  fs::create_directory_symlink(dir.filename(), tmp, ec);
  if (!ec) fs::rename(tmp, root / "latest", ec);
  if (ec) fs::remove(tmp, ec);  // a missing `latest` link is not worth failing a run
  return RunDirectory(dir.string());
}

std::string RunDirectory::id() const { return fs::path(path_).filename().string(); }

Result<std::string> RunDirectory::AddScenarioFolder(const std::string& name) {
  const std::string base = safe_name(name);
  std::string rel = base;
  for (int i = 2; scenario_folders_.count(rel) || rel == "latest" || rel == "target.yaml"; ++i) {
    rel = base + "-" + std::to_string(i);
  }
  std::error_code ec;
  fs::create_directories(fs::path(path_) / rel, ec);
  if (ec) return Status::IoError("cannot create " + Absolute(rel) + ": " + ec.message());
  scenario_folders_.insert(rel);
  return rel;
}

Status RunDirectory::CopyIn(const std::string& source, const std::string& relative) const {
  std::error_code ec;
  fs::copy_file(source, Absolute(relative), fs::copy_options::overwrite_existing, ec);
  if (ec) return Status::IoError("cannot copy " + source + " into the run directory: " + ec.message());
  return Status::Ok();
}

Status RunDirectory::WriteFile(const std::string& relative, const std::string& content) const {
  const std::string target = Absolute(relative);
  const std::string tmp = target + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("cannot write " + tmp);
    out << content;
    out.flush();
    if (!out) return Status::IoError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) return Status::IoError("cannot rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

Status RunDirectory::WriteHistory(const std::string& relative, const History& history) const {
  return WriteFile(relative, history.ToJsonl());
}

Status RunDirectory::WriteResults(const RunResults& results) const {
  return WriteRunResults(results, Absolute("results.json"));
}

}  // namespace idemproof::session
