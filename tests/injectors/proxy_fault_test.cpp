// Each proxy fault against a real upstream on loopback: its effect is seen on
// both sides (what the client got, what the upstream executed) and recorded.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
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
using idemproof::testkit::ClientAnswer;
using idemproof::testkit::header_value;
using idemproof::testkit::CountingUpstream;
using idemproof::testkit::TestClient;

namespace {

struct ProxyRig {
  CountingUpstream upstream;
  FaultEventLog events;
  ChaosProxy proxy{ProxySettings{{"127.0.0.1", 0}, {"127.0.0.1", upstream.port()},
                                 std::chrono::seconds(5)},
                   &events};
  ActiveFaults faults{InjectorContext{&proxy, &events}};
  Registry registry;
  TestClient client;

  ProxyRig() {
    register_builtin_injectors(registry);
    REQUIRE(proxy.start().ok());
  }
  InjectorCounters arm(const std::string& yaml) {
    auto injector = registry.build(YAML::Load(yaml));
    REQUIRE(injector.ok());
    Injector* raw = injector.value().get();
    REQUIRE(faults.start(std::move(injector.value())).ok());
    return raw->counters();
  }
  std::string url(const std::string& path) const {
    return "http://" + proxy.endpoint().to_string() + path;
  }
  std::vector<FaultEvent> injected() const {
    std::vector<FaultEvent> out;
    for (auto& e : events.snapshot()) {
      if (e.phase == "injected") out.push_back(e);
    }
    return out;
  }
};

long n_of(const std::string& body) { return nlohmann::json::parse(body).at("n").get<long>(); }

// Waits (deadline 5 s) until `done()`; the proxy's effects on the upstream may
// trail the client's answer by a little.
template <typename F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace

TEST_CASE("without faults the proxy forwards unchanged and keeps both sides alive", "[injectors][proxy]") {
  ProxyRig rig;
  for (int i = 1; i <= 5; ++i) {
    ClientAnswer a = rig.client.send("POST", rig.url("/orders?i=" + std::to_string(i)),
                                     {"Content-Type: application/json"}, R"({"x":1})");
    REQUIRE(a.answered);
    CHECK(a.status == 200);
    auto body = nlohmann::json::parse(a.body);
    CHECK(body["n"] == i);
    CHECK(body["target"] == "/orders?i=" + std::to_string(i));
    CHECK(body["body"] == R"({"x":1})");
    CHECK(a.new_connections == (i == 1 ? 1 : 0));  // client side kept alive
  }
  CHECK(rig.upstream.connections() == 1);  // upstream side kept alive
  CHECK(rig.proxy.counters().requests == 5);
  CHECK(rig.proxy.counters().upstream_sends == 5);
  CHECK(rig.events.size() == 0);
}

TEST_CASE("an upstream answer ended by closing reaches a kept-alive client framed, at once", "[injectors][proxy]") {
  // Found by scripts/fuzz.sh (proxy-http): an HTTP/1.0 answer without
  // Content-Length was relayed unframed on a kept-alive connection, so the
  // client waited for a close that never came.
  ProxyRig rig;
  for (int i = 1; i <= 2; ++i) {
    ClientAnswer a = rig.client.send("GET", rig.url("/plain"), {"X-Upstream-Unframed: 1"}, "", 2000);
    INFO(a.error);
    REQUIRE(a.answered);
    CHECK(a.status == 200);
    CHECK(nlohmann::json::parse(a.body)["n"] == i);
    CHECK(header_value(a.headers, "Content-Length") == std::to_string(a.body.size()));
    CHECK(a.seconds < 1.5);  // not the client's own deadline
    CHECK(a.new_connections == (i == 1 ? 1 : 0));  // the client's connection stayed usable
  }
}

TEST_CASE("drop-response (close): the upstream executed, the client got no answer", "[injectors][proxy]") {
  ProxyRig rig;
  rig.arm("drop-response: {name: lost-answer, first: 1}");
  ClientAnswer lost = rig.client.send("POST", rig.url("/orders"), {}, "{}");
  CHECK_FALSE(lost.answered);
  CHECK(lost.status == 0);
  CHECK(rig.upstream.requests() == 1);
  CHECK(eventually([&] { return rig.upstream.answered() == 1; }));

  ClientAnswer retry = rig.client.send("POST", rig.url("/orders"), {}, "{}");  // first: 1 is spent
  REQUIRE(retry.answered);
  CHECK(n_of(retry.body) == 2);

  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  CHECK(events[0].fault == "drop-response");
  CHECK(events[0].name == "lost-answer");
  CHECK(events[0].request->method == "POST");
  CHECK(events[0].request->target == "/orders");
  REQUIRE(events[0].upstream.size() == 1);  // the swallowed answer, for the oracles
  CHECK(events[0].upstream[0].status == 200);
  CHECK(n_of(events[0].upstream[0].body) == 1);
  CHECK_FALSE(events[0].client_answer.has_value());
  auto counters = rig.faults.counters();
  REQUIRE(counters.size() == 1);
  CHECK(counters[0].counts.injected == 1);
  CHECK(counters[0].counts.matched == 2);
}

TEST_CASE("drop-response (hold): the client waits until its own deadline", "[injectors][proxy][slow]") {
  ProxyRig rig;
  rig.arm("drop-response: {mode: hold}");
  ClientAnswer held = rig.client.send("GET", rig.url("/held"), {}, "", /*timeout_ms=*/300);
  CHECK_FALSE(held.answered);
  CHECK(held.curl_code == 28);  // CURLE_OPERATION_TIMEDOUT: the client's own deadline ended it
  CHECK(rig.upstream.requests() == 1);
  // The client gave up and closed: the proxy lets the held connection go.
  CHECK(eventually([&] { return rig.proxy.counters().connections_open == 0; }));
  REQUIRE(rig.injected().size() == 1);
  CHECK(rig.injected()[0].upstream.size() == 1);
}

TEST_CASE("replay-upstream after the answer: upstream ran twice, client got one answer", "[injectors][proxy]") {
  ProxyRig rig;
  rig.arm("replay-upstream: {first: 1}");
  ClientAnswer a = rig.client.send("POST", rig.url("/orders"), {"Idempotency-Key: k1"}, R"({"q":1})");
  REQUIRE(a.answered);
  CHECK(n_of(a.body) == 2);  // the retry's answer reaches the client
  CHECK(rig.upstream.requests() == 2);
  CHECK(rig.upstream.targets() == std::vector<std::string>{"POST /orders", "POST /orders"});
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  CHECK(events[0].upstream_sends == 2);
  REQUIRE(events[0].upstream.size() == 1);
  CHECK(n_of(events[0].upstream[0].body) == 1);  // the first answer, never seen by the client
  REQUIRE(events[0].client_answer.has_value());
  CHECK(n_of(events[0].client_answer->body) == 2);
  // The same client connection goes on working.
  ClientAnswer next = rig.client.send("GET", rig.url("/after"));
  REQUIRE(next.answered);
  CHECK(next.new_connections == 0);
  CHECK(n_of(next.body) == 3);
}

TEST_CASE("replay-upstream after a timeout: the copy goes out while the first is still running", "[injectors][proxy][slow]") {
  ProxyRig rig;
  rig.arm("replay-upstream: {after: 50ms}");
  ClientAnswer a = rig.client.send("POST", rig.url("/slow"), {"X-Upstream-Delay-Ms: 400"}, "{}");
  REQUIRE(a.answered);
  CHECK(rig.upstream.requests() == 2);
  CHECK(rig.upstream.connections() == 2);  // the copy used a connection of its own
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  INFO(events[0].detail << " / client got " << a.body);
  CHECK(events[0].upstream_sends == 2);
  CHECK(events[0].upstream.size() == 1);
}

TEST_CASE("hedge: two copies at once, the client gets the first answer", "[injectors][proxy]") {
  ProxyRig rig;
  rig.arm("hedge: {match: {method: POST}}");
  ClientAnswer get = rig.client.send("GET", rig.url("/not-hedged"));
  REQUIRE(get.answered);
  CHECK(rig.upstream.requests() == 1);
  ClientAnswer a = rig.client.send("POST", rig.url("/orders"), {}, "{}");
  REQUIRE(a.answered);
  // The slower copy may still be in flight when the client has its answer.
  REQUIRE(eventually([&] { return rig.injected().size() == 1; }));
  CHECK(rig.upstream.requests() == 3);
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  CHECK(events[0].upstream_sends == 2);
  REQUIRE(events[0].upstream.size() == 1);
  std::set<long> ns{n_of(a.body), n_of(events[0].upstream[0].body)};
  CHECK(ns == std::set<long>{2, 3});  // the client's answer and the swallowed one
}

TEST_CASE("delay on either side holds the exchange at least that long", "[injectors][proxy][slow]") {
  ProxyRig rig;
  SECTION("request side: the upstream sees the request late") {
    rig.arm("delay: {duration: 150ms}");
    const std::int64_t before = steady_now_ns();
    ClientAnswer a = rig.client.send("GET", rig.url("/d"));
    REQUIRE(a.answered);
    const std::int64_t upstream_arrival = std::stoll(idemproof::testkit::header_value(a.headers, "X-Arrival-Ns"));
    CHECK(upstream_arrival - before >= 150'000'000);
  }
  SECTION("response side: the upstream answered at once, the client got it late") {
    rig.arm("delay: {side: response, duration: 150ms}");
    ClientAnswer a = rig.client.send("GET", rig.url("/d"));
    REQUIRE(a.answered);
    const std::int64_t after = steady_now_ns();
    const std::int64_t upstream_arrival = std::stoll(idemproof::testkit::header_value(a.headers, "X-Arrival-Ns"));
    CHECK(after - upstream_arrival >= 150'000'000);
  }
  CHECK(rig.upstream.requests() == 1);
  REQUIRE(rig.injected().size() == 1);
  CHECK(rig.injected()[0].detail.find("150") != std::string::npos);
}

TEST_CASE("libcurl resends on its own when a reused connection is reset", "[injectors][proxy]") {
  // Not a property of the proxy but of the client the harness uses: the reset
  // request reached the upstream zero times, yet libcurl's silent resend made
  // it arrive once. A harness that reuses connections must know this.
  ProxyRig rig;
  rig.arm("reset: {every: 2}");
  REQUIRE(rig.client.send("POST", rig.url("/orders"), {}, "{}").answered);
  ClientAnswer second = rig.client.send("POST", rig.url("/orders"), {}, "{}");
  CHECK(second.answered);  // resent by libcurl on a fresh connection ...
  CHECK(second.new_connections == 1);
  CHECK(rig.upstream.requests() == 2);
  CHECK(rig.faults.counters()[0].counts.injected == 1);  // ... although the fault fired
}

TEST_CASE("reset: the client's connection is reset before anything is forwarded", "[injectors][proxy]") {
  ProxyRig rig;
  TestClient fresh(/*fresh=*/true);
  rig.arm("reset: {every: 2}");
  ClientAnswer first = fresh.send("POST", rig.url("/orders"), {}, "{}");
  REQUIRE(first.answered);
  ClientAnswer second = fresh.send("POST", rig.url("/orders"), {}, "{}");
  CHECK_FALSE(second.answered);
  CHECK(rig.upstream.requests() == 1);  // the reset request never reached the target
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  CHECK(events[0].fault == "reset");
  CHECK(events[0].upstream.empty());
  CHECK(events[0].upstream_sends == 0);
}

TEST_CASE("seeded probability through the proxy injects the same requests for the same seed", "[injectors][proxy]") {
  auto pattern = [](int seed) {
    ProxyRig rig;
    TestClient fresh(/*fresh=*/true);
    rig.arm("reset: {probability: 0.5, seed: " + std::to_string(seed) + "}");
    std::string out;
    for (int i = 0; i < 16; ++i) out += fresh.send("GET", rig.url("/p")).answered ? '.' : 'R';
    CHECK(rig.faults.counters()[0].counts.injected == std::count(out.begin(), out.end(), 'R'));
    CHECK(rig.upstream.requests() == std::count(out.begin(), out.end(), '.'));
    return out;
  };
  const std::string a = pattern(7);
  CHECK(a == pattern(7));
  CHECK(a.find('R') != std::string::npos);
  CHECK(a.find('.') != std::string::npos);
}

TEST_CASE("arming order decides, a healed fault stops firing and logs start/heal", "[injectors][proxy]") {
  ProxyRig rig;
  TestClient fresh(/*fresh=*/true);
  rig.arm("hedge: {name: h, first: 1}");
  rig.arm("reset: {name: r}");
  CHECK(fresh.send("GET", rig.url("/1")).answered);              // hedge fires, reset not offered
  REQUIRE(eventually([&] { return rig.events.size() == 3; }));   // the hedge's second copy is back
  CHECK_FALSE(fresh.send("GET", rig.url("/2")).answered);        // hedge spent: reset fires
  rig.faults.heal_all();
  CHECK(fresh.send("GET", rig.url("/3")).answered);              // nothing armed
  auto counters = rig.faults.counters();
  CHECK(counters[0].counts.injected == 1);
  CHECK(counters[1].counts.seen == 1);
  CHECK(counters[1].counts.injected == 1);
  std::vector<std::string> phases;
  for (const auto& e : rig.events.snapshot()) phases.push_back(e.name + ":" + e.phase);
  CHECK(phases == std::vector<std::string>{"h:start", "r:start", "h:injected", "r:injected", "r:heal", "h:heal"});
}

TEST_CASE("an unreachable upstream yields 502 and an upstream-error event, never a retry", "[injectors][proxy]") {
  std::uint16_t dead_port = 0;
  {
    CountingUpstream gone;
    dead_port = gone.port();
  }
  FaultEventLog events;
  ChaosProxy proxy({{"127.0.0.1", 0}, {"127.0.0.1", dead_port}}, &events);
  REQUIRE(proxy.start().ok());
  TestClient client;
  ClientAnswer a = client.send("GET", "http://" + proxy.endpoint().to_string() + "/x");
  REQUIRE(a.answered);
  CHECK(a.status == 502);
  CHECK(idemproof::testkit::header_value(a.headers, "X-Idemproof-Proxy") == "upstream-error");
  REQUIRE(events.size() == 1);
  CHECK(events.snapshot()[0].fault == "upstream-error");
  CHECK(proxy.heal());
}

TEST_CASE("an upstream answer past body_limit is refused with 502, not buffered, when header and body come in one read", "[injectors][proxy]") {
  CountingUpstream upstream;
  FaultEventLog events;
  ProxySettings settings{{"127.0.0.1", 0}, {"127.0.0.1", upstream.port()}, std::chrono::seconds(5)};
  settings.body_limit = std::size_t{1} << 20;
  ChaosProxy proxy(settings, &events);
  REQUIRE(proxy.start().ok());
  TestClient client;
  ClientAnswer a = client.send("GET", "http://" + proxy.endpoint().to_string() + "/big",
                               {"X-Upstream-Oversize-Mib: 8"});
  REQUIRE(a.answered);
  CHECK(a.status == 502);
  CHECK(a.body.size() < settings.body_limit);
  CHECK(header_value(a.headers, "X-Idemproof-Proxy") == "upstream-error");
  CHECK(proxy.heal());
}

TEST_CASE("fault events serialise to JSON for the history", "[injectors][proxy]") {
  ProxyRig rig;
  rig.arm("drop-response");
  rig.client.send("POST", rig.url("/orders"), {"Idempotency-Key: k9"}, R"({"a":1})");
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  nlohmann::json j = events[0];
  CHECK(j["fault"] == "drop-response");
  CHECK(j["phase"] == "injected");
  CHECK(j["request"]["method"] == "POST");
  CHECK(j["request"]["body"] == R"({"a":1})");
  CHECK(j["upstream"][0]["status"] == 200);
  CHECK(j["client_answer"].is_null());
  CHECK(j["time_ns"].get<std::int64_t>() > 0);
}

namespace {

// A process in its own process group (as the harness starts targets), for
// kill-after-answer to kill; reaped by wait_killed() or the destructor.
struct Victim {
  pid_t pid = ::fork();
  Victim() {
    if (pid == 0) {
      ::setpgid(0, 0);
      ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // both sides: no race with the kill
  }
  ~Victim() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // The signal that ended it, 0 when it is still running after 5 s.
  int wait_killed() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = 0;
        return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return 0;
  }
};

}  // namespace

TEST_CASE("kill-after-answer: the upstream answered, the caller is killed before it sees the answer", "[injectors][proxy][slow]") {
  ProxyRig rig;
  Victim victim;
  REQUIRE(victim.pid > 0);
  const pid_t victim_pid = victim.pid;  // wait_killed() clears victim.pid once reaped
  rig.arm("kill-after-answer: {pid: " + std::to_string(victim_pid) + ", match: {method: POST, path: /charge}, first: 1}");
  ClientAnswer cut = rig.client.send("POST", rig.url("/charge"), {}, R"({"amount":1})");
  CHECK_FALSE(cut.answered);  // the answer was never forwarded
  CHECK(rig.upstream.requests() == 1);  // ...but the downstream acted
  CHECK(victim.wait_killed() == SIGKILL);
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  CHECK(events[0].fault == "kill-after-answer");
  REQUIRE(events[0].upstream.size() == 1);
  CHECK(events[0].upstream[0].status == 200);
  CHECK(n_of(events[0].upstream[0].body) == 1);
  CHECK(events[0].detail.find("SIGKILLed process group " + std::to_string(victim_pid)) != std::string::npos);
  CHECK_FALSE(events[0].client_answer.has_value());
  ClientAnswer next = rig.client.send("POST", rig.url("/charge"), {}, "{}");  // first: 1 is spent
  REQUIRE(next.answered);
  CHECK(n_of(next.body) == 2);
}

TEST_CASE("kill-after-answer needs a pid above 1, positioned at line:column", "[injectors][proxy]") {
  Registry registry;
  register_builtin_injectors(registry);
  auto missing = registry.build(YAML::Load("kill-after-answer: {first: 1}"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("pid") != std::string::npos);
  auto bad = registry.build(YAML::Load("kill-after-answer:\n  pid: \"1\"\n"));
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.status().mark().has_value());
  CHECK(bad.status().mark()->line == 2);
  auto text = registry.build(YAML::Load("kill-after-answer: {pid: \"4242\", group: false}"));
  CHECK(text.ok());
}

TEST_CASE("fail: the client gets the declared 5xx and the upstream never sees the request", "[injectors][proxy]") {
  ProxyRig rig;
  rig.arm("fail: {status: 502, body: provider down, retry_after: \"1\", first: 1}");
  ClientAnswer failed = rig.client.send("POST", rig.url("/charge"), {}, "{}");
  REQUIRE(failed.answered);
  CHECK(failed.status == 502);
  CHECK(failed.body == "provider down");
  CHECK(idemproof::testkit::header_value(failed.headers, "Retry-After") == "1");
  CHECK(rig.upstream.requests() == 0);
  auto events = rig.injected();
  REQUIRE(events.size() == 1);
  CHECK(events[0].fault == "fail");
  CHECK(events[0].upstream_sends == 0);
  REQUIRE(events[0].client_answer.has_value());
  CHECK(events[0].client_answer->status == 502);
  ClientAnswer next = rig.client.send("POST", rig.url("/charge"), {}, "{}");
  REQUIRE(next.answered);
  CHECK(next.new_connections == 0);  // the connection stays usable
  CHECK(n_of(next.body) == 1);
}

TEST_CASE("on_exchange records every request written upstream with its answer, fault copies too", "[injectors][proxy]") {
  CountingUpstream upstream;
  std::mutex mu;
  std::vector<UpstreamExchange> record;
  ProxySettings settings{{"127.0.0.1", 0}, {"127.0.0.1", upstream.port()}, std::chrono::seconds(5)};
  settings.on_exchange = [&](const UpstreamExchange& x) {
    std::lock_guard lock(mu);
    record.push_back(x);
  };
  FaultEventLog events;
  ChaosProxy proxy(settings, &events);
  REQUIRE(proxy.start().ok());
  Registry registry;
  register_builtin_injectors(registry);
  ActiveFaults faults{InjectorContext{&proxy, &events}};
  auto replay = registry.build(YAML::Load("replay-upstream: {match: {path: /twice}}"));
  REQUIRE(replay.ok());
  REQUIRE(faults.start(std::move(replay.value())).ok());
  TestClient client;
  const std::string base = "http://" + proxy.endpoint().to_string();
  REQUIRE(client.send("POST", base + "/once", {}, R"({"amount":7})").answered);
  REQUIRE(client.send("POST", base + "/twice", {}, "{}").answered);
  auto entries = [&] {
    std::lock_guard lock(mu);
    return record;
  };
  REQUIRE(eventually([&] { return entries().size() == 3; }));
  auto r = entries();
  CHECK(r[0].request.method == "POST");
  CHECK(r[0].request.target == "/once");
  CHECK(r[0].request.body == R"({"amount":7})");
  REQUIRE(r[0].answer.has_value());
  CHECK(r[0].answer->status == 200);
  CHECK(r[1].request.target == "/twice");
  CHECK(r[2].request.target == "/twice");  // the replayed copy reached the downstream too
  nlohmann::json j = r[0];
  CHECK(j["answer"]["status"] == 200);
  CHECK(j["request"]["target"] == "/once");
  CHECK(j["sent_ns"].get<std::int64_t>() > 0);
}

namespace {
// A chaos proxy in front of a port nobody listens on, with one fault
// started from `yaml`: a firing there has nothing to act on.
struct ProxyBeforeRefusingUpstream {
  static std::uint16_t ClosedPort() {
    CountingUpstream gone;
    return gone.port();
  }
  FaultEventLog events;
  ChaosProxy proxy{{{"127.0.0.1", 0}, {"127.0.0.1", ClosedPort()}}, &events};
  ActiveFaults faults{InjectorContext{&proxy, &events}};

  explicit ProxyBeforeRefusingUpstream(const std::string& yaml) {
    REQUIRE(proxy.start().ok());
    Registry registry;
    register_builtin_injectors(registry);
    auto injector = registry.build(YAML::Load(yaml));
    REQUIRE(injector.ok());
    REQUIRE(faults.start(std::move(injector.value())).ok());
  }
  ClientAnswer Send(const std::string& path) {
    return TestClient().send("POST", "http://" + proxy.endpoint().to_string() + path, {}, "{}");
  }
  std::vector<FaultEvent> Injected() {
    std::vector<FaultEvent> fired;
    for (auto& e : events.snapshot())
      if (e.phase == "injected") fired.push_back(e);
    return fired;
  }
};
}  // namespace

TEST_CASE("kill-after-answer whose upstream refuses the connection kills nothing and records why", "[injectors][proxy][slow]") {
  Victim victim;
  REQUIRE(victim.pid > 0);
  ProxyBeforeRefusingUpstream rig("kill-after-answer: {pid: " + std::to_string(victim.pid) + ", first: 1}");
  ClientAnswer a = rig.Send("/charge");
  REQUIRE(a.answered);
  CHECK(a.status == 502);
  const std::vector<FaultEvent> fired = rig.Injected();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].missed.find("nothing killed") != std::string::npos);
  CHECK(nlohmann::json(fired[0]).at("missed") == fired[0].missed);
  CHECK(::kill(victim.pid, 0) == 0);  // still alive
}

TEST_CASE("drop-response whose upstream refuses the connection dropped no answer and records why", "[injectors][proxy]") {
  ProxyBeforeRefusingUpstream rig("drop-response: {first: 1}");
  CHECK_FALSE(rig.Send("/orders").answered);
  const std::vector<FaultEvent> fired = rig.Injected();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].missed.find("no answer was dropped") != std::string::npos);
}
