// TargetDescription: everything idemproof knows about one service under test,
// loaded from a target file (YAML). The harness assumes NOTHING about a target
// beyond what this file declares; the defaults follow the IETF draft "The
// Idempotency-Key HTTP Header Field" (key header Idempotency-Key, 409 while
// in progress, 422 for another payload under a used key, 400 for a missing
// key). Every string field may contain {{var}} templates (see template.h);
// they are expanded by the runtime, not by the loader.
//
// The file format is documented key by key in docs/scenario-reference.md.
//
// Thread-safety: plain values; load once, then share read-only.
//
// Each section's type and its parser's declaration live in
// model/target/SECTION.h, the parser in model/target/parse/SECTION.cpp;
// model/target.h includes them all.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/header_list.h"
#include "base/tls_options.h"
#include "model/http_settings.h"
#include "model/json_path.h"
#include "model/target/actions.h"
#include "model/target/batch.h"
#include "model/target/callers.h"
#include "model/target/contract.h"
#include "model/target/egress.h"
#include "model/target/hooks.h"
#include "model/target/instances.h"
#include "model/target/messages.h"
#include "model/target/probes.h"
#include "model/target/request.h"
#include "model/target/services.h"
#include "model/target/start.h"

namespace idemproof {

struct TargetDescription {
  std::string file;   // where it was loaded from
  std::string name;   // required
  // Required, templated ("http://127.0.0.1:{{port}}"); with `instances:
  // [URL, ...]` the first URL (the main instance's).
  std::string base_url;
  std::optional<StartCommand> start;
  // Before a run that reuses a running target (namespace isolation,
  // runtime/interpreter.h): a call that clears what a run may leave behind.
  std::optional<TargetCall> reset;
  // `isolation: process`: every run gets its own target process, never one
  // an earlier run left running (a target whose state is not namespaced by
  // keys and ids). Default `namespace`.
  bool process_isolation = false;
  // `instances: N`: N processes started with `start` (each its own port, the
  // same store). `instances: [URL, ...]`: a target already running behind
  // these base URLs (no start); then instance_count is their number.
  int instance_count = 1;
  std::vector<std::string> instance_urls;  // templated; empty = started (or base_url alone)
  BalancePolicy balance = BalancePolicy::kRoundRobin;
  // `shared_store: false`: each instance (declared or spawned) keeps its own
  // state, so no instance sees another's keys; every scenario that sends one
  // key to two instances is then not applicable. Default true (one store).
  bool shared_store = true;
  IdempotencyContract idempotency;
  Duration request_timeout = std::chrono::seconds(10);  // every request's deadline
  // The most of one answer body the harness keeps (bytes); a longer answer is
  // recorded truncated with its size and its transfer aborted.
  std::uint64_t max_body = std::uint64_t{4} << 20;
  // The most of all answer bodies of a run the harness keeps beyond each
  // answer's first 4 KiB (clients/kept_budget.h); past it, answers are cut
  // at 4 KiB, recorded truncated "by": "max_kept".
  std::uint64_t max_kept = std::uint64_t{64} << 20;
  HeaderList headers;  // sent with every request (templated)
  std::vector<std::string> compare_headers;  // answer headers a replay must repeat
  // An answer header carrying when the target fully read the request (steady
  // clock ns, e.g. the reference's X-Arrival-Ns); "" = not reported. Bursts
  // record the target-side arrival spread from it.
  std::string arrival_header;
  // `errors: problem+json`: every 4xx the target answers is a problem
  // details document (RFC 9457); `problem_details` judges each one. false
  // (`errors: any`, the default): the error format is not judged.
  bool errors_problem_json = false;
  HttpSettings http;  // `http:` and `trace:` (model/http_settings.h)
  TlsOptions tls;     // `tls:`: how https:// peers are checked (model/tls_settings.h)
  std::vector<JsonPath> volatile_paths;      // target-wide volatile JSON paths
  std::map<std::string, ActionDescription> actions;
  std::map<std::string, ProbeDescription> probes;
  std::map<std::string, HookDescription> hooks;
  std::optional<BatchDescription> batch;  // absent: batch steps are not applicable
  std::map<std::string, ServiceDescription> services;  // started before the target, by name
  std::map<std::string, MessageDescription> messages;  // queue messages (deliver / publish)
  std::optional<BrokerDescription> broker;             // absent: publish steps are not applicable
  std::map<std::string, EgressDescription> egress;     // downstreams behind the harness's proxy
  std::vector<CallerDescription> callers;              // in declaration order (`callers:`)

  const ActionDescription* FindAction(const std::string& name) const;
  // The hook with role `role` (a capability name); nullptr when none.
  // Defined in model/capabilities.cpp (a hook's default role is a capability's).
  const HookDescription* HookFor(const std::string& role) const;
  // The target-wide headers with caller `caller`'s (a `callers:` name) over
  // those of the same name; the target's alone for "" or an unknown name.
  HeaderList HeadersAs(const std::string& caller) const;
  // The http egress downstreams `action`'s work calls: its `calls:`, else
  // the egress of each ledger probe of it; sorted, no tcp egress.
  std::vector<std::string> DownstreamsOf(const std::string& action) const;
  // Target-wide + the action's volatile paths (the action may be unknown).
  std::vector<JsonPath> VolatilePathsFor(const std::string& action) const;
};

}  // namespace idemproof
