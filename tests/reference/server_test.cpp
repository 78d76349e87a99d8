// Integration tests: the real idemproof-ref binary on an ephemeral loopback
// port, real HTTP through libcurl, a real SQLite file per test.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "answer_checks.h"
#include "idemproof/ref/flaw.h"
#include "order_api.h"
#include "service_process.h"
#include "temp_dir.h"

using namespace idemproof::ref::testing;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

std::vector<std::string> args_for(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--port", "0", "--db", dir.file("ref.db")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// utime + stime of process `pid` in seconds (/proc/PID/stat fields 14 and 15).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces: count fields after its ')'.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

TEST_CASE("server: create, replay byte for byte, count once", "[server][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir));
  OrderApi api(service.url());
  REQUIRE(api.healthy());

  const auto first = api.post_order("k-1", order_json("b1", "s1", 2));
  REQUIRE(first.status == 201);
  CHECK(first.header("content-type") == "application/json");
  CHECK(first.header("location") == "/orders/1");
  CHECK_FALSE(is_replay(first));

  const auto second = api.post_order("k-1", order_json("b1", "s1", 2));
  CHECK(second.status == 201);
  CHECK(second.body == first.body);
  CHECK(second.header("location") == first.header("location"));
  CHECK(is_replay(second));
  CHECK(api.order_count("b1") == 1);
  CHECK(api.stock("s1") == 998);

  const auto by_id = api.call("GET", "/orders/1");
  CHECK(by_id.status == 200);
  CHECK(by_id.body == first.body);
}

TEST_CASE("server: key rules (missing, invalid, mismatch, scope)", "[server][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir));
  OrderApi api(service.url());

  CHECK(is_problem(api.post_order("", order_json("b1")), 400));
  CHECK(is_problem(api.post_order(std::string(256, 'k'), order_json("b1")), 400));
  CHECK(is_problem(api.post_order("\"open", order_json("b1")), 400));
  CHECK(api.order_count("b1") == 0);

  REQUIRE(api.post_order("\"a key with spaces\"", order_json("b1")).status == 201);
  const auto mismatch = api.post_order("\"a key with spaces\"", order_json("b1", "s1", 5));
  CHECK(is_problem(mismatch, 422));
  CHECK(api.order_count("b1") == 1);

  // The same key on another action is another record: both execute.
  const auto cancel = api.call("DELETE", "/orders/1", std::nullopt,
                               {"Idempotency-Key: \"a key with spaces\""});
  CHECK(cancel.status == 200);
  CHECK_FALSE(is_replay(cancel));
  CHECK(api.stock("s1") == 1000);
}

TEST_CASE("server: a duplicate during the business step gets 409 + Retry-After", "[server][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--business-delay", "2s"}));
  OrderApi api(service.url());
  auto original = api.start_in_progress("slow", order_json("b1"), 20s);
  const auto duplicate = api.post_order("slow", order_json("b1"));
  // Either still in progress or already completed (then a replay); never a 2nd run.
  if (duplicate.status == 409) {
    CHECK(is_problem(duplicate, 409));
    CHECK(duplicate.header("retry-after") == "1");
  } else {
    CHECK(is_replay(duplicate));
  }
  const auto done = original.get();
  CHECK((done.status == 201 || done.status == 409));
  // Whichever request held the lease, its result settles as the one order.
  const auto settled = api.post_until_settled("slow", order_json("b1"));
  CHECK(settled.status == 201);
  CHECK(is_replay(settled));
  CHECK(api.order_count("b1") == 1);
}

TEST_CASE("server: 64 concurrent identical POSTs execute exactly once", "[server][burst][slow]") {
  // Both ways of handing read requests to the workers (the default defers the
  // hand-off behind the other ready reads, on SCHED_BATCH workers).
  const auto dispatch = GENERATE(std::vector<std::string>{},
                                 std::vector<std::string>{"--dispatch", "immediate", "--worker-sched", "normal"});
  TempDir dir;
  auto args = args_for(dir, {"--business-delay", "300ms"});
  args.insert(args.end(), dispatch.begin(), dispatch.end());
  ServiceProcess service(args);
  OrderApi api(service.url());
  check_one_execution(api.concurrent_posts(64, "burst-key", order_json("burst", "s9", 3)));
  CHECK(api.order_count("burst") == 1);
  CHECK(api.stock("s9") == 997);
}

TEST_CASE("server: kill -9 mid-request, retries get 409 until the lease ends, then one order", "[server][crash][slow]") {
  TempDir dir;
  const auto body = order_json("crash", "s2", 4);
  std::chrono::steady_clock::time_point seen_in_progress;
  {
    ServiceProcess doomed(args_for(dir, {"--lease", "4s", "--business-delay", "60s"}));
    OrderApi api(doomed.url());
    auto original = api.start_in_progress("crash-key", body, 30s);
    seen_in_progress = std::chrono::steady_clock::now();
    doomed.kill9();
    CHECK(original.get().status != 201);  // nobody saw the order created
  }
  ServiceProcess restarted(args_for(dir, {"--lease", "4s"}));
  OrderApi api(restarted.url());
  const auto before = api.post_order("crash-key", body);
  CHECK(is_problem(before, 409));
  CHECK(api.order_count("crash") == 0);

  // The claim was taken before we saw the 409, so its lease is over by then.
  std::this_thread::sleep_until(seen_in_progress + 4s + 300ms);
  const auto after = api.post_order("crash-key", body);
  CHECK(after.status == 201);
  CHECK_FALSE(is_replay(after));
  const auto again = api.post_order("crash-key", body);
  CHECK(is_replay(again));
  CHECK(again.body == after.body);
  CHECK(api.order_count("crash") == 1);
  CHECK(api.stock("s2") == 996);
}

TEST_CASE("server: completed records survive a restart", "[server][slow]") {
  TempDir dir;
  std::string first_body;
  {
    ServiceProcess service(args_for(dir));
    OrderApi api(service.url());
    const auto first = api.post_order("persist", order_json("p1"));
    REQUIRE(first.status == 201);
    first_body = first.body;
    CHECK(service.terminate() == 0);
  }
  ServiceProcess service(args_for(dir));
  OrderApi api(service.url());
  const auto replay = api.post_order("persist", order_json("p1"));
  CHECK(is_replay(replay));
  CHECK(replay.body == first_body);
  CHECK(api.order_count("p1") == 1);
}

TEST_CASE("server: retryable failure releases the key, terminal 4xx is replayed", "[server][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir));
  OrderApi api(service.url());

  const auto chaos = api.call("POST", "/_chaos", R"({"fail_next":1})");
  REQUIRE(chaos.status == 200);
  CHECK(json::parse(chaos.body).at("fail_next") == 1);
  const auto failed = api.post_order("r-1", order_json("r1"));
  CHECK(is_problem(failed, 503));
  CHECK(failed.header("retry-after") == "1");
  const auto retried = api.post_order("r-1", order_json("r1"));
  CHECK(retried.status == 201);
  CHECK_FALSE(is_replay(retried));
  CHECK(api.order_count("r1") == 1);

  const std::string invalid = R"({"biz_no":"r2","sku":"s1","qty":-1,"amount":1})";
  const auto rejected = api.post_order("r-2", invalid);
  CHECK(is_problem(rejected, 400));
  const auto rejected_again = api.post_order("r-2", invalid);
  CHECK(rejected_again.status == 400);
  CHECK(rejected_again.body == rejected.body);
  CHECK(is_replay(rejected_again));
  CHECK(api.order_count("r2") == 0);

  CHECK(api.call("DELETE", "/_chaos").body == R"({"delay_ms":0,"fail_next":0,"fail_status":503})");
}

TEST_CASE("server: PUT sets target state and DELETE releases stock once", "[server][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir));
  OrderApi api(service.url());
  REQUIRE(api.post_order("o-1", order_json("o1", "s3", 7)).status == 201);
  for (int i = 0; i < 3; ++i) {
    const auto put = api.call("PUT", "/orders/1/address", R"({"address":"Main St 1"})");
    CHECK(put.status == 200);
    CHECK(json::parse(put.body).at("address") == "Main St 1");
  }
  for (int i = 0; i < 3; ++i) CHECK(api.call("DELETE", "/orders/1").status == 200);
  CHECK(api.stock("s3") == 1000);
  const auto keyed = api.call("PUT", "/orders/1/address", R"({"address":"X"})",
                              {"Idempotency-Key: put-1"});
  const auto keyed_again = api.call("PUT", "/orders/1/address", R"({"address":"X"})",
                                    {"Idempotency-Key: put-1"});
  CHECK(keyed.status == 200);
  CHECK(is_replay(keyed_again));
  CHECK(keyed_again.body == keyed.body);
}

TEST_CASE("server: bad input of every kind is a problem+json 4xx and serving goes on", "[server][input][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--body-limit", "4096"}));
  OrderApi api(service.url());

  CHECK(is_problem(api.post_order("j-1", "{\"biz_no\": "), 400));
  CHECK(api.healthy());
  CHECK(is_problem(api.post_order("j-2", "[1,2,3]"), 400));
  CHECK(is_problem(api.post_order("j-3", R"({"biz_no":"x","sku":"s","qty":1.5,"amount":1})"), 400));
  CHECK(is_problem(api.call("GET", "/no/such/route"), 404));
  CHECK(is_problem(api.call("GET", "/orders/0"), 404));
  CHECK(is_problem(api.call("GET", "/orders/999"), 404));
  const auto bad_method = api.call("PATCH", "/orders/1");
  CHECK(is_problem(bad_method, 405));
  CHECK(bad_method.header("allow") == "GET, DELETE");
  CHECK(is_problem(api.call("GET", "/stock"), 400));
  CHECK(is_problem(api.call("POST", "/_chaos", R"({"delay_ms":"soon"})"), 400));
  CHECK(is_problem(api.post_order("k-big", std::string(100'000, 'x')), 413));
  CHECK(api.healthy());

  const auto garbage = raw_exchange(service.port(), "THIS IS NOT HTTP\r\n\r\n");
  CHECK(garbage.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(garbage.find("application/problem+json") != std::string::npos);
  const auto huge_header = raw_exchange(
      service.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20'000, 'a') +
                          "\r\n\r\n");
  CHECK(huge_header.rfind("HTTP/1.1 431", 0) == 0);
  // A client that vanishes mid-request.
  raw_exchange(service.port(), "POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
               100ms);

  const auto good = api.post_order("after-bad", order_json("good"));
  CHECK(good.status == 201);
  CHECK(api.order_count("good") == 1);
}

TEST_CASE("server: flags for base path, header names and arrival time", "[server][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--base-path", "/api/v9", "--key-header", "X-Key",
                                        "--replay-header", "X-Replayed", "--report-arrival"}));
  OrderApi api(service.url() + "/api/v9");
  CHECK(is_problem(OrderApi(service.url()).call("GET", "/healthz"), 404));
  const auto first = api.call("POST", "/orders", order_json("bp"), {"X-Key: bp-1"});
  REQUIRE(first.status == 201);
  CHECK(first.header("location") == "/api/v9/orders/1");
  const auto arrival = first.header("x-arrival-ns");
  REQUIRE(arrival);
  CHECK(std::stoll(*arrival) > 0);
  const auto second = api.call("POST", "/orders", order_json("bp"), {"X-Key: bp-1"});
  CHECK(second.header("x-replayed") == "true");
  CHECK(second.body == first.body);
  CHECK(is_problem(api.post_order("ignored-header", order_json("bp")), 400));  // no X-Key
}

TEST_CASE("server: records expire after the dedup TTL", "[server][ttl][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir, {"--dedup-ttl", "2s", "--sweep-interval", "100ms"}));
  OrderApi api(service.url());
  REQUIRE(api.post_order("ttl", order_json("ttl")).status == 201);
  CHECK(is_replay(api.post_order("ttl", order_json("ttl"))));
  std::this_thread::sleep_for(2500ms);
  const auto after = api.post_order("ttl", order_json("ttl"));
  CHECK(after.status == 201);
  CHECK_FALSE(is_replay(after));
  CHECK(api.order_count("ttl") == 2);
}

TEST_CASE("server: command line (--flaw list, unknown flaw, bad flags, SIGTERM)", "[server][slow]") {
  const auto list = run_reference_to_exit({"--flaw", "list"});
  CHECK(list.exit_code == 0);
  std::set<std::string> names;
  std::size_t lines = 0;
  for (std::size_t pos = 0; pos < list.out.size();) {
    const auto end = list.out.find('\n', pos);
    const auto line = list.out.substr(pos, end - pos);
    names.insert(line.substr(0, line.find(' ')));
    ++lines;
    pos = end == std::string::npos ? list.out.size() : end + 1;
  }
  CHECK(lines == idemproof::ref::all_flaws().size());
  CHECK(names.count("check-then-insert") == 1);
  CHECK(names.count("put-increment") == 1);

  CHECK(run_reference_to_exit({"--flaw", "no-such-flaw"}).exit_code == 2);
  CHECK(run_reference_to_exit({"--lease", "10"}).exit_code == 2);
  CHECK(run_reference_to_exit({"--no-such-flag"}).exit_code == 2);
  CHECK(run_reference_to_exit({"--dispatch", "sometimes"}).exit_code == 2);
  CHECK(run_reference_to_exit({"--worker-sched", "fifo"}).exit_code == 2);

  TempDir dir;
  ServiceProcess service(args_for(dir, {"--business-delay", "2s"}));
  OrderApi api(service.url());
  auto in_flight = api.start_in_progress("term", order_json("term"), 20s);
  CHECK(service.terminate() == 0);
  // The in-flight answer finished before the exit (the original or a probe
  // held the lease; the original's answer is one of these).
  const auto answer = in_flight.get();
  CHECK((answer.status == 201 || answer.status == 409));
}

TEST_CASE("server: out of descriptors, the accept loop backs off instead of spinning",
          "[server][emfile][slow]") {
  TempDir dir;
  ServiceProcess service(args_for(dir));
  OrderApi api(service.url());
  REQUIRE(api.healthy());

  // Leave the service a few descriptors above the ones it holds (prlimit(2)
  // on the running child: descriptors already open stay open), then queue
  // more connections than it can accept: the rest wait in the backlog, so
  // every accept fails with EMFILE.
  const OpenDescriptors open = open_descriptors(service.pid());
  const rlim_t limit = static_cast<rlim_t>(open.highest + 1 + 4);
  const rlimit low{limit, limit};
  REQUIRE(prlimit(service.pid(), RLIMIT_NOFILE, &low, nullptr) == 0);
  const int free_slots = static_cast<int>(limit) - open.count;
  struct Connections {
    std::vector<int> fds;
    void close_all() {
      for (int fd : fds) close(fd);
      fds.clear();
    }
    ~Connections() { close_all(); }
  } idle;
  for (int i = 0; i < free_slots + 16; ++i) {
    const int fd = connect_loopback(service.port());
    REQUIRE(fd >= 0);
    idle.fds.push_back(fd);
  }
  std::this_thread::sleep_for(300ms);  // the accept loop meets EMFILE

  // CPU over one second. A spin burned ~87 % of a core; an idle service with
  // a backoff timer burns ~0. The bound is generous on purpose (speed is
  // measured in bench/, not here): only a spin, not a loaded machine, can
  // cross it.
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_seconds(service.pid());
  std::this_thread::sleep_for(1s);
  const double cpu = cpu_seconds(service.pid()) - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  INFO("cpu " << cpu << " s over " << wall << " s");
  CHECK(cpu / wall < 0.30);

  // Descriptors free again: the service answers within a deadline.
  idle.close_all();
  bool answered = false;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!answered && std::chrono::steady_clock::now() < deadline) {
    answered = http_call({"GET", service.url() + "/healthz", {}, std::nullopt, 2s}).status == 200;
    if (!answered) std::this_thread::sleep_for(50ms);
  }
  CHECK(answered);
}
