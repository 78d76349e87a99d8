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
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/header_list.h"
#include "base/status.h"
#include "base/tls_options.h"
#include "model/http_settings.h"
#include "model/json_path.h"
#include "model/roles.h"

namespace idemproof {

// One HTTP request, relative to the target's base_url.
struct RequestTemplate {
  std::string method = "GET";   // upper case
  std::string path = "/";       // path + query, templated; appended to base_url
  HeaderList headers;           // extra headers (the key header is added by the runtime)
  std::optional<nlohmann::json> json;  // body sent as application/json (templated strings)
  std::optional<std::string> body;     // raw body; at most one of json/body is set
  // The Content-Type sent with the body (`content_type:`); "" = a json body
  // goes as application/json, a raw body with no Content-Type at all.
  std::string content_type;
  // Query parameters added to (or replacing same-named ones in) the path's
  // query string, values templated, percent-encoded once expanded. Set by
  // request variants (ApplyVariant), not read from a request block.
  HeaderList query;
  // A service declared under `services:` to send it to instead of the target
  // (its url replaces base_url; the target-wide headers are not added). "" = the target.
  std::string base;
  SourceMark mark;
};

// Either an HTTP request to the target or a local command (argv, no shell).
// Exactly one of request/command is set.
struct TargetCall {
  std::optional<RequestTemplate> request;
  std::optional<std::vector<std::string>> command;
  SourceMark mark;
};

// How to tell the target is ready after a start.
struct ReadinessCheck {
  RequestTemplate request;       // required: the target's own readiness check
  int status = 200;              // the answer that means "ready"
  Duration timeout = std::chrono::seconds(10);
};

// How to start the target (absent = it is already running at base_url).
struct StartCommand {
  std::vector<std::string> argv;          // templated; never through a shell
  std::map<std::string, std::string> env; // added to the harness's environment
  std::string cwd;                        // templated; empty = the run directory
  std::string port_from_stdout;           // RE2 regex (model/pattern.h), group 1 = the port; empty = none
  // The harness picks a free loopback port before each start and passes it
  // as {{port}} (for a service that cannot take --port 0). Not with port_from_stdout.
  bool free_port = false;
  std::vector<std::string> flaw_args;     // appended when a flaw is requested ({{flaw}})
  std::optional<ReadinessCheck> ready;
  Duration start_timeout = std::chrono::seconds(10);  // for port_from_stdout
  Duration stop_timeout = std::chrono::seconds(5);    // SIGTERM, then SIGKILL
  SourceMark mark;
};

// The replay marker a target puts on replayed answers: a header (Stripe's
// "Idempotent-Replayed: true") or a member of a JSON body (`body`, e.g.
// "$.meta.replayed"). Exactly one of the two is set. Header names compare
// case-insensitively; values exactly (a non-string JSON value as its JSON
// text, so `true` matches "true"). A body marker is left out whenever a
// replay's body is compared with the first answer's.
struct ReplayMarker {
  std::string header;
  std::optional<JsonPath> body;
  std::string value = "true";
  // For evidence: Where() is "X-Replayed" / "body $.meta.replayed";
  // Describe() adds the value: "X-Replayed: true" / "body $.meta.replayed = true".
  std::string Where() const;
  std::string Describe() const;
};

// How the target treats another spelling of a keyed route
// (`idempotency.path_equivalence`, issue 33): `same` = the same route, so the
// same key is a retry (a replay of the first answer, one execution);
// `distinct` = another route, whose answer is never the other's replay;
// undeclared = that spelling is not judged. `query` adds parameters to every
// request of the route-spelling family, so a request with fewer than two of
// its own still has a query order to change.
struct PathEquivalence {
  enum class Spelling { kUndeclared, kSame, kDistinct };
  Spelling trailing_slash = Spelling::kUndeclared;  // `/orders/` for `/orders`
  Spelling letter_case = Spelling::kUndeclared;     // `case`: `/ORDERS` for `/orders`
  Spelling query_order = Spelling::kUndeclared;     // `?b=2&a=1` for `?a=1&b=2`
  HeaderList query;                                 // templated values, in order

  bool Declared() const {
    return trailing_slash != Spelling::kUndeclared || letter_case != Spelling::kUndeclared ||
           query_order != Spelling::kUndeclared;
  }
  // By a respelling payload form's name (model/payload.h):
  // "spelling_trailing_slash" -> trailing_slash's treatment, its key in the
  // file ("trailing_slash"); kUndeclared and "" for any other name.
  Spelling For(const std::string& form) const;
  static std::string KeyFor(const std::string& form);
};

// The idempotency contract the target declares.
struct IdempotencyContract {
  // The header carrying the key. "" (`key_header: none`): the key travels
  // where the actions' request templates put {{key}} (a body member, as
  // Square's idempotency_key or AWS's ClientToken; a query parameter); every
  // action must then use {{key}}.
  std::string key_header = "Idempotency-Key";
  std::optional<ReplayMarker> replay;  // absent: the target does not mark replays
  // `key: optional`: a keyless request is executed without deduplication
  // (missing_key is then unused); required (default): answered missing_key.
  bool key_optional = false;
  // The in-progress / mismatch statuses: an int or a list in the file; the
  // first is `in_progress` / `mismatch` (the one expected when one is needed),
  // the rest `*_also`. Compare through IsInProgress / IsMismatch.
  int in_progress = 409;
  std::vector<int> in_progress_also;
  int mismatch = 422;
  std::vector<int> mismatch_also;
  int missing_key = 400;
  // Retry-After on in-progress answers (the retry_after oracle):
  // kRequired = a MUST (violation), kRecommended = a SHOULD (deviation),
  // kNone = not judged (default).
  enum class RetryAfter { kNone, kRecommended, kRequired };
  RetryAfter retry_after = RetryAfter::kNone;
  // The shortest delay an in-progress answer's Retry-After may give
  // (`retry_after: {level, min}`; 1s by default): `0` tells a client to
  // retry at once, for as long as the work runs.
  Duration retry_after_min = std::chrono::seconds(1);
  // With no lease declared: how long crash scenarios retry a blocked key
  // before lease_recovery calls it blocked (a violation: the strict reading).
  // `recovery_bound_declared`: the target file says it (`recovery_bound:
  // 24h`), so the bound is the target's contract and verdicts name it as such.
  Duration recovery_bound = std::chrono::seconds(30);
  bool recovery_bound_declared = false;
  // `natural_key: $.order_ref`: the target dedups requests by this member of
  // the body as well as by key, so the same business request under a new key
  // may be refused (new_key_executes); undeclared, a new key always executes.
  std::optional<JsonPath> natural_key;
  // What the target fingerprints a request by (`fingerprint: json | bytes`):
  // kJson (default) = its canonical JSON, so an equivalent body (members
  // reordered, respaced) is the same request; kBytes = the body's bytes (the
  // IETF draft allows a checksum over the payload), so an equivalent but
  // different body is another payload and may get the mismatch status.
  enum class Fingerprint { kJson, kBytes };
  Fingerprint fingerprint = Fingerprint::kJson;
  // Answers after which a retry must really execute, besides every 5xx.
  std::vector<int> retryable;
  // What the target stores and replays, as its semantics profile says
  // (model/profile.h): a 5xx is released (retryable) unless stores_5xx
  // (Stripe v1 replays a saved 500); a 4xx other than the declared refusals
  // is stored unless !stores_4xx (store-2xx-only: it is released too).
  bool stores_5xx = false;
  bool stores_4xx = true;
  std::string profile = "ietf";  // the profile these defaults came from
  std::optional<Duration> window;  // the declared retry window
  std::optional<Duration> lease;   // the declared in-progress lease
  // The longest key the target accepts (`key_max_length`); `key_form:
  // max_length` sends keys this long. 255 (Stripe's limit) when undeclared.
  std::size_t key_max_length = 255;
  // Other spellings of a keyed route (`path_equivalence`); none declared:
  // the route-spelling family is not applicable.
  PathEquivalence path_equivalence;
  // `validation_first: true`: the target validates a request before its key
  // is looked up, so a reuse with another payload the target finds invalid
  // may get a 4xx other than the mismatch status (400) and is refused all the same.
  bool validation_first = false;

  // True for the declared retryable statuses, for 5xx unless stores_5xx,
  // and unless stores_4xx for every 4xx but the declared in-progress,
  // mismatch and missing-key refusals.
  bool IsRetryable(int status) const;
  bool IsInProgress(int status) const;  // in_progress or one of in_progress_also
  bool IsMismatch(int status) const;    // mismatch or one of mismatch_also
  // "409" / "409 or 425": the accepted statuses, for evidence.
  std::string InProgressText() const;
  std::string MismatchText() const;
  // The lease when declared, else recovery_bound: how long a crashed owner's
  // claim may block its key.
  Duration RecoveryBound() const { return lease ? *lease : recovery_bound; }
};

// How to count an action's business records for one biz id.
struct RecordsProbe {
  TargetCall call;
  JsonPath count;   // an integer, or an array (one record per element)
  SourceMark mark;

  // The record count in the call's value: the integer at `count`, or the
  // size of the array there (a listing without a total, as Stripe's
  // {"data": [...], "has_more": false}). Error (kNotFound) otherwise.
  Result<std::int64_t> CountIn(const nlohmann::json& value) const;
};

// Where a captured variable comes from in a 2xx answer: a JSON path into
// the body, or an answer header (e.g. Location, for an API answering 201
// with the new resource's URL and no body), optionally narrowed by a regex
// whose group 1 is the value.
struct CaptureRule {
  std::optional<JsonPath> path;  // the body's JSON; unset = from `header`
  std::string header;            // with no path: the header's value
  std::string pattern;           // RE2 regex over the header's value; "" = all of it

  // The captured text (a JSON string as is, any other JSON value dumped);
  // nullopt when the answer does not have it.
  std::optional<std::string> From(const HeaderList& headers, const std::string& body) const;
};

// A named change to one request of an action (`variants:`), asked for by a
// scenario's capability step (model/capabilities.h) or named by explore.
// Applied over the action's request by ApplyVariant (model/request_variant.h).
// At most one of json/body; `patch` only over a json body, never with json.
struct RequestVariant {
  std::string name;
  HeaderList query;    // query parameters added or replaced (templated values)
  HeaderList headers;  // headers added or replaced (names case-insensitive, templated values)
  std::vector<std::pair<JsonPath, nlohmann::json>> patch;  // JSON path (no [*]) -> value, on the json body
  std::optional<nlohmann::json> json;  // the whole json body
  std::optional<std::string> body;     // a raw body
  std::string content_type;            // with json/body: its Content-Type ("" = the default)
  // A message's variant only: broker entry fields added or replaced
  // (templated values), for a `publish` (ApplyVariant leaves the push alone).
  HeaderList fields;
  SourceMark mark;
};

// A business action the scenarios can send.
struct ActionDescription {
  std::string name;
  RequestTemplate request;
  // The request body for "same key, other payload" (payload: other). Only
  // json/body are used from it.
  std::optional<RequestTemplate> other_payload;
  std::optional<RecordsProbe> records;
  // Variables taken from the first 2xx answer, for later requests.
  std::map<std::string, CaptureRule> capture;
  // JSON paths allowed to differ between answers for one key (added to the
  // target-wide list).
  std::vector<JsonPath> volatile_paths;
  // What the action is for the bind stage (roles.h); "" = no role: only
  // scenarios naming it literally send it. `role: [create, pay]` gives it
  // several (an order endpoint that also charges): `role` is the first,
  // `roles` all of them; compare through HasRole.
  std::string role;
  std::vector<std::string> roles;
  bool HasRole(const std::string& r) const;
  // The create action whose resource this one works on (a put, delete or
  // callback of that create); "" = none. Always an action with role create.
  std::string of;
  std::map<std::string, RequestVariant> variants;  // by name
  // JSON paths of the request body that do not take part in the target's
  // request fingerprint (a client timestamp, a trace id): the changed
  // payload forms leave them alone, `ignored_changed` changes one.
  std::vector<JsonPath> fingerprint_ignores;
  // `calls: [NAME, ...]`: the http egress downstreams this action's work
  // calls (a payment provider, a fraud check); unset = those of the ledger
  // probes of it (`egress:` with `of:` this action). See DownstreamsOf.
  std::optional<std::vector<std::string>> calls;
  SourceMark mark;
};

// Which requests of an egress record an egress probe keeps: method and path
// of the request (path without the query; a trailing '*' matches a prefix),
// and JSON members of its body equal to templated text (a non-string member
// compares as its JSON text).
struct EgressMatch {
  std::string method;  // "" = any
  std::string path;    // "" = any
  std::vector<std::pair<JsonPath, std::string>> fields;
  // {method, path} as a kill-after-answer fault's `match` (the declared
  // ones only; {} when neither is).
  nlohmann::json AsFaultMatch() const;
};

// A named observation: a request + JSON path, a command whose stdout
// (trimmed; parsed as JSON when it parses) is the value, or an egress probe:
// the array of the egress record's entries (see EgressDescription) that
// `match` keeps, each narrowed by `value` when declared.
struct ProbeDescription {
  std::string name;
  TargetCall call;                // unset for an egress probe
  std::string egress;             // the egress downstream whose record it reads; "" = none
  EgressMatch match;              // egress probes only
  std::optional<JsonPath> value;  // absent with a command = stdout; with a request = "$"
  std::vector<JsonPath> volatile_paths;  // ignored by probe_equal
  std::string role;  // a probe role (roles.h); "" = none
  std::string of;    // the action it observes ("" = none): a counter's create, a ledger's pay
  // What a consumer's counter read by applied_once moves by per message
  // applied: unset (`counts: applications`, the default) = 1; a JSON path
  // (`sums: "$.amount"`) = that member of the message (its push body, or its
  // broker entry's fields), as a balance summing amounts does.
  std::optional<JsonPath> sums;
  // `caller: NAME` (a `callers:` entry): the probe's request goes with that
  // caller's headers over the target's (a per-tenant listing); "" = none.
  std::string caller;
  // `from_answer: PATH`: no call; the value is that member of the first 2xx
  // answer of its `of:` action for the probe's biz (a charge's txn id).
  std::optional<JsonPath> from_answer;
  SourceMark mark;
};

// The capture variable under which a from_answer probe's value is kept (the
// loader adds it to the probe's `of:` action's captures).
inline std::string FromAnswerVariable(const std::string& probe) { return "from_answer." + probe; }

// A named call the scenarios fire to steer the target (chaos control).
// Scenarios ask for a hook by its `role:` (a capability it provides,
// model/capabilities.h: slow_request, heal...); a hook without one takes
// the role its name spells by default (slow_business -> slow_request,
// heal -> heal). The hook with role heal runs at the end of every scenario.
struct HookDescription {
  std::string name;
  TargetCall call;
  std::string role;  // "" = none: only a `hook: NAME` step fires it
  SourceMark mark;
};

// Where the range markers of a job are and what their fields mean. A marker
// covers the half-open row-id range [from, to) of one job; rows_written and
// checksum describe the rows in that range.
struct MarkerFields {
  std::optional<JsonPath> key;   // the partition's name (reports), optional
  JsonPath from;                 // integer: first row id covered
  JsonPath to;                   // integer: one past the last row id covered
  JsonPath rows_written;         // integer: rows the marker says were written
  std::optional<JsonPath> checksum;  // string, checked when `checksum` names an algorithm
};

// How a marker's checksum is computed from the rows it covers.
//  kNone        not checked
//  kSha256Rows  lowercase hex SHA-256 of, for every row in [from, to) in
//               ascending row-id order, the row minus the declared volatile
//               paths as compact JSON with members sorted by name, each
//               followed by "\n"
//  kSameAsClean the target's own form, opaque: a marker's checksum equals
//               the clean run's marker's over the same [from, to)
enum class ChecksumAlgorithm { kNone, kSha256Rows, kSameAsClean };
// "none", "sha256-rows", "same-as-clean"
const char* ChecksumAlgorithmName(ChecksumAlgorithm algorithm);

// Batch jobs (the "batch re-run" layer): how to run a job over a data range,
// make a run fail after K rows, and read back its result rows and range
// markers. Templates in `run`/`failing_run` may use {{job}}, {{from}},
// {{to}} (integers as decimal text) and, in failing_run, {{fail_after}}; the
// result and markers calls may use {{job}}.
struct BatchDescription {
  RequestTemplate run;                        // a (re)run of rows [from, to)
  std::optional<RequestTemplate> failing_run; // the same run, failing after {{fail_after}} rows
  TargetCall result;        // one job's result (request, or command printing JSON)
  JsonPath rows;            // in the result: the array of result rows (totals form: the row count)
  JsonPath row_id;          // in a row: its identity (the data-range key); an integer
  std::vector<JsonPath> volatile_paths;  // in a row: fields a rerun may change (write stamps)
  // The totals form (no row_id): the result gives no rows, only their count
  // at `rows` and the target's own total at `sum` (a number or numeric text).
  std::optional<JsonPath> sum;
  std::optional<JsonPath> markers;       // in the result: the array of markers
  std::optional<TargetCall> markers_call;  // or a separate call for the markers...
  JsonPath markers_items;                  // ...and the array in its value ("$")
  MarkerFields marker;
  ChecksumAlgorithm checksum = ChecksumAlgorithm::kNone;
  // The marker granularity the target promises: after a failed run, a rerun
  // redoes at most this many rows already written. Absent: not checked.
  std::optional<std::int64_t> partition_rows;
  // Named changes to one run request (`variants:`, as an action's), asked
  // for by a `run_batch` step's `variant:` (a slow run a kill can cut).
  std::map<std::string, RequestVariant> variants;
  SourceMark mark;

  bool declares_markers() const { return markers.has_value() || markers_call.has_value(); }
  bool totals() const { return sum.has_value(); }
};

// A helper process the harness starts before the target and stops after it
// (a payment provider stub, a broker...), one per scenario run. Its templates
// see the built-in variables, `port` being its own; the target's templates see
// {{services.NAME.url}}, {{services.NAME.port}} and {{services.NAME.pid}}.
struct ServiceDescription {
  std::string name;
  StartCommand start;         // argv, env, cwd, port_from_stdout, free_port, ready, timeouts (flaw_args unused)
  std::string ready_stdout;   // RE2 regex: ready once its stdout matches; "" = not checked
  std::string url = "http://127.0.0.1:{{port}}";  // templated: {{services.NAME.url}}
  TlsOptions tls;  // `tls:`: how an https:// url is checked (its ready request; an egress to it)
  SourceMark mark;
};

// A queue message the scenarios deliver (push over HTTP) or publish (into
// the broker). Its templates see {{key}} = the concrete message id (the
// business id a consumer dedups by), {{biz}}, {{run}}...
struct MessageDescription {
  std::string name;
  std::string role = kMessageRole;  // the only message role (roles.h)
  std::optional<RequestTemplate> push;  // how the deliverer pushes it to a consumer (2xx = ack)
  HeaderList fields;                    // the broker entry's fields (templated values), in order
  // Named changes to one push (`variants:`, as an action's), asked for by a
  // `deliver` step's `variant:` (a slow push a kill can cut); a variant's
  // `fields:` change the broker entry of a `publish` instead.
  std::map<std::string, RequestVariant> variants;
  SourceMark mark;
};

// The broker a target consumes from: Redis Streams with a consumer group.
struct BrokerDescription {
  std::string address;  // templated "host:port", e.g. "127.0.0.1:{{services.redis.port}}"
  std::string stream;   // templated stream name
  std::string group;    // the consumer group: a publish waits until it has delivered and acked everything
  Duration settle = std::chrono::seconds(10);  // how long a publish waits for that
  SourceMark mark;
};

// A downstream the service calls (`egress:`), run behind a proxy of the
// harness for each scenario run: started after the services, before the
// target (whose templates see {{egress.NAME.url}} / {{egress.NAME.port}}),
// stopped after the target. The proxy forwards to `upstream` and keeps the
// egress record: for every request that reached the downstream, one history
// event (process "egress", f "egress") with the egress name, method, path,
// target, body, the `record` fields of its JSON body and the answer's status
// and body (parsed JSON when it parses). Faults may act on that hop
// (a scenario fault with `on: egress.NAME`).
// A principal requests may go as (a tenant, an API token): a step's
// `caller: first|second` sends with its headers, over the target's own.
struct CallerDescription {
  std::string name;
  HeaderList headers;  // templates
  SourceMark mark;
};

// Where a step's or explore file's `caller: first|second` sits in a target's
// `callers:` (declaration order).
inline std::size_t CallerIndex(const std::string& caller) { return caller == "second" ? 1 : 0; }

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

// How the harness, as the target's balancer, places a request that names no
// instance (`balance:`): in turn, by a hash of its key, or seeded random.
enum class BalancePolicy { kRoundRobin, kByKey, kRandom };
// "round_robin", "by_key", "random".
const char* BalancePolicyName(BalancePolicy policy);

// The name of target instance number `index` (0-based): "main" for the first
// (the one scenarios start, stop and kill by default), "instance-2",
// "instance-3", ... for the others a target file declares (`instances:`).
std::string TargetInstanceName(int index);
// The index of a declared instance name ("main" = 0, "instance-N" = N-1);
// nullopt for any other name (a spawned one, "other").
std::optional<int> TargetInstanceIndex(const std::string& name);
// The most instances a target file may declare.
inline constexpr int kMostInstances = 16;

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

// The request as sent without an idempotency key (`key: none`): JSON object
// members and headers whose whole value is the template {{key}} are left
// out, so "no key" is an absent member, not an empty one. Anywhere else
// {{key}} expands to "".
RequestTemplate WithoutKeyPlaceholders(const RequestTemplate& request);

// Loads and strictly validates a target file. Errors are kInvalidConfig with
// the file:line:column of the offending node: YAML syntax, unknown keys (with
// the closest known key suggested), wrong types, missing required fields,
// bad durations / JSON paths / regexes / statuses. The contract starts from
// the defaults of the file's `profile:` (model/profile.h; default ietf),
// or of `profile` when not empty (--profile), and the `idempotency:`
// section refines them. An unknown profile is kInvalidConfig naming the known.
Result<TargetDescription> LoadTargetFile(const std::string& path, const std::string& profile = "");

// The same over YAML text; `file` is used in error marks and kept in `file`.
Result<TargetDescription> ParseTarget(const std::string& yaml, const std::string& file,
                                      const std::string& profile = "");

}  // namespace idemproof
