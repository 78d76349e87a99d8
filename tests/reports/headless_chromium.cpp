#include "headless_chromium.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace idemproof::testing {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "idemproof-chromium-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// Runs chromium with `args` (after the fixed flags), stdout into `stdout_file`.
Status RunChromium(const std::vector<std::string>& args, const std::string& stdout_file,
                   std::chrono::seconds deadline) {
  auto exe = FindChromium();
  if (!exe.ok()) return exe.status();
  TempDir profile;
  if (profile.path.empty()) return Status::IoError("cannot create a Chromium profile folder");
  std::vector<std::string> argv = {*exe,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + (profile.path / "profile").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string stderr_file = (profile.path / "stderr.txt").string();

  pid_t pid = ::fork();
  if (pid < 0) return Status::Internal("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: the renderer and GPU children die with it
    int out = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before we may kill it
  const auto until = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < until) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);  // stragglers of the group, or Chromium itself on timeout
  if (!exited) ::waitpid(pid, &status, 0);
  if (!exited) {
    return Status(StatusCode::kTimeout, "chromium did not finish within " + std::to_string(deadline.count()) + "s");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(stderr_file);
    std::stringstream ss;
    ss << in.rdbuf();
    return Status(StatusCode::kProcessError, "chromium failed (status " + std::to_string(status) + "): " +
                                                 ss.str().substr(0, 2000));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> FindChromium() {
  const char* env = std::getenv("IDEMPROOF_CHROMIUM");
  std::string exe = (env != nullptr && *env != '\0') ? env : "/usr/bin/chromium";
  if (::access(exe.c_str(), X_OK) != 0) {
    return Status::NotFound("Chromium not found at " + exe +
                            ": it is a declared dependency of the report tests (scripts/setup.sh installs "
                            "Debian's `chromium`; or set IDEMPROOF_CHROMIUM)");
  }
  return exe;
}

Result<std::string> DumpDom(const std::string& file, std::chrono::seconds deadline) {
  TempDir out_dir;
  if (out_dir.path.empty()) return Status::IoError("cannot create a temp folder");
  const std::string out = (out_dir.path / "dom.html").string();
  Status s = RunChromium({"--dump-dom", "file://" + file}, out, deadline);
  if (!s.ok()) return s;
  std::ifstream in(out, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status Screenshot(const std::string& file, const std::string& png, std::chrono::seconds deadline,
                  const std::string& window) {
  TempDir out_dir;
  if (out_dir.path.empty()) return Status::IoError("cannot create a temp folder");
  std::error_code ec;
  fs::remove(png, ec);
  return RunChromium({"--screenshot=" + png, "--window-size=" + window, "--hide-scrollbars", "file://" + file},
                     (out_dir.path / "stdout.txt").string(), deadline);
}

Result<FirstScreen> MeasureFirstScreen(const std::string& file, std::chrono::seconds deadline) {
  const fs::path report(file);
  const fs::path wrapper = report.parent_path() / "first-screen-probe.html";
  {
    std::ofstream out(wrapper, std::ios::binary);
    out << "<!DOCTYPE html><html><body style=\"margin:0\">"
           "<iframe id=\"f\" style=\"width:1280px;height:800px;border:0\" src=\""
        << report.filename().string()
        << "\"></iframe><script>"
           "document.getElementById('f').onload = function () {"
           "  var d = this.contentDocument, out = {};"
           "  var b = function (id) { var e = d.getElementById(id); return e ? e.getBoundingClientRect().bottom : -1; };"
           "  out.headline_bottom = b('headline'); out.matrix_bottom = b('matrix');"
           "  out.scroll_width = d.documentElement.scrollWidth; out.client_width = d.documentElement.clientWidth;"
           "  var tallest = 0; d.querySelectorAll('td, th').forEach(function (c) {"
           "    tallest = Math.max(tallest, c.getBoundingClientRect().height); });"
           "  out.tallest_cell = tallest;"
           "  var cells = d.querySelectorAll('td, th');"
           "  cells.forEach(function (c) { c.style.overflowWrap = 'normal'; c.style.wordBreak = 'normal'; });"
           "  out.words_scroll_width = d.documentElement.scrollWidth;"
           "  var narrow = 0; cells.forEach(function (c) { if (c.scrollWidth > c.clientWidth + 1) narrow++; });"
           "  out.narrow_cells = narrow;"
           "  var over = []; d.querySelectorAll('body *').forEach(function (e) {"
           "    var r = e.getBoundingClientRect(); if (r.right > out.client_width + 0.5 && over.length < 6)"
           "      over.push(e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).replace(/[^a-z0-9_-]/gi, '') : '') +"
           "                ' right ' + Math.round(r.right)); });"
           "  out.overflowing = over.join(', ');"
           "  document.body.setAttribute('data-measure', JSON.stringify(out));"
           "};</script></body></html>";
    if (!out) return Status::IoError("cannot write " + wrapper.string());
  }
  TempDir out_dir;
  if (out_dir.path.empty()) return Status::IoError("cannot create a temp folder");
  const std::string dom_file = (out_dir.path / "dom.html").string();
  Status s = RunChromium({"--allow-file-access-from-files", "--dump-dom", "file://" + fs::absolute(wrapper).string()},
                         dom_file, deadline);
  std::error_code ec;
  fs::remove(wrapper, ec);
  if (!s.ok()) return s;
  std::ifstream in(dom_file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string dom = ss.str();
  const std::string attr = "data-measure=\"";
  const std::size_t at = dom.find(attr);
  if (at == std::string::npos) return Status::Internal("the probe page measured nothing: " + dom.substr(0, 400));
  std::string json = dom.substr(at + attr.size(), dom.find('"', at + attr.size()) - at - attr.size());
  for (std::size_t p; (p = json.find("&quot;")) != std::string::npos;) json.replace(p, 6, "\"");
  auto number = [&](const std::string& key) {
    const std::size_t k = json.find("\"" + key + "\":");
    return k == std::string::npos ? -1.0 : std::stod(json.substr(k + key.size() + 3));
  };
  FirstScreen m;
  m.headline_bottom = number("headline_bottom");
  m.matrix_bottom = number("matrix_bottom");
  m.scroll_width = number("scroll_width");
  m.client_width = number("client_width");
  m.tallest_cell = number("tallest_cell");
  m.words_scroll_width = number("words_scroll_width");
  m.narrow_cells = number("narrow_cells");
  const std::string over_key = "\"overflowing\":\"";
  if (const std::size_t k = json.find(over_key); k != std::string::npos)
    m.overflowing = json.substr(k + over_key.size(), json.find('"', k + over_key.size()) - k - over_key.size());
  return m;
}

}  // namespace idemproof::testing
