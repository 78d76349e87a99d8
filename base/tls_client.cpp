#include "base/tls_client.h"

#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

namespace idemproof {
namespace {

bool IsAddress(const std::string& name) {
  unsigned char scratch[16];
  return ::inet_pton(AF_INET, name.c_str(), scratch) == 1 || ::inet_pton(AF_INET6, name.c_str(), scratch) == 1;
}

}  // namespace

std::string OpenSslErrors(const std::string& what) {
  std::string out = what;
  bool first = true;
  while (unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    out += std::string(first ? ": " : "; ") + text;
    first = false;
  }
  return out;
}

Result<TlsClientContext> MakeTlsClientContext(const TlsOptions& tls, std::string_view alpn) {
  TlsClientContext ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) return Status(StatusCode::kInternal, OpenSslErrors("TLS: no context"));
  if (!alpn.empty() && SSL_CTX_set_alpn_protos(ctx.get(), reinterpret_cast<const unsigned char*>(alpn.data()),
                                               static_cast<unsigned int>(alpn.size())) != 0)
    return Status(StatusCode::kInternal, OpenSslErrors("TLS: cannot offer ALPN"));
  SSL_CTX_set_verify(ctx.get(), tls.insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
  if (!tls.insecure) {
    const int loaded = tls.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx.get())
                                           : SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr);
    if (loaded != 1)
      return Status(StatusCode::kInvalidConfig,
                    OpenSslErrors("TLS: cannot load the CA " + (tls.ca_file.empty() ? "store" : tls.ca_file)));
  }
  return ctx;
}

Status PrepareTlsClient(SSL* ssl, const TlsOptions& tls, const std::string& host) {
  const std::string& name = tls.NameFor(host);
  const bool address = IsAddress(name);
  if (!address) SSL_set_tlsext_host_name(ssl, name.c_str());  // SNI carries names, never addresses
  if (tls.insecure) return Status::Ok();
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (address ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) != 1
              : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0) != 1)
    return Status::InvalidArgument("tls: cannot check the name " + name);
  return Status::Ok();
}

std::string TlsHandshakeError(const SSL* ssl) {
  const long verify = SSL_get_verify_result(ssl);
  if (verify == X509_V_OK) return OpenSslErrors("TLS: handshake failed");
  ERR_clear_error();
  return std::string("TLS: certificate verify failed (") + X509_verify_cert_error_string(verify) + ")";
}

}  // namespace idemproof
