// HttpSettings: how the harness speaks HTTP to a target, from the target
// file's top-level `http:` and `trace:` keys.
//   http: 1 | 2   2: HTTP/2 (h2c prior knowledge on http://, ALPN h2 on
//                 https://) for every libcurl request, and `mode: last_byte`
//                 bursts become single-packet groups over one HTTP/2
//                 connection (clients/h2_burst.h). Default 1.
//   trace: BOOL   every request carries a W3C traceparent (a trace id per
//                 scenario run, a span id per request). Default true.
//
// Thread-safety: a plain value.
#pragma once

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof::yaml {
class Reader;
}  // namespace idemproof::yaml

namespace idemproof {

struct HttpSettings {
  int version = 1;    // 1 or 2
  bool trace = true;  // send traceparent
};

// Reads `http:` and `trace:` of the target file's root map (either may be
// absent); a bad value fails at its file:line:column.
void ParseHttpSettings(const yaml::Reader& r, const YAML::Node& root, HttpSettings& out);

}  // namespace idemproof
