// NoAlpnTlsServer: a TLS server on loopback for the tests of the harness's
// raw TLS clients (the proxy's HTTP/2 upstream, the single-packet burst): a
// self-signed EC certificate for 127.0.0.1 made in memory, ONE connection,
// its handshake selecting no ALPN protocol, then every application byte read
// counted until the peer closes. Every wait is bounded by 5 s.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace idemproof::testkit {

// A self-signed certificate and its key (subjectAltName IP:127.0.0.1).
// Throws std::runtime_error when OpenSSL cannot make it.
class SelfSignedCertificate {
 public:
  explicit SelfSignedCertificate(const char* common_name);
  ~SelfSignedCertificate();
  SelfSignedCertificate(const SelfSignedCertificate&) = delete;
  SelfSignedCertificate& operator=(const SelfSignedCertificate&) = delete;
  // Writes the certificate as PEM (a CA file to trust); false on failure.
  bool WritePem(const std::string& path) const;
  X509* cert() const { return cert_; }
  EVP_PKEY* key() const { return key_; }

 private:
  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
};

class NoAlpnTlsServer {
 public:
  // Listens and serves in a thread. Throws std::runtime_error on failure.
  NoAlpnTlsServer();
  ~NoAlpnTlsServer();  // waits for the connection to end (at most 5 s)
  NoAlpnTlsServer(const NoAlpnTlsServer&) = delete;
  NoAlpnTlsServer& operator=(const NoAlpnTlsServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string origin() const { return "https://127.0.0.1:" + std::to_string(port_); }
  const SelfSignedCertificate& identity() const { return identity_; }
  // Returns once the connection ended (or none came within 5 s).
  void Wait();
  bool accepted() const { return accepted_; }
  bool handshaken() const { return handshaken_; }
  long app_bytes() const { return app_bytes_; }

 private:
  void Serve();
  SelfSignedCertificate identity_{"127.0.0.1"};
  SSL_CTX* ctx_ = nullptr;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> accepted_{false};
  std::atomic<bool> handshaken_{false};
  std::atomic<long> app_bytes_{0};
  std::thread thread_;
};

}  // namespace idemproof::testkit
