// HttpClient against a real loopback server: answers, reuse, the three
// outcomes (answered / no answer / not sent), deadlines, cancellation, and
// the concurrent burst on separate connections, and the run's budget of
// kept body bytes (KeptBudget) over sends and bursts.
#include <catch2/catch.hpp>

#include <thread>

#include "clients/http_client.h"
#include "clients/kept_budget.h"
#include "local_http_server.h"

using idemproof::runtime::HttpClient;
using idemproof::runtime::HttpOutcome;
using idemproof::runtime::KeptBudget;
using idemproof::runtime::OutgoingRequest;
using idemproof::testing::LocalHttpServer;

namespace {

OutgoingRequest Post(const std::string& url, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  OutgoingRequest r;
  r.set_url(url);
  r.message.method = "POST";
  r.message.headers = {{"Idempotency-Key", "k-1"}, {"Content-Type", "application/json"}};
  r.message.body = R"({"a":1})";
  r.timeout = timeout;
  return r;
}

// A port nobody listens on: bind one, then close it.
int ClosedPort() {
  LocalHttpServer s(LocalHttpServer::Behaviour::kAnswer);
  int port = s.port();
  s.Stop();
  return port;
}

}  // namespace

// An egress checks its https:// downstream this way at start: a connection,
// no request (a TLS refusal is tls_refused; tests/transport covers that).
TEST_CASE("connect_only opens a connection and sends nothing", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
  HttpClient client;
  auto up = client.connect_only(Post(server.url("/orders")));
  CHECK(up.outcome == HttpOutcome::kNotSent);
  CHECK(up.error.empty());
  CHECK_FALSE(up.tls_refused);
  for (int i = 0; i < 100 && server.connections() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(server.connections() == 1);
  CHECK(server.requests() == 0);
  auto down = client.connect_only(Post("http://127.0.0.1:" + std::to_string(ClosedPort()) + "/"));
  CHECK(down.outcome == HttpOutcome::kNotSent);
  CHECK_FALSE(down.error.empty());
  CHECK_FALSE(down.tls_refused);
}

TEST_CASE("an answer is recorded with status, headers, body and times", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
  HttpClient client;
  auto e = client.send(Post(server.url("/orders")));
  REQUIRE(e.outcome == HttpOutcome::kAnswered);
  CHECK(e.status == 201);
  CHECK(e.response_header("content-type") == std::optional<std::string>("application/json"));
  CHECK(e.response_header("X-Test") == std::optional<std::string>("yes"));
  CHECK(e.response_body.rfind("{\"echo\":", 0) == 0);
  CHECK(e.error.empty());
  CHECK(e.start_ns > 0);
  CHECK(e.end_ns >= e.start_ns);
  CHECK_FALSE(e.connection_reused);
  // What reached the server is what the exchange says was sent.
  auto received = server.received();
  REQUIRE(received.size() == 1);
  CHECK(received[0].rfind("POST /orders HTTP/1.1\r\n", 0) == 0);
  CHECK(received[0].find("Idempotency-Key: k-1\r\n") != std::string::npos);
  CHECK(received[0].find("Expect:") == std::string::npos);
  CHECK(received[0].substr(received[0].size() - 7) == R"({"a":1})");
}

TEST_CASE("an outgoing request's URL is its origin and its message's target, given back as set", "[http]") {
  OutgoingRequest r;
  CHECK(r.message.method == "GET");
  r.set_url("http://127.0.0.1:8080/api/orders?biz_no=b1&x=/y");
  CHECK(r.origin == "http://127.0.0.1:8080");
  CHECK(r.message.target == "/api/orders?biz_no=b1&x=/y");
  CHECK(r.url() == "http://127.0.0.1:8080/api/orders?biz_no=b1&x=/y");
  r.set_url("http://localhost:9");  // no path: none made up
  CHECK(r.origin == "http://localhost:9");
  CHECK(r.message.target.empty());
  CHECK(r.url() == "http://localhost:9");
  r.set_url("/orders");  // no scheme: all of it is the target
  CHECK(r.origin.empty());
  CHECK(r.url() == "/orders");
  // The request line carries the message's target; the origin picks the connection.
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
  OutgoingRequest get;
  get.set_url(server.url("/jobs/j1?view=full"));
  get.timeout = std::chrono::seconds(5);
  HttpClient client;
  REQUIRE(client.send(get).outcome == HttpOutcome::kAnswered);
  REQUIRE(server.received().size() == 1);
  CHECK(server.received()[0].rfind("GET /jobs/j1?view=full HTTP/1.1\r\n", 0) == 0);
}

TEST_CASE("a second request on one client reuses the open connection", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
  HttpClient client;
  auto first = client.send(Post(server.url()));
  auto second = client.send(Post(server.url()));
  REQUIRE(first.outcome == HttpOutcome::kAnswered);
  REQUIRE(second.outcome == HttpOutcome::kAnswered);
  CHECK_FALSE(first.connection_reused);
  CHECK(second.connection_reused);
  CHECK(server.connections() == 1);
  CHECK(server.requests() == 2);
}

TEST_CASE("a refused connection means the request was not sent", "[http]") {
  HttpClient client;
  auto e = client.send(Post("http://127.0.0.1:" + std::to_string(ClosedPort()) + "/"));
  CHECK(e.outcome == HttpOutcome::kNotSent);
  CHECK(e.status == 0);
  CHECK_FALSE(e.error.empty());
}

TEST_CASE("silence past the deadline is no answer, never a failure", "[http][slow]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kSilent);
  HttpClient client;
  auto e = client.send(Post(server.url(), std::chrono::milliseconds(300)));
  CHECK(e.outcome == HttpOutcome::kNoAnswer);
  CHECK(e.status == 0);
  CHECK(server.requests() == 1);  // it did arrive: the outcome is unknown to the caller
  CHECK(e.error.find("imeout") != std::string::npos);
}

TEST_CASE("a reset after the request arrived is no answer", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kReset);
  HttpClient client;
  auto e = client.send(Post(server.url()));
  CHECK(e.outcome == HttpOutcome::kNoAnswer);
  CHECK(server.requests() == 1);
}

TEST_CASE("libcurl's silent resend on a reused connection is counted, never hidden", "[http]") {
  // The second request reaches the server, which resets the reused connection
  // without answering; libcurl then sends it again on a new connection.
  SECTION("the resend is answered: two attempts, the server saw it twice") {
    LocalHttpServer server(LocalHttpServer::Behaviour::kResetSecond);
    HttpClient client;
    REQUIRE(client.send(Post(server.url())).outcome == HttpOutcome::kAnswered);
    auto e = client.send(Post(server.url()));
    CHECK(e.outcome == HttpOutcome::kAnswered);
    CHECK(e.send_attempts == 2);
    CHECK(server.requests() == 3);
  }
  SECTION("the resend is refused: no answer (it went out once), not 'not sent'") {
    LocalHttpServer server(LocalHttpServer::Behaviour::kResetSecond);
    HttpClient client;
    auto first = client.send(Post(server.url()));
    REQUIRE(first.outcome == HttpOutcome::kAnswered);
    CHECK(first.send_attempts == 1);
    server.RefuseNewConnections();
    auto e = client.send(Post(server.url()));
    CHECK(server.requests() == 2);  // it did arrive before the reset
    CHECK(e.outcome == HttpOutcome::kNoAnswer);
    CHECK(e.send_attempts == 1);  // the resend never got a connection
    CHECK(e.error.find("resend") != std::string::npos);
  }
}

TEST_CASE("the cancel flag abandons a request in flight and refuses new ones", "[http][slow]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kSilent);
  std::atomic<bool> cancel{false};
  HttpClient client(&cancel);
  std::thread canceller([&] {
    while (server.requests() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancel.store(true);
  });
  auto e = client.send(Post(server.url(), std::chrono::seconds(60)));
  canceller.join();
  CHECK(e.outcome == HttpOutcome::kNoAnswer);
  CHECK(e.error == "cancelled");
  auto after = client.send(Post(server.url()));
  CHECK(after.outcome == HttpOutcome::kNotSent);
  CHECK(server.requests() == 1);
}

TEST_CASE("a concurrent burst opens one connection per request", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
  HttpClient client;
  std::vector<OutgoingRequest> burst(6, Post(server.url("/orders")));
  auto results = client.send_concurrently(burst);
  REQUIRE(results.size() == 6);
  for (const auto& e : results) {
    CHECK(e.outcome == HttpOutcome::kAnswered);
    CHECK(e.status == 201);
    CHECK_FALSE(e.connection_reused);
  }
  CHECK(server.connections() == 6);
  CHECK(server.requests() == 6);
}

TEST_CASE("a burst keeps each request's own deadline", "[http][slow]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kSilent);
  HttpClient client;
  std::vector<OutgoingRequest> burst(3, Post(server.url(), std::chrono::milliseconds(300)));
  auto results = client.send_concurrently(burst);
  for (const auto& e : results) CHECK(e.outcome == HttpOutcome::kNoAnswer);
}

// Answers of 64 KiB against a budget of 100 KiB (beyond each 4 KiB head):
// the first keeps all, the second what is left, the third its head only.
TEST_CASE("sends share the run's kept budget: once spent, answers keep their first 4 KiB, cut by max_kept", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswerBig);
  const std::size_t big = LocalHttpServer::kBigBody;
  KeptBudget budget(100 * 1024);
  HttpClient client;
  OutgoingRequest r = Post(server.url("/big"));
  r.max_body = std::size_t{1} << 20;
  r.kept = &budget;
  auto first = client.send(r);
  REQUIRE(first.outcome == HttpOutcome::kAnswered);
  CHECK(first.response_body.size() == big);
  CHECK_FALSE(first.body_truncated);
  CHECK(budget.used() == big - KeptBudget::kHead);
  auto second = client.send(r);
  REQUIRE(second.outcome == HttpOutcome::kAnswered);
  CHECK(second.body_truncated);
  CHECK(second.body_cut_by_kept);
  CHECK(second.body_size == big);  // Content-Length: exact
  CHECK(second.response_body.size() == KeptBudget::kHead + (100 * 1024 - (big - KeptBudget::kHead)));
  CHECK(second.request.max_body == r.max_body);  // recorded as asked
  CHECK(budget.used() == 100 * 1024);
  auto third = client.send(r);
  REQUIRE(third.outcome == HttpOutcome::kAnswered);
  CHECK(third.body_cut_by_kept);
  CHECK(third.response_body.size() == KeptBudget::kHead);
  CHECK(budget.used() == 100 * 1024);
  // A new run on the same budget (explore's next trial) keeps whole answers again.
  budget.Reset();
  CHECK(budget.used() == 0);
  auto fourth = client.send(r);
  CHECK_FALSE(fourth.body_cut_by_kept);
  CHECK(fourth.response_body.size() == big);
  // max_body alone (no budget) still keeps the whole answer, and a cut at
  // max_body with the budget to spare is not a cut by the budget.
  OutgoingRequest plain = Post(server.url("/big"));
  CHECK(client.send(plain).response_body.size() == big);
  KeptBudget roomy(1 << 20);
  plain.max_body = 8 * 1024;
  plain.kept = &roomy;
  auto capped = client.send(plain);
  CHECK(capped.body_truncated);
  CHECK_FALSE(capped.body_cut_by_kept);
  CHECK(capped.response_body.size() == 8 * 1024);
  CHECK(roomy.used() == 8 * 1024 - KeptBudget::kHead);  // what it kept beyond its head
}

TEST_CASE("a concurrent burst shares what is left of the kept budget equally and gives back the rest", "[http]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswerBig);
  KeptBudget budget(30 * 1024);
  HttpClient client;
  OutgoingRequest r = Post(server.url("/big"));
  r.kept = &budget;
  std::vector<OutgoingRequest> burst(3, r);
  auto results = client.send_concurrently(burst);
  REQUIRE(results.size() == 3);
  for (const auto& e : results) {
    REQUIRE(e.outcome == HttpOutcome::kAnswered);
    CHECK(e.body_cut_by_kept);
    CHECK(e.response_body.size() == KeptBudget::kHead + 10 * 1024);
  }
  CHECK(budget.used() == 30 * 1024);
  // Small answers give back what they were granted.
  KeptBudget roomy(1 << 20);
  LocalHttpServer small(LocalHttpServer::Behaviour::kAnswer);
  OutgoingRequest s = Post(small.url("/orders"));
  s.kept = &roomy;
  auto answers = client.send_concurrently(std::vector<OutgoingRequest>(4, s));
  for (const auto& e : answers) CHECK_FALSE(e.body_truncated);
  CHECK(roomy.used() == 0);
}

TEST_CASE("the kept budget never grants more than it holds to threads reserving at once", "[http]") {
  KeptBudget budget(1 << 20);
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> granted{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) granted += budget.Reserve(3, 64 * 1024) - KeptBudget::kHead;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(granted.load() * 3 <= (1u << 20));
  CHECK(budget.used() == granted.load() * 3);
  CHECK(budget.used() > (1u << 20) - 3 * 8);  // all of it handed out, but for rounding
}
