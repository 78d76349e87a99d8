// The recipe of injectors/tcp_fault.h ("Adding a fault"), held: a tcp fault
// defined here, in the test (its options, parse, on_chunk: what would be its
// header and .cpp in injectors/tcp_faults/), registered with the one line
// add_tcp_fault<F>, is built from YAML (its options checked at line:column)
// and acts on the bytes of a real loopback connection through the
// TcpFaultProxy, beside a built-in one, until healed. Nothing in injectors/
// names it.
#include <catch2/catch.hpp>

#include <cctype>
#include <string>

#include "support/tcp_rig.h"

using namespace idemproof::injectors;
using namespace idemproof::tcp_rig;
using namespace std::chrono_literals;

namespace {

// TEST-ONLY fault `upper`: rewrites every letter it forwards in the chosen
// `direction` (default both) to upper case, in place; records its first
// chunk on each connection. A behaviour no built-in fault has.
struct UpperOptions {
  std::optional<std::chrono::nanoseconds> window;
  TcpDirections directions;
};

class Upper final : public TcpFault {
 public:
  static constexpr const char* kKind = "upper";
  static UpperOptions parse(YamlOptions& options) { return {ReadTcpWindow(options), ReadTcpDirection(options)}; }

  explicit Upper(UpperOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  void on_chunk(TcpChunk& chunk) const override {
    if (!options_.directions.has(chunk.direction())) return;
    for (char& c : chunk.bytes()) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (chunk.first_on_link())
      chunk.record("uppercased connection " + std::to_string(chunk.link().id()) + " (" +
                   TcpDirectionName(chunk.direction()) + ")");
  }

 private:
  UpperOptions options_;
};

// The registration line of the recipe, beside the built-ins.
Registry WithUpper() {
  Registry r;
  register_builtin_tcp_faults(r);
  REQUIRE(add_tcp_fault<Upper>(r).ok());
  return r;
}

std::unique_ptr<Injector> BuildWithUpper(const std::string& yaml) {
  auto built = WithUpper().build(YAML::Load(yaml));
  REQUIRE(built.ok());
  return std::move(built.value());
}

}  // namespace

TEST_CASE("a tcp fault defined in a test, registered in one line, acts through a real proxy", "[injectors][tcp]") {
  const Registry r = WithUpper();
  CHECK(r.kinds() == std::vector<std::string>{"cut-after", "latency", "pause", "refuse", "reset", "store-error", "upper"});

  Rig rig;
  Client c(rig.port());
  REQUIRE(c.connected());
  REQUIRE(c.Echoes("before"));  // not armed: bytes as sent
  auto upper = BuildWithUpper("upper: {direction: upstream}");
  REQUIRE(upper->start(rig.context()).ok());
  REQUIRE(c.Send("hello, store"));
  CHECK(c.Recv(12, 2000ms).bytes == "HELLO, STORE");  // rewritten on its way to the store, echoed as it arrived
  CHECK(AwaitEvent(rig.events, "injected") == "uppercased connection 1 (service->store)");
  CHECK(upper->counters().counts.injected == 1);  // once per connection

  // Beside a built-in: the cut-after armed later shortens what upper rewrote.
  auto cut = BuildWithUpper("cut-after: {bytes: 3, direction: downstream}");
  REQUIRE(cut->start(rig.context()).ok());
  REQUIRE(c.Send("abcdef"));
  auto r2 = c.Recv(6, 2000ms);
  CHECK(r2.bytes == "ABC");
  CHECK(r2.end == Client::Read::kEof);
  cut->heal();

  upper->heal();
  CHECK(AwaitEvent(rig.events, "heal") == "healed");
  Client after(rig.port());
  CHECK(after.Echoes("quiet again"));
}

TEST_CASE("a test-defined tcp fault's options are checked like a built-in's", "[injectors][tcp]") {
  const Registry r = WithUpper();
  auto bad = r.build(YAML::Load("upper:\n  direction: sideways\n"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("expected upstream, downstream or both") != std::string::npos);
  REQUIRE(bad.status().mark());
  CHECK(bad.status().mark()->line == 2);
  auto typo = r.build(YAML::Load("upper: {windw: 1s}"));
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().message().find("windw") != std::string::npos);
}
