// `idemproof discover` end to end against the reference service (real
// processes, loopback HTTP): the correct service shows the contract its
// target file declares (exit 0), and a flaw that skips the mismatch check is
// reported as a difference (exit 1), each within the request bound.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

const std::string kSource = IDEMPROOF_SOURCE_DIR;
const std::string kBuild = IDEMPROOF_BINARY_DIR;

struct Ran {
  int exit_code = -1;
  std::string out;
};

// Runs `idemproof discover` on the reference target; stdout and stderr together.
Ran Discover(const std::string& flaw) {
  const std::string out_dir = kBuild + "/test-harness-discover/runs-" + std::to_string(::getpid());
  fs::create_directories(out_dir);
  std::string command = kBuild + "/harness/cli/idemproof discover --target " + kSource +
                        "/scenarios/targets/reference.yaml --build-dir " + kBuild + " --out " + out_dir;
  if (!flaw.empty()) command += " --flaw " + flaw;
  command += " 2>&1";
  Ran ran;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) ran.out.append(buffer, n);
  const int status = ::pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

// "sent N request(s)" as printed.
int SentIn(const std::string& out) {
  const std::string marker = "sent ";
  const std::size_t at = out.find(marker);
  if (at == std::string::npos) return -1;
  return std::stoi(out.substr(at + marker.size()));
}

}  // namespace

TEST_CASE("discover on the reference proposes its declared contract, and reports the no-fingerprint flaw",
          "[discover][slow]") {
  const Ran correct = Discover("");
  INFO(correct.out);
  CHECK(correct.exit_code == 0);
  CHECK(correct.out.find("matches the target file") != std::string::npos);
  CHECK(correct.out.find(" replay: {header: Idempotent-Replayed, value: \"true\"}") != std::string::npos);
  const int sent = SentIn(correct.out);
  CHECK(sent > 10);
  CHECK(sent <= 60);

  const Ran flawed = Discover("no-fingerprint");
  INFO(flawed.out);
  CHECK(flawed.exit_code == 1);
  CHECK(flawed.out.find("-  mismatch: 422") != std::string::npos);
  CHECK(flawed.out.find("no refusal seen") != std::string::npos);
}
