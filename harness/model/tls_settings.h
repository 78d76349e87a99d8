// The target file's `tls:` map: how every https:// request of a run checks
// the peer (base/tls_options.h).
//   tls:
//     ca_file: certs/ca.pem      # PEM CA bundle; relative to the target file's folder
//     insecure: false            # true: no verification (the report says so)
//     server_name: api.example   # SNI and the name verified, instead of the URL's host
// Verification is on by default (no `tls:` = the system store).
//
// Thread-safety: a pure function.
#pragma once

#include <string>

#include "base/tls_options.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof::yaml {
class Reader;
}  // namespace idemproof::yaml

namespace idemproof {

// Reads `tls:` of `map` (may be absent) into `out`; a relative ca_file is
// resolved against the folder of `file` (the target file). An unknown key,
// a wrong type, a ca_file that is not a readable file, or ca_file together
// with insecure: true fails at its file:line:column, named `what` ("tls",
// "service 'stub'.tls", ...). The same keys serve the target, a service and
// an egress.
void ParseTlsSettings(const yaml::Reader& r, const YAML::Node& map, const std::string& file, TlsOptions& out,
                      const std::string& what = "tls");

}  // namespace idemproof
