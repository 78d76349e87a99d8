// store-error (injectors/tcp_faults/store_error.h) between hiredis and a real
// redis-server this test starts itself (ephemeral loopback port, no
// persistence), through the tcp fault proxy: the matching write is answered
// with Redis's own error reply (an EVAL of redis.error_reply ran in its
// place), it is not applied, the connection goes on, and the next write
// (times: 1) is applied.
#include <catch2/catch.hpp>

#include <hiredis/hiredis.h>

#include <memory>
#include <string>

#include "child.h"
#include "injectors/fault_event.h"
#include "injectors/tcp_fault.h"
#include "injectors/tcp_fault_proxy.h"
#include "injectors/tcp_faults/store_error.h"

using namespace idemproof::testing;
using namespace idemproof::injectors;

namespace {

struct Reply {
  int type = 0;
  std::string text;
};

Reply Command(redisContext* c, const char* format, const char* a = "", const char* b = "") {
  auto* r = static_cast<redisReply*>(redisCommand(c, format, a, b));
  REQUIRE(r != nullptr);
  Reply out{r->type, r->str ? std::string(r->str, r->len) : std::string()};
  freeReplyObject(r);
  return out;
}

}  // namespace

TEST_CASE("store-error through hiredis: a SET answered with Redis's own OOM error, not applied, the connection kept",
          "[external][store-error][slow]") {
  const int port = free_port();
  Child server({"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                "no"},
               "Ready to accept connections");
  FaultEventLog events;
  TcpProxySettings settings;
  settings.upstream = Endpoint{"127.0.0.1", static_cast<std::uint16_t>(port)};
  TcpFaultProxy proxy(settings, &events);
  REQUIRE(proxy.start().ok());
  const timeval tv{2, 0};
  std::unique_ptr<redisContext, decltype(&redisFree)> c(
      redisConnectWithTimeout("127.0.0.1", proxy.endpoint().port, tv), redisFree);
  REQUIRE(c);
  REQUIRE(c->err == 0);
  REQUIRE(Command(c.get(), "SET %s %s", "k", "before").type == REDIS_REPLY_STATUS);  // opened before arming

  auto rule = std::make_shared<TcpFaultRule>(std::make_shared<StoreError>(StoreErrorOptions{}), FaultSettings{});
  proxy.arm(rule);
  CHECK(Command(c.get(), "GET %s", "k").text == "before");  // a read passes
  const Reply failed = Command(c.get(), "SET %s %s", "k", "during");
  CHECK(failed.type == REDIS_REPLY_ERROR);
  CHECK(failed.text == "OOM command not allowed when used memory > 'maxmemory'.");
  CHECK(Command(c.get(), "GET %s", "k").text == "before");  // not applied
  CHECK(Command(c.get(), "SET %s %s", "k", "after").type == REDIS_REPLY_STATUS);  // times: 1
  CHECK(Command(c.get(), "GET %s", "k").text == "after");
  CHECK(rule->injected.load() == 1);
  proxy.heal();
}
