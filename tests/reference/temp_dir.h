// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with everything
// in it when the object dies. Not thread-safe.
#pragma once

#include <filesystem>
#include <string>

namespace idemproof::ref::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace idemproof::ref::testing
