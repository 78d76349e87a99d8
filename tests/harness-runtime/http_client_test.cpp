// HttpClient against a real loopback server: answers, reuse, the three
// outcomes (answered / no answer / not sent), deadlines, cancellation, and
// the concurrent burst on separate connections.
#include <catch2/catch.hpp>

#include <thread>

#include "local_http_server.h"
#include "runtime/http_client.h"

using idemproof::runtime::HttpClient;
using idemproof::runtime::HttpOutcome;
using idemproof::runtime::HttpRequest;
using idemproof::testing::LocalHttpServer;

namespace {

HttpRequest Post(const std::string& url, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  HttpRequest r;
  r.method = "POST";
  r.url = url;
  r.headers = {{"Idempotency-Key", "k-1"}, {"Content-Type", "application/json"}};
  r.body = R"({"a":1})";
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
  std::vector<HttpRequest> burst(6, Post(server.url("/orders")));
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
  std::vector<HttpRequest> burst(3, Post(server.url(), std::chrono::milliseconds(300)));
  auto results = client.send_concurrently(burst);
  for (const auto& e : results) CHECK(e.outcome == HttpOutcome::kNoAnswer);
}
