// heal(): no listening socket, no thread, no connection left; also when the
// scope that armed the faults is left by an exception.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <chrono>
#include <thread>

#include <future>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <yaml-cpp/yaml.h>

#include "injectors/chaos_proxy.h"
#include "injectors/fault_event.h"
#include "injectors/registry.h"
#include "support/counting_upstream.h"
#include "support/test_client.h"

using namespace idemproof::injectors;
using idemproof::Result;
using idemproof::Status;
using idemproof::StatusCode;
using idemproof::testkit::CountingUpstream;
using idemproof::testkit::TestClient;

namespace {

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(d);
  }
  return n;
}

// The thread count once it reaches `want`, or after 2 s: a joined thread's
// task can stay listed in /proc a moment after pthread_join returned.
int thread_count_settled(int want) {
  int n = thread_count();
  for (int i = 0; i < 200 && n != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = thread_count();
  }
  return n;
}

bool accepts_connections(std::uint16_t port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

std::unique_ptr<Injector> build(const std::string& yaml) {
  Registry r;
  register_builtin_injectors(r);
  auto built = r.build(YAML::Load(yaml));
  REQUIRE(built.ok());
  return std::move(built.value());
}

}  // namespace

TEST_CASE("heal closes the listener and every connection and joins the thread", "[injectors][heal]") {
  const int baseline = thread_count();
  std::uint16_t port = 0;
  {
    CountingUpstream upstream;
    FaultEventLog events;
    ChaosProxy proxy({{"127.0.0.1", 0}, {"127.0.0.1", upstream.port()}}, &events);
    REQUIRE(proxy.start().ok());
    port = proxy.endpoint().port;
    CHECK(port != 0);
    CHECK(proxy.running());
    ActiveFaults faults({&proxy, &events});
    REQUIRE(faults.start(build("drop-response: {mode: hold, match: {path: /hold}}")).ok());

    TestClient idle;  // an open keep-alive connection with nothing in flight
    REQUIRE(idle.send("GET", "http://127.0.0.1:" + std::to_string(port) + "/x").answered);
    // A connection held by the fault, its client still waiting (deadline 20 s).
    auto held = std::async(std::launch::async, [port] {
      TestClient c;
      return c.send("GET", "http://127.0.0.1:" + std::to_string(port) + "/hold", {}, "", 20000);
    });
    for (int i = 0; i < 2500 && events.size() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(events.size() == 2);  // start + injected (recorded before holding)
    CHECK(proxy.counters().connections_open == 2);

    const auto t0 = std::chrono::steady_clock::now();
    CHECK(proxy.heal());  // drained, not forced
    auto waited = held.get();
    CHECK_FALSE(waited.answered);  // the held client is released by heal, not by its deadline
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    CHECK_FALSE(proxy.running());
    CHECK(proxy.counters().connections_open == 0);
    CHECK_FALSE(accepts_connections(port));
    CHECK(proxy.heal());  // idempotent
    CHECK(proxy.start().code() == StatusCode::kInternal);
  }
  CHECK_FALSE(accepts_connections(port));
  CHECK(thread_count_settled(baseline) == baseline);
}

TEST_CASE("a scope left by an exception heals its faults and its proxy", "[injectors][heal]") {
  const int baseline = thread_count();
  FaultEventLog events;
  std::uint16_t port = 0;
  CountingUpstream upstream;
  const int with_upstream = thread_count();
  CHECK(with_upstream > baseline);
  try {
    ChaosProxy proxy({{"127.0.0.1", 0}, {"127.0.0.1", upstream.port()}}, &events);
    REQUIRE(proxy.start().ok());
    port = proxy.endpoint().port;
    ActiveFaults faults({&proxy, &events});
    REQUIRE(faults.start(build("delay: {duration: 10ms}")).ok());
    TestClient c;
    REQUIRE(c.send("GET", "http://127.0.0.1:" + std::to_string(port) + "/x").answered);
    throw std::runtime_error("a step failed");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(accepts_connections(port));
  std::vector<std::string> phases;
  for (const auto& e : events.snapshot()) phases.push_back(e.phase);
  CHECK(phases == std::vector<std::string>{"start", "injected", "heal"});
  upstream.stop();
  CHECK(thread_count_settled(baseline) == baseline);
}

TEST_CASE("the proxy reports bind errors as values", "[injectors][heal]") {
  ChaosProxy first({{"127.0.0.1", 0}, {"127.0.0.1", 9}}, nullptr);
  REQUIRE(first.start().ok());
  ChaosProxy second({{"127.0.0.1", first.endpoint().port}, {"127.0.0.1", 9}}, nullptr);
  Status st = second.start();
  CHECK(st.code() == StatusCode::kUnavailable);
  ChaosProxy bad({{"not-an-address", 0}, {"127.0.0.1", 9}}, nullptr);
  CHECK(bad.start().code() == StatusCode::kUnavailable);
}
