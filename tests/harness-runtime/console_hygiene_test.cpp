// What the `idemproof` executable shows a user before and while it runs a
// target file from elsewhere (issue 43): the commands the file makes it run,
// listed before the first starts (`run --dry-run` lists them and starts
// none), and no control sequence from the file reaching the terminal.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "runtime/target_process.h"
#include "test_support.h"

using namespace idemproof::testing;
namespace fs = std::filesystem;

namespace {

const std::string kCreateOrder =
    "actions:\n"
    "  create_order:\n"
    "    role: create\n"
    "    request: {method: POST, path: /orders, json: {biz_no: \"{{biz}}\"}}\n"
    "    records: {request: {method: GET, path: \"/orders?biz_no={{biz}}\"}, count: \"$.count\"}\n";

// A target started by `start_argv` (a YAML flow sequence), which never comes up.
std::string StartedTarget(const std::string& start_argv, const std::string& extra = "") {
  return "name: marker\n"
         "base_url: \"http://127.0.0.1:{{port}}\"\n"
         "start:\n"
         "  argv: " + start_argv + "\n"
         "  free_port: true\n"
         "  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 2s}\n"
         "request_timeout: 2s\n" +
         kCreateOrder + extra;
}

void CopyDoubleSubmit(const std::string& dir) {
  fs::create_directories(dir + "/scenarios");
  fs::copy_file(SourceDir() + "/scenarios/client/double-submit.yaml", dir + "/scenarios/double-submit.yaml");
}

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

}  // namespace

TEST_CASE("run --dry-run lists every command of the target file and the rows and starts none", "[cli][slow]") {
  const std::string dir = ScratchDir("dry-run");
  WriteFile(dir + "/target.yaml",
            StartedTarget("[sh, -c, \"touch " + dir + "/MARKER\"]",
                          "services:\n"
                          "  stub: {argv: [sh, -c, \"touch " + dir + "/SERVICE\"], env: {STUB_MODE: \"on; off\"}}\n"
                          "hooks:\n"
                          "  heal: {command: [sh, -c, \"touch " + dir + "/HOOK\"]}\n"));
  CopyDoubleSubmit(dir);
  const CliResult r = RunIdemproof(
      {"run", dir + "/scenarios", "--target", dir + "/target.yaml", "--out", dir + "/runs", "--dry-run"}, dir,
      std::chrono::seconds(60));
  INFO(Diagnose(r));
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(dir + "/MARKER"));
  CHECK_FALSE(fs::exists(dir + "/SERVICE"));
  CHECK_FALSE(fs::exists(dir + "/HOOK"));
  CHECK_FALSE(fs::exists(dir + "/runs"));  // not even a run directory
  // Each command with where the file declares it, quoted as a shell reads it.
  CHECK(r.out.find("start (" + dir + "/target.yaml:4:3): sh -c 'touch " + dir + "/MARKER'") != std::string::npos);
  CHECK(r.out.find("services.stub.start") != std::string::npos);
  CHECK(r.out.find(": sh -c 'touch " + dir + "/SERVICE'") != std::string::npos);
  CHECK(r.out.find("env 'STUB_MODE=on; off'") != std::string::npos);
  CHECK(r.out.find("hooks.heal") != std::string::npos);
  CHECK(r.out.find(": sh -c 'touch " + dir + "/HOOK'") != std::string::npos);
  // What the run would do: its rows.
  CHECK(r.out.find("will run 1 row(s):\n  client/double-submit[create_order]") != std::string::npos);

  SECTION("a bad target file is exit 2, and nothing runs") {
    WriteFile(dir + "/bad.yaml", StartedTarget("[sh, -c, \"touch " + dir + "/MARKER\"]") + "unknown_key: 1\n");
    const CliResult bad = RunIdemproof(
        {"run", dir + "/scenarios", "--target", dir + "/bad.yaml", "--out", dir + "/runs", "--dry-run"}, dir,
        std::chrono::seconds(60));
    INFO(Diagnose(bad));
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("bad.yaml:") != std::string::npos);
    CHECK_FALSE(fs::exists(dir + "/MARKER"));
  }
}

TEST_CASE("run prints the target file's commands on stderr before it starts the first", "[cli][slow]") {
  const std::string dir = ScratchDir("commands-first");
  // The start command itself checks that the harness's stderr (cli-N.err,
  // test_support.h) already lists it: it touches MARKER only then.
  const std::string token = "listed-before-start-7f3a";
  WriteFile(dir + "/target.yaml",
            StartedTarget("[sh, -c, \"grep -qsF " + token + " " + dir + "/cli-*.err && touch " + dir + "/MARKER\"]"));
  CopyDoubleSubmit(dir);
  const CliResult r = RunIdemproof({"run", dir + "/scenarios", "--target", dir + "/target.yaml", "--out", dir + "/runs"},
                                   dir, std::chrono::seconds(120));
  INFO(Diagnose(r));
  CHECK(r.exit_code == 3);  // the target never comes up
  CHECK(r.err.find("start (" + dir + "/target.yaml:4:3): sh -c 'grep -qsF " + token) != std::string::npos);
  CHECK(fs::exists(dir + "/MARKER"));  // it ran, after the list was on stderr
}

// Issue 43: `discover` printed the target's name raw, so an OSC title or a
// colour from a target file reached the terminal.
TEST_CASE("an ESC in a target name or an action name reaches no output of discover or lint or run", "[cli][slow]") {
  const std::string dir = ScratchDir("esc-name");
  auto port = idemproof::runtime::FreeLoopbackPort();  // nothing listens there
  REQUIRE(port.ok());
  const std::string base = "base_url: \"http://127.0.0.1:" + std::to_string(*port) + "\"\nrequest_timeout: 2s\n";
  // YAML's "\e" is ESC, "\a" BEL: an OSC title change and a colour.
  WriteFile(dir + "/name.yaml", "name: \"evil\\e]0;pwned\\a\\e[31mred\"\n" + base + kCreateOrder);
  std::string action = kCreateOrder;
  action.replace(action.find("create_order:"), 13, "\"create\\e]0;pwned\\a\\e[31m\":");
  WriteFile(dir + "/action.yaml", "name: plain\n" + base + action);
  CopyDoubleSubmit(dir);
  for (const std::string file : {"name.yaml", "action.yaml"}) {
    const std::string target = dir + "/" + file;
    const std::vector<std::vector<std::string>> commands = {
        {"lint", dir + "/scenarios", "--target", target},
        {"discover", "--target", target, "--out", dir + "/runs"},
        {"run", dir + "/scenarios", "--target", target, "--out", dir + "/runs"},
        {"run", dir + "/scenarios", "--target", target, "--out", dir + "/runs", "--dry-run"},
    };
    for (const auto& args : commands) {
      const CliResult r = RunIdemproof(args, dir, std::chrono::seconds(120));
      INFO(file << ": " << args[0] << (args.back() == "--dry-run" ? " --dry-run" : "") << "\n" << Diagnose(r));
      CHECK(r.exit_code != -1);
      CHECK(r.out.find('\x1b') == std::string::npos);
      CHECK(r.err.find('\x1b') == std::string::npos);
      CHECK(r.out.find('\x07') == std::string::npos);
      CHECK(r.err.find('\x07') == std::string::npos);
      // The text is shown, escaped: the name did load with its ESC.
      CHECK((r.out + r.err).find("\\x1b]0;pwned\\x07\\x1b[31m") != std::string::npos);
    }
  }
}
