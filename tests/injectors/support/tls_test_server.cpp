#include "support/tls_test_server.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "support/loopback_listener.h"

namespace idemproof::testkit {

SelfSignedCertificate::SelfSignedCertificate(const char* common_name)
    : key_(EVP_EC_gen("prime256v1")), cert_(X509_new()) {
  if (key_ == nullptr || cert_ == nullptr) throw std::runtime_error("OpenSSL cannot make a key or certificate");
  X509_set_version(cert_, 2);  // v3: extensions
  ASN1_INTEGER_set(X509_get_serialNumber(cert_), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert_), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert_), 3600);
  X509_set_pubkey(cert_, key_);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert_), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert_, X509_get_subject_name(cert_));
  // The address a client checks is in subjectAltName, never the CN.
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, "IP:127.0.0.1");
  X509_add_ext(cert_, san, -1);
  X509_EXTENSION_free(san);
  if (X509_sign(cert_, key_, EVP_sha256()) <= 0) throw std::runtime_error("OpenSSL cannot sign the certificate");
}

SelfSignedCertificate::~SelfSignedCertificate() {
  X509_free(cert_);
  EVP_PKEY_free(key_);
}

bool SelfSignedCertificate::WritePem(const std::string& path) const {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = PEM_write_X509(f, cert_) == 1;
  return std::fclose(f) == 0 && ok;
}

NoAlpnTlsServer::NoAlpnTlsServer() {
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx_ == nullptr) throw std::runtime_error("OpenSSL cannot make a server context");
  // No TLS 1.3 session tickets: written after the handshake, they met a
  // socket the client had just closed (SIGPIPE in the test process).
  SSL_CTX_set_num_tickets(ctx_, 0);
  if (SSL_CTX_use_certificate(ctx_, identity_.cert()) != 1 || SSL_CTX_use_PrivateKey(ctx_, identity_.key()) != 1)
    throw std::runtime_error("the server context takes no certificate");
  fd_ = listen_loopback(&port_, 4);
  if (fd_ < 0) throw std::runtime_error("cannot listen on loopback");
  thread_ = std::thread([this] { Serve(); });
}

NoAlpnTlsServer::~NoAlpnTlsServer() {
  Wait();
  ::close(fd_);
  SSL_CTX_free(ctx_);
}

void NoAlpnTlsServer::Wait() {
  if (thread_.joinable()) thread_.join();
}

void NoAlpnTlsServer::Serve() {
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

}  // namespace idemproof::testkit
