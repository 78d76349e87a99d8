// Run types: what a scenario run and its parts share, below the interpreter
// (interpreter.h) and the step context (step_context.h): the interpreter's
// options, what a run produced (ScenarioRun), and the interfaces the
// injectors room implements (BurstSender, FaultRunner). A step family or an
// injector includes this, never interpreter.h.
//
// Thread-safety: plain types and interfaces; see each.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/status.h"
#include "clients/http_client.h"
#include "model/history.h"
#include "model/scenario.h"
#include "model/template.h"

namespace idemproof::injectors {
class ChaosProxy;
class TcpFaultProxy;
class FaultEventLog;
}  // namespace idemproof::injectors

namespace idemproof::runtime {
class KeptBudget;
}  // namespace idemproof::runtime

namespace idemproof::runtime {

// Sends n requests "at the same instant". Results in the order of requests.
class BurstSender {
 public:
  virtual ~BurstSender() = default;
  virtual std::vector<HttpExchange> Send(const std::vector<OutgoingRequest>& requests) = 0;
  // The harness-side spread of the last Send() (last release - first), when
  // the sender can observe it.
  virtual std::optional<std::int64_t> LastHarnessSpreadNs() const { return std::nullopt; }
};

// What a FaultRunner needs from the scenario run it serves.
struct FaultScope {
  std::string target_base_url;  // the target's own base URL now
  TlsOptions target_tls;        // how an https:// target is checked (the proxy speaks TLS to it)
  bool target_http2 = false;    // the target says http: 2 (the proxy speaks HTTP/2 to it)
  std::size_t max_body = std::size_t{4} << 20;  // the target's answer-body cap
  // Called for every event of the injectors (from their threads): the event
  // JSON and its steady-clock time (monotonic_ns()). Must be quick.
  std::function<void(const nlohmann::json& event, std::int64_t steady_ns)> on_event;
  // A fault `on: egress.NAME`: arm on this proxy (the egress hop, owned by
  // the run) and log to `egress_log`, instead of a proxy in front of the target.
  injectors::ChaosProxy* egress_proxy = nullptr;
  injectors::TcpFaultProxy* egress_tcp_proxy = nullptr;  // a tcp egress (protocol: tcp) instead
  injectors::FaultEventLog* egress_log = nullptr;
  std::string target_pid;  // the main instance's pid ("" = none): kill-after-answer's default pid
};

// Starts and heals the faults a scenario declares (implemented by injectors).
// One scenario run at a time; every fault started is healed by Heal() or
// HealAll() before the run ends.
class FaultRunner {
 public:
  virtual ~FaultRunner() = default;
  virtual bool Supports(const std::string& kind) const = 0;
  // Starts the fault; returns the JSON recorded in the history's fault event.
  virtual Result<nlohmann::json> Start(const FaultDeclaration& fault, const FaultScope& scope) = 0;
  // Heals it (idempotent); returns how many times it fired.
  virtual Result<std::int64_t> Heal(const FaultDeclaration& fault) = 0;
  // Heals whatever is still active (end of a scenario run, always).
  virtual void HealAll() noexcept {}
  // Where the client's action requests go now; nullopt = the target itself.
  virtual std::optional<std::string> ClientBaseUrl() const { return std::nullopt; }
};

// How scenario runs are kept apart. kProcess: every run starts its own
// services, egress proxies and target (and stops them). kNamespace: a run
// whose steps leave the target's environment as they found it reuses the
// processes the last such run left running, in a folder of their own; its
// keys, biz ids, message and job ids are its own anyway (model/naming.h),
// and the target's `reset` call, if declared, runs first. Killing, stopping,
// restarting or pausing the main instance leaves the environment as found
// once the main instance runs again on the same store (restarted by the
// steps, or by the run's end to read the records), so such a run reuses and
// keeps them too. A run that spawns an instance, controls another instance,
// has a cause that ends the target, fires a hook or injects a fault (either
// may arm something in a service) gets processes of its own, and they are
// stopped after it.
enum class Isolation { kProcess, kNamespace };

struct InterpreterOptions {
  std::uint64_t seed = 0;
  // The run's namespace (model/naming.h); "" = a fresh one per Interpreter.
  // REQUIRES: "" or ValidateNamespace(run_namespace).ok()
  std::string run_namespace;
  // build_dir, source_dir...; `run` and `run_dir` (the scenario run's own
  // folder) are set per scenario by Run().
  TemplateVars vars;
  std::optional<std::string> flaw;  // passed to the target's flaw_args
  const std::atomic<bool>* cancel = nullptr;  // interrupt flag (may be null)
  // Optional senders per burst mode; kThreads defaults to curl multi.
  BurstSender* last_byte_burst = nullptr;
  FaultRunner* faults = nullptr;
  Isolation isolation = Isolation::kProcess;
  // kNamespace: where the kept processes run ({{run_dir}} of the target
  // and services), a fresh sub-folder per start. REQUIRES: set with kNamespace.
  std::string shared_dir;
  // The budget of answer-body bytes every request of every Run() draws on
  // (clients/kept_budget.h); null = the interpreter's own, of the target's max_kept.
  KeptBudget* kept = nullptr;
};

// The interpreter's part of a front end's options (a run's, an exploration's):
// any struct with the same-named members above.
template <typename FrontEndOptions>
InterpreterOptions InterpreterOptionsOf(const FrontEndOptions& o) {
  InterpreterOptions out;
  out.seed = o.seed;
  out.run_namespace = o.run_namespace;
  out.vars = o.vars;
  out.flaw = o.flaw;
  out.cancel = o.cancel;
  out.last_byte_burst = o.last_byte_burst;
  out.faults = o.faults;
  return out;
}

// What one scenario run produced.
struct ScenarioRun {
  History history;
  // Non-ok: the tool could not run the scenario properly (the target did not
  // start, a template names an unknown variable...). The history is kept.
  Status error;
  bool interrupted = false;
  std::map<std::string, std::int64_t> fault_counts;
  std::int64_t elapsed_ms = 0;
  std::vector<pid_t> target_pids;  // every process of the target started
};

}  // namespace idemproof::runtime
