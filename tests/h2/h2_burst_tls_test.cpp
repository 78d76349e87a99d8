// FireH2Burst over TLS, refused before anything was sent (issue #35): a
// server certificate the client's CA file does not vouch for, and a server
// that selects no protocol in ALPN. The bursts that go through (haproxy's
// TLS front, ALPN h2) are tests/transport/run_h2_tls.sh's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "clients/h2_burst.h"

namespace {

using idemproof::runtime::FireH2Burst;
using idemproof::runtime::H2BurstOptions;
using idemproof::runtime::H2BurstResult;
using idemproof::runtime::HttpOutcome;
using idemproof::runtime::OutgoingRequest;

// A self-signed EC certificate for the address 127.0.0.1, made in memory.
struct SelfSigned {
  EVP_PKEY* key = EVP_EC_gen("prime256v1");
  X509* cert = X509_new();
  explicit SelfSigned(const char* name) {
    X509_set_version(cert, 2);  // v3: extensions
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(name), -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    // The address a client checks is in subjectAltName, never the CN.
    X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, "IP:127.0.0.1");
    X509_add_ext(cert, san, -1);
    X509_EXTENSION_free(san);
    X509_sign(cert, key, EVP_sha256());
  }
  ~SelfSigned() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  // Writes the certificate as a PEM file (a CA file to trust).
  void WritePem(const std::string& path) const {
    FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    PEM_write_X509(f, cert);
    std::fclose(f);
  }
};

// A TLS server on loopback that knows no ALPN: one connection, its
// handshake, then every application byte it reads counted until the peer
// closes. Bounded by 5 s.
class TlsServer {
 public:
  TlsServer() : identity_("127.0.0.1") {
    ctx_ = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_num_tickets(ctx_, 0);  // nothing written after the handshake
    REQUIRE(SSL_CTX_use_certificate(ctx_, identity_.cert) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey(ctx_, identity_.key) == 1);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TlsServer() {
    Wait();
    ::close(fd_);
    SSL_CTX_free(ctx_);
  }
  std::string origin() const { return "https://127.0.0.1:" + std::to_string(port_); }
  const SelfSigned& identity() const { return identity_; }
  // After the connection ended (the destructor joined, or Wait()).
  void Wait() {
    if (thread_.joinable()) thread_.join();
  }
  bool accepted() const { return accepted_; }
  bool handshaken() const { return handshaken_; }
  long app_bytes() const { return app_bytes_; }

 private:
  void Serve() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return;
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    accepted_ = true;
    timeval tv{5, 0};
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, c);
    if (SSL_accept(ssl) == 1) {
      handshaken_ = true;
      char buf[1024];
      for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) app_bytes_ += n;
    }
    SSL_free(ssl);
    ::close(c);
  }
  SelfSigned identity_;
  SSL_CTX* ctx_ = nullptr;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> accepted_{false};
  std::atomic<bool> handshaken_{false};
  std::atomic<long> app_bytes_{0};
  std::thread thread_;
};

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
  TlsServer server;
  const std::string ca = (std::filesystem::temp_directory_path() /
                          ("h2-burst-other-ca-" + std::to_string(::getpid()) + ".pem")).string();
  SelfSigned("another CA").WritePem(ca);
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
  TlsServer server;
  const std::string ca = (std::filesystem::temp_directory_path() /
                          ("h2-burst-own-ca-" + std::to_string(::getpid()) + ".pem")).string();
  server.identity().WritePem(ca);
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
  TlsServer server;
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
  TlsServer server;
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
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(server.origin().substr(server.origin().rfind(':') + 1))));
  ::connect(poke, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::close(poke);
  server.Wait();
  CHECK_FALSE(server.handshaken());
}
