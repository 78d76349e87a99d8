// The real idemproof-ref binary on PostgreSQL (--store), against a server
// each test case starts itself (postgres_server.h): replay, a concurrent
// burst, two instances sharing one database, the check-then-insert flaw
// still executing duplicates there, and an unreachable store refused at start.
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "answer_checks.h"
#include "order_api.h"
#include "postgres_server.h"
#include "service_process.h"
#include "temp_dir.h"

using namespace idemproof::ref::testing;

namespace {

// One instance on `store_url`; its own --db file (unused: with --store every
// table is in PostgreSQL).
std::vector<std::string> args_for(const TempDir& dir, const std::string& name, const std::string& store_url,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--port", "0", "--db", dir.file(name + ".db"), "--store", store_url};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("postgres: create twice gives one order and a replay", "[server][postgres][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess service(args_for(dir, "ref", pg.url()));
  OrderApi api(service.url());

  const auto first = api.post_order("k-1", order_json("b1", "s1", 2));
  REQUIRE(first.status == 201);
  CHECK(first.header("location") == "/orders/1");
  CHECK_FALSE(is_replay(first));
  const auto second = api.post_order("k-1", order_json("b1", "s1", 2));
  CHECK(second.status == 201);
  CHECK(is_replay(second));
  CHECK(second.body == first.body);
  CHECK(is_problem(api.post_order("k-1", order_json("b1", "s1", 5)), 422));
  CHECK(api.order_count("b1") == 1);
  CHECK(api.stock("s1") == 998);
}

// A store that failed and came back: the pool's idle connections were ended
// meanwhile; the next requests take fresh ones instead of answering 5xx.
TEST_CASE("postgres: idle pooled connections ended by the server are not reused", "[server][postgres][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess service(args_for(dir, "ref", pg.url()));
  OrderApi api(service.url());
  const auto first = api.post_order("k-1", order_json("b1", "s1", 2));
  REQUIRE(first.status == 201);
  pg.execute(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the ends reached the service
  const auto retry = api.post_order("k-1", order_json("b1", "s1", 2));
  INFO(retry.body);
  CHECK(retry.status == 201);
  CHECK(is_replay(retry));
  CHECK(api.post_order("k-2", order_json("b2", "s1", 1)).status == 201);
  CHECK(api.order_count("b1") == 1);
}

TEST_CASE("postgres: 64 concurrent identical POSTs execute exactly once", "[server][postgres][burst][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess service(args_for(dir, "ref", pg.url(), {"--business-delay", "300ms"}));
  OrderApi api(service.url());
  check_one_execution(api.concurrent_posts(64, "burst-key", order_json("burst", "s9", 3)));
  CHECK(api.order_count("burst") == 1);
  CHECK(api.stock("s9") == 997);
}

TEST_CASE("postgres: two instances on one database execute a key once", "[server][postgres][instances][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess a(args_for(dir, "a", pg.url(), {"--business-delay", "300ms"}));
  ServiceProcess b(args_for(dir, "b", pg.url(), {"--business-delay", "300ms"}));
  OrderApi api_a(a.url()), api_b(b.url());

  // One after the other: the second instance replays the first one's answer.
  const auto first = api_a.post_order("seq", order_json("seq"));
  REQUIRE(first.status == 201);
  const auto second = api_b.post_order("seq", order_json("seq"));
  CHECK(second.status == 201);
  CHECK(is_replay(second));
  CHECK(second.body == first.body);

  // At once, one request to each: one executes, the other is a replay or 409.
  auto on_a = std::async(std::launch::async, [&] { return api_a.post_order("same", order_json("same", "s2")); });
  auto on_b = std::async(std::launch::async, [&] { return api_b.post_order("same", order_json("same", "s2")); });
  check_one_execution({on_a.get(), on_b.get()});

  // And a burst split over both instances.
  auto half_a = std::async(std::launch::async, [&] { return api_a.concurrent_posts(16, "split", order_json("split")); });
  auto half_b = std::async(std::launch::async, [&] { return api_b.concurrent_posts(16, "split", order_json("split")); });
  auto all = half_a.get();
  for (auto& r : half_b.get()) all.push_back(std::move(r));
  check_one_execution(all);

  for (const auto* api : {&api_a, &api_b}) {
    CHECK(api->order_count("seq") == 1);
    CHECK(api->order_count("same") == 1);
    CHECK(api->order_count("split") == 1);
    CHECK(api->stock("s2") == 999);
  }
}

TEST_CASE("postgres: flaw check-then-insert still executes a concurrent burst more than once",
          "[flaw][postgres][slow]") {
  PostgresServer pg;
  TempDir dir;
  ServiceProcess service(
      args_for(dir, "ref", pg.url(), {"--flaw", "check-then-insert", "--check-insert-pause", "1s"}));
  OrderApi api(service.url());
  api.concurrent_posts(64, "race", order_json("race"));
  CHECK(api.order_count("race") > 1);
}

TEST_CASE("postgres: an unreachable or foreign --store is refused at start", "[server][postgres][slow]") {
  TempDir dir;
  // No server listens on a port just freed by a PostgresServer.
  std::string dead_url;
  {
    PostgresServer pg;
    dead_url = pg.url();
  }
  const auto unreachable = run_reference_to_exit({"--port", "0", "--db", dir.file("ref.db"), "--store", dead_url},
                                                 std::chrono::seconds(30), Collect::stdout_and_stderr);
  CHECK(unreachable.exit_code == 1);
  CHECK(unreachable.out.find("postgres: cannot connect") != std::string::npos);
  CHECK(unreachable.out.find("listening on") == std::string::npos);

  const auto foreign = run_reference_to_exit({"--store", "mysql://127.0.0.1/x"}, std::chrono::seconds(10),
                                             Collect::stdout_and_stderr);
  CHECK(foreign.exit_code == 2);
  CHECK(foreign.out.find("not a postgres:// or postgresql:// URL") != std::string::npos);
}
