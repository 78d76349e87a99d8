// FireH2Burst over TLS, refused before anything was sent (issue #35): a
// server certificate the client's CA file does not vouch for, and a server
// that selects no protocol in ALPN. The bursts that go through (haproxy's
// TLS front, ALPN h2) are tests/transport/run_h2_tls.sh's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "clients/h2_burst.h"
#include "support/tls_test_server.h"

namespace {

using idemproof::runtime::FireH2Burst;
using idemproof::runtime::H2BurstOptions;
using idemproof::runtime::H2BurstResult;
using idemproof::runtime::HttpOutcome;
using idemproof::runtime::OutgoingRequest;
using idemproof::testkit::NoAlpnTlsServer;
using idemproof::testkit::SelfSignedCertificate;

std::vector<OutgoingRequest> Burst(const std::string& origin, const idemproof::TlsOptions& tls, int n) {
  std::vector<OutgoingRequest> out;
  for (int i = 0; i < n; ++i) {
    OutgoingRequest q;
    q.origin = origin;
    q.message.method = "POST";
    q.message.target = "/orders";
    q.message.body = R"({"biz_no":"b1"})";
    q.timeout = std::chrono::milliseconds(3000);
    q.tls = tls;
    q.http_version = 2;
    out.push_back(q);
  }
  return out;
}

}  // namespace

TEST_CASE("an h2 burst over TLS to a certificate its CA file does not vouch for: not sent, a TLS refusal",
          "[h2][tls]") {
  NoAlpnTlsServer server;
  const std::string ca = (std::filesystem::temp_directory_path() /
                          ("h2-burst-other-ca-" + std::to_string(::getpid()) + ".pem")).string();
  REQUIRE(SelfSignedCertificate("another CA").WritePem(ca));
  const H2BurstResult r = FireH2Burst(Burst(server.origin(), {ca, false, ""}, 3), H2BurstOptions{});
  std::filesystem::remove(ca);
  server.Wait();
  REQUIRE(r.exchanges.size() == 3);
  for (const auto& e : r.exchanges) {
    INFO(e.error);
    CHECK(e.outcome == HttpOutcome::kNotSent);
    CHECK(e.tls_refused);
    CHECK(e.error.rfind("TLS: certificate verify failed (", 0) == 0);
  }
  CHECK(r.release_writes == 0);
  CHECK(server.accepted());
  CHECK_FALSE(server.handshaken());
  CHECK(server.app_bytes() == 0);
}

TEST_CASE("an h2 burst over TLS with the server's own certificate trusted gets past the check", "[h2][tls]") {
  // The same server, its certificate the CA file: the handshake passes, and
  // the burst stops at ALPN (this server selects nothing), not at the check.
  NoAlpnTlsServer server;
  const std::string ca = (std::filesystem::temp_directory_path() /
                          ("h2-burst-own-ca-" + std::to_string(::getpid()) + ".pem")).string();
  REQUIRE(server.identity().WritePem(ca));
  const H2BurstResult r = FireH2Burst(Burst(server.origin(), {ca, false, ""}, 2), H2BurstOptions{});
  std::filesystem::remove(ca);
  server.Wait();
  for (const auto& e : r.exchanges) {
    INFO(e.error);
    CHECK(e.outcome == HttpOutcome::kNotSent);
    CHECK_FALSE(e.tls_refused);
    CHECK(e.error.find("did not select h2 in ALPN (it selected no protocol)") != std::string::npos);
  }
}

TEST_CASE("an h2 burst over TLS to a server that selects no protocol in ALPN: not sent, saying so", "[h2][tls]") {
  NoAlpnTlsServer server;
  const H2BurstResult r = FireH2Burst(Burst(server.origin(), {"", /*insecure=*/true, ""}, 2), H2BurstOptions{});
  server.Wait();
  REQUIRE(r.exchanges.size() == 2);
  for (const auto& e : r.exchanges) {
    INFO(e.error);
    CHECK(e.outcome == HttpOutcome::kNotSent);
    CHECK_FALSE(e.tls_refused);
    CHECK(e.error.find("did not select h2 in ALPN (it selected no protocol)") != std::string::npos);
  }
  CHECK(r.release_writes == 0);
  CHECK(server.app_bytes() == 0);  // not one HTTP/2 byte: no preface, no frame
}

TEST_CASE("an h2 burst over TLS with a CA file that cannot be loaded: not sent, no connection", "[h2][tls]") {
  NoAlpnTlsServer server;
  const H2BurstResult r =
      FireH2Burst(Burst(server.origin(), {"/nonexistent/idemproof-ca.pem", false, ""}, 2), H2BurstOptions{});
  for (const auto& e : r.exchanges) {
    INFO(e.error);
    CHECK(e.outcome == HttpOutcome::kNotSent);
    CHECK(e.error.rfind("TLS: cannot load the CA /nonexistent/idemproof-ca.pem", 0) == 0);
  }
  // The server waits for a connection that never comes (5 s): wake it.
  const int poke = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(server.port());
  ::connect(poke, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::close(poke);
  server.Wait();
  CHECK_FALSE(server.handshaken());
}
