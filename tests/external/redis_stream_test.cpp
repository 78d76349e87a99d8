// The reference service's Redis Streams consumer against a real redis-server
// this test starts itself (ephemeral loopback port, no persistence) and kills:
// duplicate publishes, a consumer killed after the effect and before XACK
// whose pending entry a second consumer claims (XAUTOCLAIM), two consumers on
// one group. Correct: each business message applied once; inbox-no-dedup:
// applied per delivery.
#include <catch2/catch.hpp>

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "../reference/http_client.h"
#include "../reference/temp_dir.h"
#include "child.h"

using namespace idemproof::testing;
using idemproof::ref::testing::http_call;
using idemproof::ref::testing::HttpCall;
using idemproof::ref::testing::TempDir;
using nlohmann::json;

namespace {

const char* kListening = R"(listening on 127\.0\.0\.1:(\d+))";

class Redis {
 public:
  Redis()
      : port_(free_port()),
        server_({"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no"},
                "Ready to accept connections") {
    const timeval tv{2, 0};
    ctx_.reset(redisConnectWithTimeout("127.0.0.1", port_, tv));
    REQUIRE(ctx_);
    REQUIRE(ctx_->err == 0);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  long long integer(const std::string& fmt_a, const std::string& b = "", const std::string& c = "") {
    auto* r = static_cast<redisReply*>(redisCommand(ctx_.get(), fmt_a.c_str(), b.c_str(), c.c_str()));
    REQUIRE(r != nullptr);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_INTEGER)
      v = r->element[0]->integer;  // XPENDING summary: [count, ...]
    freeReplyObject(r);
    return v;
  }
  void publish(const std::string& message_id, int amount) {
    auto* r = static_cast<redisReply*>(redisCommand(ctx_.get(), "XADD idemproof:inbox * message_id %s account a1 amount %d",
                                                    message_id.c_str(), amount));
    REQUIRE(r != nullptr);
    CHECK(r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
  }
  long long pending() { return integer("XPENDING idemproof:inbox idemproof-ref"); }

 private:
  int port_;
  Child server_;
  std::unique_ptr<redisContext, decltype(&redisFree)> ctx_{nullptr, redisFree};
};

std::unique_ptr<Child> start_consumer(const TempDir& dir, const Redis& redis, const std::string& name,
                                      const std::string& flaw) {
  return std::make_unique<Child>(
      std::vector<std::string>{built("reference-impl/idemproof-ref"), "--port", "0", "--db", dir.file("ref.db"),
                               "--redis", redis.address(), "--consumer", name, "--claim-idle", "300ms", "--flaw",
                               flaw},
      kListening);
}

json account(const Child& ref) {
  auto r = http_call(HttpCall{"GET", ref.url() + "/accounts?account=a1", {}, std::nullopt});
  REQUIRE(r.status == 200);
  return json::parse(r.body);
}

// Polls until `done` or ~10 s; consumers work asynchronously.
template <typename Done>
bool eventually(Done done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// m1 published twice, m2 once; the consumer dies after m3's effect, before
// XACK; a second consumer claims m3. Returns the `applied` count at the end.
long long redelivery_run(const std::string& flaw) {
  TempDir dir;
  Redis redis;
  auto first = start_consumer(dir, redis, "c1", flaw);
  redis.publish("m1", 5);
  redis.publish("m1", 5);
  redis.publish("m2", 7);
  REQUIRE(eventually([&] { return redis.pending() == 0 && account(*first)["applied"] >= 2; }));
  auto chaos = http_call(HttpCall{"POST", first->url() + "/inbox/_chaos", {"Content-Type: application/json"},
                                  std::string(R"({"die_before_ack":1})")});
  REQUIRE(chaos.status == 200);
  redis.publish("m3", 11);
  const int status = first->wait_exit(std::chrono::seconds(10));
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(redis.pending() == 1);  // applied, never acknowledged
  // Two consumers on one group; the second claims the dead one's entry.
  auto second = start_consumer(dir, redis, "c2", flaw);
  auto third = start_consumer(dir, redis, "c3", flaw);
  redis.publish("m4", 13);
  redis.publish("m4", 13);
  REQUIRE(eventually([&] { return redis.pending() == 0; }));
  const json a = account(*second);
  return a["applied"].get<long long>();
}

}  // namespace

TEST_CASE("Redis Streams: duplicates, a kill before XACK and a claimed redelivery apply each message once", "[redis][slow]") {
  CHECK(redelivery_run("none") == 4);  // m1, m2, m3, m4
}

TEST_CASE("Redis Streams: flaw inbox-no-dedup applies every delivery", "[redis][flaw][slow]") {
  CHECK(redelivery_run("inbox-no-dedup") == 7);  // m1 x2, m2, m3 x2 (redelivered), m4 x2
}
