// TlsClientContext: the OpenSSL side of the harness's raw TLS connections,
// those that drive an SSL* themselves (the last-byte burst,
// injectors/burst.h; the single-packet HTTP/2 burst, harness/clients/
// h2_burst.h): one client context built from a TlsOptions, the per-connection
// name check, and the handshake's error in the words HttpClient reports.
// libcurl and Asio's ssl streams set themselves up from the same TlsOptions.
//
// Thread-safety: a built context may be shared by connections on several
// threads (OpenSSL's SSL_CTX is); an SSL* is one thread's at a time. The
// error texts read this thread's OpenSSL error queue.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <openssl/ssl.h>

#include "base/status.h"
#include "base/tls_options.h"

namespace idemproof {

struct TlsContextFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using TlsClientContext = std::unique_ptr<SSL_CTX, TlsContextFree>;

// A client context that verifies the peer as `tls` says (unless insecure:
// tls.ca_file, or the system store when it is empty) and offers `alpn` in
// ALPN's wire form (each name behind its length byte: "\x02h2"; empty:
// no ALPN). Errors (messages start "TLS: ", as a refused handshake's):
// kInvalidConfig when the CA file cannot be loaded, kInternal when OpenSSL
// cannot make a context.
Result<TlsClientContext> MakeTlsClientContext(const TlsOptions& tls, std::string_view alpn);

// For a connection to `host`: SNI (a name only, never an address) and,
// unless tls.insecure, the name or address the peer's certificate must
// carry, both tls.NameFor(host). REQUIRES: ssl made from such a context,
// before SSL_connect. kInvalidArgument when the name cannot be set.
Status PrepareTlsClient(SSL* ssl, const TlsOptions& tls, const std::string& host);

// Why SSL_connect on `ssl` failed: "TLS: certificate verify failed (unable
// to get local issuer certificate)", or "TLS: handshake failed: <OpenSSL's
// errors>". Drains this thread's error queue.
std::string TlsHandshakeError(const SSL* ssl);

// `what`, then ": " and the OpenSSL errors queued on this thread ("; "
// between them), which it drains; `what` alone when there are none.
std::string OpenSslErrors(const std::string& what);

}  // namespace idemproof
