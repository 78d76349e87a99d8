// The tcp faults (injectors/tcp_fault.h) against a real TCP echo server on
// loopback, through the TcpFaultProxy and the tcp registry: bytes go
// through, then the fault's effect, then it heals (its window, or heal()).
// Every socket wait has a deadline (the rig: support/tcp_rig.h).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/tcp_rig.h"

using namespace idemproof::injectors;
using namespace idemproof::tcp_rig;
using namespace std::chrono_literals;

TEST_CASE("the six tcp faults are registered apart from the http ones", "[injectors][tcp]") {
  Registry r;
  register_builtin_tcp_faults(r);
  CHECK(r.kinds() == std::vector<std::string>{"cut-after", "latency", "pause", "refuse", "reset", "store-error"});
}

TEST_CASE("tcp pause holds the bytes both ways for its window, then they flow", "[injectors][tcp]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.connected());
  REQUIRE(c.Echoes("before"));
  auto pause = Build("pause: {window: 400ms}");
  REQUIRE(pause->start(rig.context()).ok());
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(c.Send("held"));
  CHECK(c.Recv(4, 150ms).end == Client::Read::kTimeout);  // nothing through while paused
  auto late = c.Recv(4, 3000ms);
  CHECK(late.bytes == "held");  // not lost: delivered once the window ended
  CHECK(std::chrono::steady_clock::now() - t0 >= 350ms);
  CHECK(AwaitEvent(rig.events, "heal") == "window of 400ms ended");
  CHECK(AwaitEvent(rig.events, "injected").find("held connection 1") == 0);
  CHECK(c.Echoes("after"));
  CHECK(pause->counters().fired());
}

TEST_CASE("tcp pause without a window lasts until healed", "[injectors][tcp]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.Echoes("x"));
  auto pause = Build("pause");
  REQUIRE(pause->start(rig.context()).ok());
  REQUIRE(c.Send("y"));
  CHECK(c.Recv(1, 200ms).end == Client::Read::kTimeout);
  pause->heal();
  CHECK(c.Recv(1, 2000ms).bytes == "y");
  CHECK(AwaitEvent(rig.events, "heal") == "healed");
}

TEST_CASE("tcp refuse closes new connections at once for its window, open ones go on", "[injectors][tcp]") {
  Rig rig;
  Client open(rig.port());
  REQUIRE(open.Echoes("open"));
  auto refuse = Build("refuse: {window: 400ms}");
  REQUIRE(refuse->start(rig.context()).ok());
  {
    Client fresh(rig.port());
    REQUIRE(fresh.connected());  // accepted, then closed: the service sees EOF
    CHECK(fresh.Recv(1, 1000ms).end == Client::Read::kEof);
  }
  CHECK(open.Echoes("still"));
  CHECK(AwaitEvent(rig.events, "heal") == "window of 400ms ended");
  Client after(rig.port());
  REQUIRE(after.Send("healed"));
  auto r = after.Recv(6, 2000ms);
  INFO("read '" << r.bytes << "', end " << r.end << ", events " << rig.events.size());
  CHECK(r.bytes == "healed");
  CHECK(refuse->counters().counts.injected == 1);
}

TEST_CASE("tcp refuse with how: reset answers new connections with RST", "[injectors][tcp]") {
  Rig rig;
  auto refuse = Build("refuse: {how: reset}");
  REQUIRE(refuse->start(rig.context()).ok());
  Client fresh(rig.port());
  CHECK(fresh.Recv(1, 1000ms).end == Client::Read::kReset);
  refuse->heal();
  Client after(rig.port());
  CHECK(after.Echoes("healed"));
}

TEST_CASE("tcp reset sends RST on every open connection and new ones, then heals", "[injectors][tcp]") {
  Rig rig;
  Client a(rig.port()), b(rig.port());
  REQUIRE(a.Echoes("a"));
  REQUIRE(b.Echoes("b"));
  auto reset = Build("reset: {window: 400ms}");
  REQUIRE(reset->start(rig.context()).ok());
  CHECK(a.Recv(1, 1000ms).end == Client::Read::kReset);
  CHECK(b.Recv(1, 1000ms).end == Client::Read::kReset);
  CHECK(AwaitEvent(rig.events, "injected") == "reset 2 open connection(s) (RST)");
  {
    Client fresh(rig.port());  // no send: a send could meet the RST first and clear it
    CHECK(fresh.Recv(1, 1000ms).end == Client::Read::kReset);
  }
  CHECK(AwaitEvent(rig.events, "heal") == "window of 400ms ended");
  Client after(rig.port());
  CHECK(after.Echoes("healed"));
}

TEST_CASE("tcp cut-after forwards N bytes, then closes the connection", "[injectors][tcp]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.Echoes("through"));  // counted from the arming, not the connection's start
  auto cut = Build("cut-after: {bytes: 5, direction: downstream}");
  REQUIRE(cut->start(rig.context()).ok());
  REQUIRE(c.Send("hello world"));  // the store's echo is cut after its first 5 bytes
  auto r = c.Recv(11, 2000ms);
  CHECK(r.bytes == "hello");
  CHECK(r.end == Client::Read::kEof);
  CHECK(AwaitEvent(rig.events, "injected").find("cut connection 1 after 5 bytes store->service") == 0);
  cut->heal();
  Client after(rig.port());
  CHECK(after.Echoes("hello world"));
}

TEST_CASE("tcp cut-after upstream ends the connection once N bytes went to the store", "[injectors][tcp]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.Echoes("through"));
  auto cut = Build("cut-after: {bytes: 0, direction: upstream}");
  REQUIRE(cut->start(rig.context()).ok());
  REQUIRE(c.Send("query"));
  auto r = c.Recv(5, 2000ms);
  CHECK(r.bytes.empty());  // nothing reached the store, so nothing came back
  CHECK(r.end == Client::Read::kEof);
  CHECK(AwaitEvent(rig.events, "injected") == "cut connection 1 after 0 bytes service->store (5 bytes dropped)");
  cut->heal();
  Client after(rig.port());
  CHECK(after.Echoes("hello world"));
}

TEST_CASE("tcp latency holds every chunk for its delay, in order, and heals by flushing", "[injectors][tcp]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.Echoes("before"));
  auto latency = Build("latency: {delay: 200ms, direction: upstream}");
  REQUIRE(latency->start(rig.context()).ok());
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(c.Send("one,"));
  std::this_thread::sleep_for(50ms);
  REQUIRE(c.Send("two,"));
  REQUIRE(c.Send("three"));
  CHECK(c.Recv(4, 120ms).end == Client::Read::kTimeout);  // still held
  auto r = c.Recv(13, 2000ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(r.bytes == "one,two,three");  // order kept
  CHECK(took >= 240ms);               // the second chunk was sent 50 ms later, held 200 ms
  CHECK(took < 800ms);
  CHECK(AwaitEvent(rig.events, "injected").find("delayed connection 1 (service->store") == 0);
  // Healing flushes what is held at once, then bytes flow undelayed.
  REQUIRE(c.Send("held"));
  std::this_thread::sleep_for(20ms);
  latency->heal();
  CHECK(c.Recv(4, 100ms).bytes == "held");
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(c.Echoes("after"));
  CHECK(std::chrono::steady_clock::now() - t1 < 100ms);
}

TEST_CASE("tcp reset drops what latency still holds for the connection it resets", "[injectors][tcp]") {
  Rig rig;
  Client c(rig.port());
  REQUIRE(c.Echoes("before"));
  auto latency = Build("latency: {delay: 300ms}");
  REQUIRE(latency->start(rig.context()).ok());
  REQUIRE(c.Send("in flight"));
  std::this_thread::sleep_for(50ms);  // read by the proxy, held
  auto reset = Build("reset: {window: 200ms}");
  REQUIRE(reset->start(rig.context()).ok());  // both in force at once
  auto r = c.Recv(9, 1000ms);
  CHECK(r.bytes.empty());  // never reached the store, so never echoed
  CHECK(r.end == Client::Read::kReset);
  latency->heal();
  CHECK(AwaitEvent(rig.events, "heal").size() > 0);
  std::this_thread::sleep_for(250ms);  // the reset's window ended
  Client after(rig.port());
  CHECK(after.Echoes("healed"));
}

TEST_CASE("tcp fault options are checked, the http selectors refused, at line:column", "[injectors][tcp]") {
  CHECK(BuildError("cut-after: {direction: upstream}").message().find("'bytes' is required") != std::string::npos);
  CHECK(BuildError("cut-after: {bytes: 3, direction: sideways}").message().find("expected upstream, downstream or both") !=
        std::string::npos);
  CHECK(BuildError("latency: {window: 1s}").message().find("'delay' is required") != std::string::npos);
  CHECK(BuildError("latency: {delay: 10ms, direction: up}").message().find("expected upstream, downstream or both") !=
        std::string::npos);
  CHECK(BuildError("pause: {window: 0}").message().find("window: must be more than 0") != std::string::npos);
  const auto match = BuildError("refuse:\n  window: 1s\n  match: {path: /x}\n");
  CHECK(match.message().find("there is no request to select") != std::string::npos);
  REQUIRE(match.mark());
  CHECK(match.mark()->line == 3);
  CHECK(BuildError("reset: {windw: 1s}").message().find("windw") != std::string::npos);
  // A tcp fault on an http hop (no tcp proxy in the context) does not start.
  auto pause = Build("pause");
  auto st = pause->start(InjectorContext{});
  CHECK(st.code() == idemproof::StatusCode::kInvalidConfig);
  CHECK(st.message().find("protocol: tcp") != std::string::npos);
}
