// The options of each family of step kinds (model/step_kind.h): what a step
// of that kind says besides the header every step has (scenario.h, Step).
// One struct per family, filled by the family's Parse in harness/steps/ and
// read through Step::Options<T>() by its runtime; a step holds exactly one
// (StepOptions), so no kind reaches another kind's fields.
//
// The defaults are the scenario file's (docs/scenario-reference.md).
//
// Thread-safety: plain values.
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/burst_mode.h"
#include "base/duration.h"
#include "model/payload.h"

namespace idemproof {

// Instance names a step may use besides "main", the target's declared ones
// ("instance-2"... model/target.h) and spawned ones: `instance: other` = an
// instance other than the one the last request of the same key went to;
// "" (a send or burst naming none) = wherever the balancer places it.
inline constexpr const char* kOtherInstance = "other";
inline constexpr const char* kBalancedInstance = "";
// The biz a step binds ({{biz}}) when it names none.
inline constexpr const char* kDefaultBiz = "b1";

// send / burst (steps/send_burst_steps.cpp).
struct SendOptions {
  std::string action;
  std::string key = "k1";  // symbolic, or kNoKey / kFreshKey (scenario.h)
  // `key_form: max_length`: the key grown to the target's
  // idempotency.key_max_length (model/naming.h); false = the plain key.
  bool key_at_max_length = false;
  // send `key_form: empty | over_max_length | comma | quote | non_ascii`:
  // the key header carries that malformed form of the named key
  // (model/key_forms.h); "" = a well-formed key.
  std::string key_malformed;
  std::string biz = kDefaultBiz;  // symbolic
  PayloadVariant payload = PayloadVariant::kDefault;
  // burst: the payloads of its requests in turn (request i gets
  // payloads[i % size]); empty = every request gets `payload`.
  std::vector<PayloadVariant> payloads;
  // The payload of the step's request number `i` (0-based).
  PayloadVariant PayloadOf(int i) const {
    return payloads.empty() ? payload : payloads[static_cast<std::size_t>(i) % payloads.size()];
  }
  // Every payload the step sends.
  std::vector<PayloadVariant> AllPayloads() const { return payloads.empty() ? std::vector{payload} : payloads; }
  int repeat = 1;     // send: how many sequential requests
  Duration every{0};  // send: pause between repeats
  // send `every: retry_after`: the pause before each repeat is the last
  // answer's Retry-After (delay-seconds), as a client that honours it
  // waits; `every` (1s) stands in when it gives none. Bounded by the
  // recovery bound like `until: recovered`.
  bool every_retry_after = false;
  // send `until: recovered`: after `repeat` sends, go on every `every` while
  // the last answer is in progress, until the target's recovery bound
  // (idempotency.lease, else idempotency.recovery_bound) has passed since
  // the step began, plus one send after it. REQUIRES: every > 0.
  bool until_recovered = false;
  bool background = false;  // send: do not wait for the answer (see join)
  // send `then: kill`: SIGKILL the instance that answered the moment the
  // answer has arrived (before the target may have stored it), as a kill
  // step would.
  bool kill_after_answer = false;
  // `caller: first|second`: sent as the target's first / second declared
  // caller (its `callers:` headers); "" = as the target's own headers say.
  std::string caller;
  std::optional<Duration> timeout;  // overrides target request_timeout
  int n = 2;                        // burst: how many
  BurstMode mode = BurstMode::kLastByte;
  // The target instance ("main", "instance-N", a spawned one, kOtherInstance),
  // or kBalancedInstance: wherever the balancer places the request.
  std::string instance = kBalancedInstance;
};

// start / stop / kill / restart / pause / resume
// (steps/start_stop_kill_restart_steps.cpp, pause_resume_steps.cpp).
struct InstanceOptions {
  // The instance acted on ("main", "instance-N", a spawned one);
  // kBalancedInstance when the step names none: main (ControlledInstance).
  std::string instance = kBalancedInstance;
  // start / restart `until: accepting`: the step ends as soon as the port
  // accepts a connection, before the readiness request (the next steps race
  // the start-up; a `ready` step waits for it). Main only.
  bool until_accepting = false;
  const std::string& ControlledInstance() const {
    static const std::string kMain = "main";
    return instance.empty() ? kMain : instance;
  }
};

// run_batch / rerun / clean_run (steps/batch_job_steps.cpp; docs
// "Batch").
struct BatchOptions {
  std::string job;                         // symbolic job name ("j1"), mapped to a unique one per run
  std::string biz = kDefaultBiz;           // bound as {{biz}}
  std::int64_t from = 0;                   // first row id
  std::int64_t to = 0;                     // one past the last row id
  std::optional<std::int64_t> fail_after;  // run_batch / rerun: the run fails after K rows
  std::string of;                          // clean_run: the job whose range it repeats (resolved by the loader)
  int repeat = 1;                          // rerun: how many runs
  std::string variant;                     // run_batch: the declared variant of the run request; "" = none
  bool background = false;                 // run_batch: do not wait for the answer (see join)
};

// deliver / publish (steps/deliver_publish_steps.cpp).
struct QueueOptions {
  std::string name;                // the target's message (`deliver: NAME`), or "$PARAM"
  std::string message_id = "m1";   // symbolic message id, mapped like keys
  std::string biz = kDefaultBiz;   // symbolic
  int copies = 1;                  // deliver: copies pushed at once per round (to `to` in turn); publish: entries added
  int lose_ack = 0;                // deliver: the first N acks are dropped: the message is redelivered
  int max_attempts = 10;           // deliver: rounds without an ack before giving up
  std::vector<std::string> consumers{"main"};  // deliver (`to:`): consumer instances
  Duration every{0};               // deliver: pause between rounds
  std::optional<Duration> timeout;  // overrides target request_timeout
  // The declared variant of the message's push (deliver) or entry (publish); "" = none.
  std::string variant;
  bool background = false;  // do not wait (see join)
};

// wait (steps/wait_step.cpp).
struct WaitOptions {
  Duration duration{0};
  // `wait: past_window`: the duration comes from the target's
  // idempotency.window when the step runs (PastWindowWait); `duration` is 0.
  bool past_window = false;
  // `wait: past_lease`: the target's idempotency.lease plus a fifth of it (at
  // least 200ms), resolved when it runs; `duration` is 0.
  bool past_lease = false;
};

// hook (steps/hook_step.cpp).
struct HookOptions {
  std::string name;               // the target's hook
  std::string biz = kDefaultBiz;  // bound as {{biz}}
};

// probe (steps/probe_step.cpp); its label (`as:`) is the step's.
struct ProbeOptions {
  std::string name;               // the target's probe, or "$PARAM"
  std::string biz = kDefaultBiz;  // bound as {{biz}}
};

// fault / heal (steps/fault_heal_steps.cpp).
struct FaultOptions {
  std::string name;  // a fault the scenario declares under `faults:`
};

// spawn (steps/spawn_step.cpp).
struct SpawnOptions {
  std::string name;  // the new instance's
};

// cause (steps/cause_step.cpp).
struct CauseOptions {
  std::string capability;  // model/capabilities.h
  // The action whose next request it changes (the next send's or burst's by
  // default, set by the loader), or the message of the next publish.
  std::string action;
  std::string biz = kDefaultBiz;  // a hook provision binds it
  // How the target provides it, set by the bind stage (binding.h);
  // unresolved, the runtime resolves it itself (ResolveCapability).
  bool resolved = false;
  std::string variant;  // the variant `action`'s next request gets; "" = none
  std::string hook;     // the hook fired; "" = none
  std::string ledger;   // the egress ledger probe whose downstream gets a kill-after-answer; "" = none
  // `variant: first_only`: the variant changes the next request only, not
  // the later requests of its key (they differ from it on purpose).
  // Default (`attempt`): every later request of that key repeats it.
  bool first_only = false;
};

// A kind registered outside harness/steps/ (a test's) keeps its options here.
struct CustomOptions {
  std::any value;
};

// join has no options (std::monostate).
using StepOptions = std::variant<std::monostate, SendOptions, InstanceOptions, BatchOptions, QueueOptions, WaitOptions,
                                 HookOptions, ProbeOptions, FaultOptions, SpawnOptions, CauseOptions, CustomOptions>;

}  // namespace idemproof
