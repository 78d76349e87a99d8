// EgressProxies: the proxies between the service under test and its own
// downstreams (the target file's `egress:`, model/target.h), one ChaosProxy
// (injectors/chaos_proxy.h) per downstream and scenario run.
//
// Start() expands each `upstream` (the services' variables are known by
// then), starts a proxy on 127.0.0.1 (free port) forwarding to it, and
// publishes egress.NAME.url / egress.NAME.port for the target's templates.
// Every request a proxy writes to its downstream becomes one entry of the
// egress record, handed to `on_record` as it completes:
//   {"egress", "method", "path", "target", "body", "fields": {PATH: value|null},
//    "key": text|null, "status": int|null, "answer": JSON|text|null, "error", "sent_ns"}
// (`fields`: the declared `record` paths in the JSON body; `key`: the
// egress's `key_header` as sent, the downstream idempotency key; `answer`: the
// downstream's body, parsed when it is JSON). Fault events of the proxies
// (faults armed with `on: egress.NAME`) go to `on_fault` with "on" added.
// A tcp egress (`protocol: tcp`) gets a TcpFaultProxy (injectors/
// tcp_fault_proxy.h) instead: raw bytes to `upstream` (HOST:PORT), no record,
// egress.NAME.port / egress.NAME.address published, its fault events as above.
// An https:// upstream: the target still speaks plain HTTP to the proxy, the
// proxy speaks TLS to the downstream, checked as the egress's `tls:` says;
// one handshake (no request) is made at Start() to check it.
// Stop() (and the destructor) heals every proxy: nothing listens afterwards.
//
// Errors are values: kInvalidConfig (an upstream that is no http(s)://HOST:PORT
// URL: a proxy forwards request-targets unchanged, so it has no path; a
// downstream whose handshake failed: TlsRefused, base/tls_options.h),
// kUnavailable (a proxy could not listen), kInvalidArgument (a template).
//
// Thread-safety: Start/Stop/Proxy from the interpreter's thread; Records()
// from any thread; the sinks are called from the proxies' threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/target/egress.h"
#include "model/target/probes.h"
#include "model/template.h"
#include "base/thread_annotations.h"

namespace idemproof::injectors {
class ChaosProxy;
class FaultEventLog;
class TcpFaultProxy;
}  // namespace idemproof::injectors

namespace idemproof::runtime {

class EgressProxies {
 public:
  // (event JSON, steady-clock ns); must be quick.
  using Sink = std::function<void(const nlohmann::json&, std::int64_t)>;
  // `egress` must outlive this object.
  EgressProxies(const std::map<std::string, EgressDescription>& egress, Sink on_record, Sink on_fault);
  ~EgressProxies();
  EgressProxies(const EgressProxies&) = delete;
  EgressProxies& operator=(const EgressProxies&) = delete;

  // On an error the proxies already started keep running until Stop().
  Status Start(const TemplateVars& vars);
  void Stop();

  // egress.NAME.url / egress.NAME.port of the started proxies.
  const TemplateVars& Vars() const { return vars_out_; }
  // The proxy of downstream `name` and its fault log; null when not started.
  injectors::ChaosProxy* Proxy(const std::string& name);  // null for a tcp egress
  injectors::TcpFaultProxy* TcpProxy(const std::string& name);  // null for an http egress
  injectors::FaultEventLog* Log(const std::string& name);
  // The record entries of downstream `name` so far, in completion order.
  std::vector<nlohmann::json> Records(const std::string& name) const;

 private:
  struct Running;
  Status StartTcp(const EgressDescription& egress, const std::string& address);
  std::unique_ptr<Running> NewRunning(const std::string& name) const;
  const std::map<std::string, EgressDescription>& egress_;
  Sink on_record_, on_fault_;
  std::map<std::string, std::unique_ptr<Running>> running_;
  TemplateVars vars_out_;
  mutable base::Mutex mu_;
  std::map<std::string, std::vector<nlohmann::json>> records_ GUARDED_BY(mu_);
};

// Whether an egress record entry is one `match` keeps; `fields` values are
// compared after expansion with `vars` (an expansion error is returned).
Result<bool> EgressMatches(const EgressMatch& match, const nlohmann::json& entry, const TemplateVars& vars);

}  // namespace idemproof::runtime
