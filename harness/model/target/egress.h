// `egress:` of the target file: the downstreams the service calls, run
// behind a proxy of the harness.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "base/tls_options.h"
#include "model/json_path.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// A downstream the service calls (`egress:`), run behind a proxy of the
// harness for each scenario run: started after the services, before the
// target (whose templates see {{egress.NAME.url}} / {{egress.NAME.port}}),
// stopped after the target. The proxy forwards to `upstream` and keeps the
// egress record: for every request that reached the downstream, one history
// event (process "egress", f "egress") with the egress name, method, path,
// target, body, the `record` fields of its JSON body and the answer's status
// and body (parsed JSON when it parses). Faults may act on that hop
// (a scenario fault with `on: egress.NAME`).
//
// With `protocol: tcp` the downstream is the service's own store (PostgreSQL,
// Redis, any TCP server): `upstream` is "HOST:PORT", the proxy copies raw
// bytes (injectors/tcp_fault_proxy.h), keeps no record and takes the tcp
// faults (pause, refuse, reset, cut-after); templates see
// {{egress.NAME.port}} and {{egress.NAME.address}}. The harness's own probes
// still go to the store directly.
struct EgressDescription {
  std::string name;
  std::string upstream;          // templated http:// URL (tcp: HOST:PORT) of the real downstream
  std::vector<JsonPath> record;  // JSON fields of request bodies kept in each entry (http only)
  // The request header carrying the idempotency key the service sends its
  // downstream (`key_header:`; "" = `none`): each entry keeps its value as
  // "key", so calls re-sent under one downstream key count as one effect.
  std::string key_header = "Idempotency-Key";
  bool tcp = false;              // `protocol: tcp` (default http)
  // How the proxy checks an https:// upstream: `tls:`, else the tls: of the
  // service whose {{services.NAME.url}} the upstream is, else verification on.
  TlsOptions tls;
  SourceMark mark;
};

// Reads `egress:` into t.egress (after `services:`: an egress to a service takes its tls:).
void ParseEgress(TargetLoadContext& cx, const YAML::Node& egress, TargetDescription& t);
// Once the file is read: probes' `egress:` and actions' `calls:` name http egress.
void CheckEgressUses(TargetLoadContext& cx, const TargetDescription& t);

}  // namespace idemproof
