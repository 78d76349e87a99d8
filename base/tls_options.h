// TlsOptions: how the harness checks an https:// peer, one value for the
// target file (`tls:`, model/tls_settings.h), the libcurl client and the
// injectors' raw senders (the last-byte burst, the proxies' upstreams).
// Verification is on unless `insecure`; an empty ca_file means the system
// store; server_name, when set, is the name sent as SNI and checked against
// the certificate instead of the URL's host (the connection still goes to
// the URL's address).
#pragma once

#include <string>

#include "base/status.h"

namespace idemproof {

struct TlsOptions {
  std::string ca_file;      // PEM bundle to trust; "" = the system store
  bool insecure = false;    // true: no certificate nor host check
  std::string server_name;  // SNI and the name checked; "" = the URL's host

  bool operator==(const TlsOptions&) const = default;
  // The name to send as SNI and to verify for a connection to `host`.
  const std::string& NameFor(const std::string& host) const { return server_name.empty() ? host : server_name; }
};

// The error of a target whose TLS handshake failed (`error`: the client's
// words): kInvalidConfig, a run stops on it with exit 2 (the target file's
// tls: does not fit the target); nothing was sent. `who`, when not the
// target itself: "service stub", "egress stub" (whose tls: it is).
inline Status TlsRefused(const std::string& error, const std::string& url, const std::string& file,
                         const std::string& who = "") {
  return Status(StatusCode::kInvalidConfig,
                "tls: " + (who.empty() ? "" : who + ": ") + url + " failed the TLS handshake, nothing was sent: " +
                    error + " (its tls: in the target file " + file +
                    " names the CA to trust: {ca_file: ...}, or {insecure: true} to check nothing)");
}
inline bool IsTlsRefusal(const Status& s) {
  return s.code() == StatusCode::kInvalidConfig && s.message().rfind("tls: ", 0) == 0;
}

}  // namespace idemproof
