#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "model/target.h"

using namespace idemproof;
using namespace std::chrono_literals;

namespace {
// The error ParseTarget gives for `text`, as "file:line:column: message".
std::string ErrorOf(const std::string& text) {
  auto r = ParseTarget(text, "t.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidConfig);
  return r.status().ToString();
}
}  // namespace

TEST_CASE("a full target file loads with every field") {
  auto r = ParseTarget(R"(name: reference
base_url: "http://127.0.0.1:{{port}}"
start:
  argv: ["{{build_dir}}/idemproof-ref", "--port", "0", "--db", "{{run_dir}}/ref.db"]
  env: {RUST_LOG: info}
  cwd: "{{source_dir}}"
  port_from_stdout: 'listening on 127\.0\.0\.1:(\d+)'
  flaw_args: ["--flaw", "{{flaw}}"]
  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}
  stop_timeout: 3s
reset: {command: ["rm", "-f", "{{run_dir}}/ref.db"]}
idempotency:
  key_header: X-Dedup-Token
  replay: {header: X-Replayed, value: "yes"}
  in_progress: 425
  mismatch: 409
  missing_key: 428
  retryable: [429]
  window: 4s
  lease: 2s
request_timeout: 3s
headers: {X-Client: idemproof}
compare_headers: [Content-Type, Location]
volatile: ["$.trace_id"]
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, headers: {X-Request-Id: "{{uuid}}"},
              json: {biz_no: "{{biz}}", sku: "sku-{{run}}", qty: 1, amount: 100, gift: false, note: "1"}}
    other_payload: {json: {biz_no: "{{biz}}", qty: 2}}
    records: {request: {method: GET, path: "/orders?biz_no={{biz}}"}, count: "$.count"}
    capture: {order_id: "$.id"}
    volatile: ["$.created_at"]
  cancel_order: {role: delete, request: {method: DELETE, path: "/orders/{{order_id}}"}}
probes:
  stock: {request: {path: "/stock?sku=sku-{{run}}"}, value: "$.available"}
  rows: {command: ["sqlite3", "{{run_dir}}/ref.db", "select count(*) from orders"], value: stdout}
hooks:
  slow_business: {request: {method: POST, path: /_chaos, json: {delay_ms: 1500}}}
  heal: {request: {method: DELETE, path: /_chaos}}
)", "reference.yaml");
  REQUIRE(r.ok());
  const TargetDescription& t = *r;
  CHECK(t.name == "reference");
  CHECK(t.file == "reference.yaml");
  REQUIRE(t.start.has_value());
  CHECK(t.start->argv.size() == 5);
  CHECK(t.start->env.at("RUST_LOG") == "info");
  CHECK(t.start->flaw_args == std::vector<std::string>{"--flaw", "{{flaw}}"});
  REQUIRE(t.start->ready.has_value());
  CHECK(t.start->ready->request.path == "/healthz");
  CHECK(t.start->stop_timeout == 3s);
  REQUIRE(t.reset.has_value());
  CHECK(t.reset->command->at(0) == "rm");
  CHECK(t.idempotency.key_header == "X-Dedup-Token");
  CHECK(t.idempotency.replay->header == "X-Replayed");
  CHECK(t.idempotency.replay->value == "yes");
  CHECK(t.idempotency.in_progress == 425);
  CHECK(t.idempotency.mismatch == 409);
  CHECK(t.idempotency.missing_key == 428);
  CHECK(t.idempotency.IsRetryable(429));
  CHECK(t.idempotency.IsRetryable(503));
  CHECK_FALSE(t.idempotency.IsRetryable(409));
  CHECK(t.idempotency.window == Duration(4s));
  CHECK(t.idempotency.lease == Duration(2s));
  CHECK(t.request_timeout == 3s);
  CHECK(t.compare_headers == std::vector<std::string>{"Content-Type", "Location"});
  const ActionDescription& create = t.actions.at("create_order");
  CHECK(create.request.method == "POST");
  CHECK(*create.request.json == nlohmann::json{{"biz_no", "{{biz}}"}, {"sku", "sku-{{run}}"}, {"qty", 1},
                                               {"amount", 100}, {"gift", false}, {"note", "1"}});
  CHECK(create.request.headers == HeaderList{{"X-Request-Id", "{{uuid}}"}});
  CHECK(create.other_payload->json->at("qty") == 2);
  CHECK(create.records->count.text() == "$.count");
  CHECK(create.capture.at("order_id").path->text() == "$.id");
  CHECK(t.VolatilePathsFor("create_order").size() == 2);
  CHECK(t.VolatilePathsFor("cancel_order").size() == 1);
  CHECK(t.probes.at("rows").call.command.has_value());
  CHECK_FALSE(t.probes.at("rows").value.has_value());
  CHECK(t.hooks.count("heal") == 1);
  CHECK(create.mark.line == 27);
}

TEST_CASE("a minimal target gets the IETF draft defaults") {
  auto r = ParseTarget("name: t\nbase_url: http://127.0.0.1:9\nactions:\n  a: {role: create, request: {path: /a}}\n", "t.yaml");
  REQUIRE(r.ok());
  CHECK(r->idempotency.key_header == "Idempotency-Key");
  CHECK(r->idempotency.in_progress == 409);
  CHECK(r->idempotency.mismatch == 422);
  CHECK(r->idempotency.missing_key == 400);
  CHECK_FALSE(r->idempotency.replay.has_value());
  CHECK_FALSE(r->idempotency.window.has_value());
  CHECK_FALSE(r->start.has_value());
  CHECK(r->actions.at("a").request.method == "GET");
}

// Issue 35: HTTP/2 and trace context are the target file's to choose.
TEST_CASE("http: 2 and trace: false are read from the target file and other values are located errors") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:9\n";
  const std::string actions = "actions:\n  a: {role: create, request: {path: /a}}\n";
  auto plain = ParseTarget(head + actions, "t.yaml");
  REQUIRE(plain.ok());
  CHECK(plain->http.version == 1);
  CHECK(plain->http.trace);
  auto h2 = ParseTarget(head + "http: 2\ntrace: false\n" + actions, "t.yaml");
  REQUIRE(h2.ok());
  CHECK(h2->http.version == 2);
  CHECK_FALSE(h2->http.trace);
  CHECK(ErrorOf(head + "http: 3\n" + actions) == "t.yaml:3:7: http: 3 is not one of 1, 2");
  CHECK(ErrorOf(head + "trace: sometimes\n" + actions).rfind("t.yaml:3:8: ", 0) == 0);
}

TEST_CASE("key_header: none: the key travels where the templates put {{key}}") {
  // Found with the foreign Python target (--key-in body): Square's
  // idempotency_key or AWS's ClientToken are body members, not headers.
  auto r = ParseTarget(R"(name: body-key
base_url: "http://127.0.0.1:1"
idempotency: {key_header: none}
actions:
  create:
    role: create
    request: {method: POST, path: /t, headers: {X-Token: "{{ key }}", X-Trace: "t-{{key}}"},
              json: {request_key: "{{key}}", item: {key: "{{key}}", ref: "r-{{key}}"}, n: 1}}
)", "t.yaml");
  REQUIRE(r.ok());
  CHECK(r->idempotency.key_header.empty());
  // Without a key, members and headers that are just {{key}} are left out.
  RequestTemplate without = WithoutKeyPlaceholders(r->actions.at("create").request);
  CHECK(*without.json == nlohmann::json::parse(R"({"item": {"ref": "r-{{key}}"}, "n": 1})"));
  REQUIRE(without.headers.size() == 1);
  CHECK(without.headers[0].first == "X-Trace");

  CHECK(ErrorOf(R"(name: body-key
base_url: "http://127.0.0.1:1"
idempotency: {key_header: none}
actions:
  create: {request: {method: POST, path: /t, json: {request_key: "{{key}}"}}}
  update: {request: {method: PUT, path: /t, json: {memo: x}}}
)") == "t.yaml:6:3: action 'update' never sends {{key}}, and idempotency.key_header is none: put {{key}} where "
       "the target reads its idempotency key (a body member, a query parameter)");
}

TEST_CASE("a records count is an integer, or the length of a listing") {
  // Found with the foreign Python target: many list APIs give no total
  // (Stripe's {"data": [...], "has_more": false}); only an integer was read.
  auto r = ParseTarget(R"(name: lists
base_url: "http://127.0.0.1:1"
actions:
  total: {role: create, request: {method: POST, path: /t}, records: {request: {path: /t}, count: "$.data.total"}}
  list: {role: create, request: {method: POST, path: /t}, records: {request: {path: /t}, count: "$.data.items"}}
)", "t.yaml");
  REQUIRE(r.ok());
  const auto doc = nlohmann::json::parse(R"({"data": {"items": [{"id": 1}, {"id": 2}], "total": 2}})");
  CHECK(*r->actions.at("total").records->CountIn(doc) == 2);
  CHECK(*r->actions.at("list").records->CountIn(doc) == 2);
  CHECK(*r->actions.at("list").records->CountIn(nlohmann::json::parse(R"({"data": {"items": []}})")) == 0);
  auto none = r->actions.at("total").records->CountIn(nlohmann::json::parse(R"({"data": {"total": "2"}})"));
  REQUIRE_FALSE(none.ok());
  // What it found instead (issue 49): a count given as text is named so.
  CHECK(none.status().message() == "$.data.total in the answer is text \"2\", not an integer or an array");
  auto absent = r->actions.at("total").records->CountIn(nlohmann::json::parse(R"({"data": {}})"));
  REQUIRE_FALSE(absent.ok());
  CHECK(absent.status().message() == "no integer or array at $.data.total in the answer");
}

TEST_CASE("a replay marker is a header or a JSON body member, never both") {
  auto load = [](const std::string& replay) {
    return ParseTarget("name: m\nbase_url: \"http://127.0.0.1:1\"\nidempotency:\n  replay: " + replay +
                           "\nactions:\n  a: {role: create, request: {method: POST, path: /a}}\n",
                       "m.yaml");
  };
  auto body = load("{body: $.meta.replayed, value: \"yes\"}");
  REQUIRE(body.ok());
  const ReplayMarker& m = *body->idempotency.replay;
  CHECK(m.header.empty());
  REQUIRE(m.body.has_value());
  CHECK(m.Describe() == "body $.meta.replayed = yes");
  // The marker member is left out of every replay comparison.
  const auto vol = body->VolatilePathsFor("a");
  CHECK(std::find(vol.begin(), vol.end(), *m.body) != vol.end());

  auto header = load("X-Cache");
  REQUIRE(header.ok());
  CHECK(header->idempotency.replay->Describe() == "X-Cache: true");
  CHECK(header->VolatilePathsFor("a").empty());

  auto both = load("{header: X-Cache, body: $.replayed}");
  REQUIRE_FALSE(both.ok());
  CHECK(both.status().ToString().rfind("m.yaml:4:11: idempotency.replay needs exactly one of header", 0) == 0);
  REQUIRE_FALSE(load("{value: \"true\"}").ok());
  auto bad_path = load("{body: \"meta.replayed\"}");
  REQUIRE_FALSE(bad_path.ok());
  CHECK(bad_path.status().ToString().rfind("m.yaml:4:18: idempotency.replay.body: bad JSON path", 0) == 0);
}

TEST_CASE("a capture reads the JSON body, or an answer header narrowed by a regex") {
  // Found with the foreign Python target (--location-header): an API that
  // says where the new resource is in Location could not be described.
  auto r = ParseTarget(R"(name: located
base_url: "http://127.0.0.1:1"
actions:
  create:
    role: create
    request: {method: POST, path: /t}
    capture:
      from_body: "$.transfer.id"
      url: {header: location}
      id: {header: Location, regex: '/transfers/([^/?]+)$'}
)", "t.yaml");
  REQUIRE(r.ok());
  const auto& capture = r->actions.at("create").capture;
  const HeaderList headers = {{"Content-Type", "application/json"}, {"Location", "/api/v2/transfers/tr_7"}};
  const std::string body = R"({"transfer": {"id": "tr_7", "cents": 5}})";
  CHECK(capture.at("from_body").From(headers, body) == "tr_7");
  CHECK(capture.at("url").From(headers, body) == "/api/v2/transfers/tr_7");
  CHECK(capture.at("id").From(headers, body) == "tr_7");
  CHECK_FALSE(capture.at("id").From({{"Location", "/elsewhere"}}, body).has_value());
  CHECK_FALSE(capture.at("url").From({}, body).has_value());
  CHECK_FALSE(capture.at("from_body").From(headers, "not json").has_value());

  CHECK(ErrorOf(R"(name: located
base_url: "http://127.0.0.1:1"
actions:
  create: {request: {method: POST, path: /t}, capture: {id: {header: Location, regex: 'no group'}}}
)").find("t.yaml:4:") == 0);  // at the regex, saying what is wrong:
  CHECK(ErrorOf(R"(name: located
base_url: "http://127.0.0.1:1"
actions:
  create: {request: {method: POST, path: /t}, capture: {id: {header: Location, regex: 'no group'}}}
)").find("action 'create'.capture.id.regex needs a capture group") != std::string::npos);
}

TEST_CASE("target errors name file:line:column and what is wrong") {
  const std::string head = "name: t\nbase_url: http://x\n";
  const std::string action = "actions:\n  a: {role: create, request: {path: /a}}\n";
  CHECK(ErrorOf(head + "idempotency:\n  key_hedder: X-Key\n" + action).rfind(
            "t.yaml:4:3: unknown key 'key_hedder' in idempotency (did you mean 'key_header'?); known keys: ", 0) == 0);
  CHECK(ErrorOf(head + "idempotency:\n  in_progress: abc\n" + action) ==
        "t.yaml:4:16: idempotency.in_progress must be an integer, found 'abc'");
  CHECK(ErrorOf(head + "idempotency:\n  mismatch: 1000\n" + action) ==
        "t.yaml:4:13: idempotency.mismatch must be an HTTP status (100-599), found 1000");
  CHECK(ErrorOf(head + "idempotency:\n  window: 4 s\n" + action).rfind(
            "t.yaml:4:11: idempotency.window: bad duration '4 s': unknown unit ' s'", 0) == 0);
  CHECK(ErrorOf("name: t\n" + action) == "t.yaml:1:1: target: missing required key 'base_url'");
  CHECK(ErrorOf(head) == "t.yaml:1:1: target: missing required key 'actions'");
  CHECK(ErrorOf(head + "compare_headers: Location\n" + action) ==
        "t.yaml:3:18: compare_headers must be a list, found a scalar");
  CHECK(ErrorOf(head + "actions:\n  a: {request: {method: PSOT, path: /a}}\n") ==
        "t.yaml:4:25: action 'a'.request.method: unknown HTTP method 'PSOT' (did you mean 'POST'?)");
  CHECK(ErrorOf(head + "actions:\n  a: {request: {path: /a}, records: {request: {path: /r}, count: count}}\n") ==
        "t.yaml:4:66: action 'a'.records.count: bad JSON path 'count' at offset 0: must start with '$' "
        "(supported: $, .name, ['name'], [N], [*])");
  CHECK(ErrorOf(head + "actions:\n  a: {request: {path: \"/o/{{order}}\"}}\n") ==
        "t.yaml:4:23: unknown template variable '{{order}}'");
  CHECK(ErrorOf(head + "actions:\n  a: {request: {path: \"/o/{{bizz}}\"}}\n") ==
        "t.yaml:4:23: unknown template variable '{{bizz}}' (did you mean 'biz'?)");
  CHECK(ErrorOf(head + "actions:\n  a: {request: {path: /a}}\nprobes:\n  p: {value: $.x}\n") ==
        "t.yaml:6:6: probe 'p': give exactly one of 'request' or 'command'");
  CHECK(ErrorOf(head + "start:\n  argv: [x]\n  port_from_stdout: 'port (\\d+'\n" + action).rfind(
            "t.yaml:5:21: start.port_from_stdout: bad regex 'port (\\d+': ", 0) == 0);
  CHECK(ErrorOf(head + "start:\n  argv: [x]\n  port_from_stdout: 'port \\d+'\n" + action) ==
        "t.yaml:5:21: start.port_from_stdout needs a capture group for the port");
  // No default readiness path: the target declares its own check.
  CHECK(ErrorOf(head + "start:\n  argv: [x]\n  ready: {status: 200}\n" + action) ==
        "t.yaml:5:10: start.ready needs a request (the target's own readiness check)");
}

TEST_CASE("a YAML syntax error gets file:line:column too") {
  std::string e = ErrorOf("name: t\nbase_url: http://x\nactions: [a\n");
  CHECK(e.rfind("t.yaml:4:1: YAML syntax error: ", 0) == 0);
  std::string tab = ErrorOf("name: t\n\tbase_url: x\n");
  CHECK(tab.rfind("t.yaml:2:", 0) == 0);
}

TEST_CASE("LoadTargetFile reports an unreadable file as an I/O error") {
  auto r = LoadTargetFile("/nonexistent/idemproof/target.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kIoError);
}

TEST_CASE("contract options: key optional, status lists, retry_after, recovery_bound") {
  const std::string head = "name: t\nbase_url: http://x\n";
  const std::string action = "actions:\n  a: {role: create, request: {path: /a}}\n";
  auto r = ParseTarget(head +
                           "idempotency:\n  key: optional\n  in_progress: [409, 425]\n  mismatch: 422\n"
                           "  retry_after: recommended\n  recovery_bound: 5s\n" + action,
                       "t.yaml");
  REQUIRE(r.ok());
  const IdempotencyContract& c = r->idempotency;
  CHECK(c.key_optional);
  CHECK(c.in_progress == 409);
  CHECK(c.IsInProgress(425));
  CHECK_FALSE(c.IsInProgress(422));
  CHECK(c.InProgressText() == "409 or 425");
  CHECK(c.IsMismatch(422));
  CHECK(c.retry_after == IdempotencyContract::RetryAfter::kRecommended);
  CHECK(c.recovery_bound == Duration(5s));
  CHECK(c.RecoveryBound() == Duration(5s));  // no lease declared

  auto d = ParseTarget(head + action, "t.yaml");
  REQUIRE(d.ok());
  CHECK_FALSE(d->idempotency.key_optional);
  CHECK(d->idempotency.retry_after == IdempotencyContract::RetryAfter::kNone);
  CHECK(d->idempotency.RecoveryBound() == Duration(30s));

  CHECK(ErrorOf(head + "idempotency:\n  key: maybe\n" + action) ==
        "t.yaml:4:8: idempotency.key must be required or optional, found 'maybe'");
  CHECK(d->idempotency.key_max_length == 255);  // undeclared: Stripe's limit
  auto longest = ParseTarget(head + "idempotency:\n  key_max_length: 64\n" + action, "t.yaml");
  REQUIRE(longest.ok());
  CHECK(longest->idempotency.key_max_length == 64);
  CHECK(ErrorOf(head + "idempotency:\n  key_max_length: 0\n" + action) ==
        "t.yaml:4:19: idempotency.key_max_length must be between 1 and 8192, found 0");
  CHECK(ErrorOf(head + "idempotency:\n  key_max_length: long\n" + action) ==
        "t.yaml:4:19: idempotency.key_max_length must be an integer, found 'long'");
  CHECK(ErrorOf(head + "idempotency:\n  retry_after: always\n" + action) ==
        "t.yaml:4:16: idempotency.retry_after must be required, recommended or none, found 'always'");
  CHECK(ErrorOf(head + "idempotency:\n  in_progress: [409, 409]\n" + action) ==
        "t.yaml:4:22: idempotency.in_progress: status 409 is listed twice");
  CHECK(ErrorOf(head + "idempotency:\n  in_progress: []\n" + action) ==
        "t.yaml:4:16: idempotency.in_progress must name at least one status");
  CHECK(ErrorOf(head + "idempotency:\n  mismatch: [422, 700]\n" + action) ==
        "t.yaml:4:19: idempotency.mismatch item must be an HTTP status (100-599), found 700");
  // 409 for both "in progress" and "another payload" is a real contract.
  auto shared = ParseTarget(head + "idempotency:\n  in_progress: 409\n  mismatch: 409\n" + action, "t.yaml");
  REQUIRE(shared.ok());
  CHECK(shared->idempotency.IsInProgress(409));
  CHECK(shared->idempotency.IsMismatch(409));
  CHECK(ErrorOf(head + "idempotency:\n  recovery_bound: soon\n" + action).rfind(
            "t.yaml:4:19: idempotency.recovery_bound: bad duration", 0) == 0);
}

TEST_CASE("idempotency.path_equivalence says how the target treats another spelling of a keyed route",
          "[target][spelling]") {
  const std::string head = "name: t\nbase_url: http://x\n";
  const std::string action = "actions:\n  a: {role: create, request: {path: /a}}\n";
  using Spelling = PathEquivalence::Spelling;
  auto r = ParseTarget(head +
                           "idempotency:\n  path_equivalence: {trailing_slash: distinct, query_order: same, "
                           "query: {b: \"2\", a: \"1\"}}\n" + action,
                       "t.yaml");
  REQUIRE(r.ok());
  const PathEquivalence& p = r->idempotency.path_equivalence;
  CHECK(p.Declared());
  CHECK(p.trailing_slash == Spelling::kDistinct);
  CHECK(p.letter_case == Spelling::kUndeclared);  // not judged
  CHECK(p.query_order == Spelling::kSame);
  REQUIRE(p.query.size() == 2);
  CHECK(p.query[0].first == "b");  // in the file's order
  CHECK(p.For("spelling_query_order") == Spelling::kSame);
  CHECK(p.For("spelling_case") == Spelling::kUndeclared);
  CHECK(PathEquivalence::KeyFor("spelling_case") == "case");

  auto d = ParseTarget(head + action, "t.yaml");
  REQUIRE(d.ok());
  CHECK_FALSE(d->idempotency.path_equivalence.Declared());  // the route-spelling family: not applicable

  CHECK(ErrorOf(head + "idempotency:\n  path_equivalence: {case: maybe}\n" + action) ==
        "t.yaml:4:28: idempotency.path_equivalence.case must be same or distinct, found 'maybe'");
  CHECK(ErrorOf(head + "idempotency:\n  path_equivalence: {slash: same}\n" + action).rfind(
            "t.yaml:4:", 0) == 0);
  CHECK(ErrorOf(head + "idempotency:\n  path_equivalence: {query: {a: \"1\"}}\n" + action) ==
        "t.yaml:4:21: idempotency.path_equivalence declares no spelling: give trailing_slash, case or query_order "
        "(same or distinct)");
}

namespace {
// A target with a stub service, its egress and an egress probe; `extra` is appended.
std::string EgressTarget(const std::string& extra) {
  return "name: t\n"
         "base_url: \"http://127.0.0.1:{{port}}\"\n"
         "start:\n"
         "  argv: [svc, --port, \"{{port}}\", --provider, \"{{egress.stub.url}}\"]\n"
         "  free_port: true\n"
         "actions:\n"
         "  pay: {role: pay, request: {method: POST, path: /payments, json: {biz_no: \"{{biz}}\"}}}\n"
         "services:\n"
         "  stub: {argv: [stub, --port, \"{{port}}\"], free_port: true}\n"
         "egress:\n"
         "  stub: {upstream: \"{{services.stub.url}}\", record: [\"$.reference\", \"$.amount\"]}\n" +
         extra;
}
}  // namespace

TEST_CASE("egress: downstreams, their URL variables and egress probes load") {
  auto r = ParseTarget(EgressTarget("probes:\n"
                                    "  charges:\n"
                                    "    role: ledger\n"
                                    "    of: pay\n"
                                    "    egress: stub\n"
                                    "    match: {method: POST, path: /charge, fields: {\"$.reference\": \"{{biz}}\"}}\n"
                                    "    value: \"$.answer.transaction_id\"\n"),
                       "t.yaml");
  REQUIRE(r.ok());
  REQUIRE(r->start.has_value());
  CHECK(r->start->free_port);
  CHECK(r->services.at("stub").start.free_port);
  const EgressDescription& e = r->egress.at("stub");
  CHECK(e.upstream == "{{services.stub.url}}");
  REQUIRE(e.record.size() == 2);
  CHECK(e.record[1].text() == "$.amount");
  const ProbeDescription& p = r->probes.at("charges");
  CHECK(p.egress == "stub");
  CHECK_FALSE(p.call.request.has_value());
  CHECK_FALSE(p.call.command.has_value());
  CHECK(p.match.method == "POST");
  CHECK(p.match.path == "/charge");
  REQUIRE(p.match.fields.size() == 1);
  CHECK(p.match.fields[0].first.text() == "$.reference");
  CHECK(p.match.fields[0].second == "{{biz}}");
  CHECK(p.role == "ledger");
  REQUIRE(p.value.has_value());
}

TEST_CASE("egress errors carry file:line:column") {
  // An egress probe naming no declared downstream.
  CHECK(ErrorOf(EgressTarget("probes:\n  c: {egress: stubb}\n")).find("t.yaml:13:15: egress: 'stubb' is not a downstream declared under 'egress' (did you mean 'stub'?)") != std::string::npos);
  // match without egress:
  CHECK(ErrorOf(EgressTarget("probes:\n  c: {request: {path: /x}, match: {path: /x}}\n")).find("t.yaml:13:") != std::string::npos);
  // An unknown key in match.
  CHECK(ErrorOf(EgressTarget("probes:\n  c: {egress: stub, match: {paht: /x}}\n")).find("t.yaml:13:") != std::string::npos);
  // upstream is required and must be http:// or https://.
  CHECK(ErrorOf("name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {role: create, request: {path: /}}}\n"
                "egress:\n  p: {record: [\"$.x\"]}\n")
            .find("t.yaml:5:6: egress 'p': missing required key 'upstream'") != std::string::npos);
  CHECK(ErrorOf("name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {role: create, request: {path: /}}}\n"
                "egress:\n  p: {upstream: \"ftp://x:1\"}\n")
            .find("t.yaml:5:17: egress 'p'.upstream must be an http:// or https:// URL") != std::string::npos);
  // An unknown egress variable in a template.
  CHECK(ErrorOf("name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {request: {path: \"/{{egress.q.url}}\"}}}\n")
            .find("t.yaml:3:") != std::string::npos);
  // free_port and port_from_stdout exclude each other, on the target as on services.
  CHECK(ErrorOf("name: t\nbase_url: \"http://127.0.0.1:{{port}}\"\nstart:\n  argv: [x]\n"
                "  port_from_stdout: '(\\d+)'\n  free_port: true\nactions: {a: {role: create, request: {path: /}}}\n")
            .find("t.yaml:6:14: start: give free_port or port_from_stdout, not both") != std::string::npos);
}

TEST_CASE("a service and an egress take tls: as the target does, an egress to a service takes the service's") {
  const std::string head = "name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {role: create, request: {path: /}}}\n";
  const std::string ca = std::filesystem::absolute("tls-test-ca.pem").string();
  { std::ofstream(ca) << "not read here\n"; }
  auto ok = ParseTarget(head + "services:\n  stub: {argv: [s], url: \"https://127.0.0.1:{{port}}\", free_port: true,\n"
                               "         tls: {ca_file: \"" + ca + "\", server_name: stub.test}}\n"
                               "egress:\n  own: {upstream: \"https://127.0.0.1:2\", tls: {insecure: true}}\n"
                               "  to_stub: {upstream: \"{{services.stub.url}}\"}\n"
                               "  to_stub_own: {upstream: \"{{services.stub.url}}\", tls: {server_name: other.test}}\n",
                        "t.yaml");
  REQUIRE(ok.ok());
  CHECK(ok->services.at("stub").tls.ca_file == ca);
  CHECK(ok->services.at("stub").tls.server_name == "stub.test");
  CHECK(ok->egress.at("own").tls.insecure);
  CHECK(ok->egress.at("to_stub").tls == ok->services.at("stub").tls);  // forwards to the stub: its checks
  CHECK(ok->egress.at("to_stub_own").tls.server_name == "other.test");  // its own tls: wins, whole
  CHECK(ok->egress.at("to_stub_own").tls.ca_file.empty());
  // The same keys as the target's tls:, located and named by their place.
  CHECK(ErrorOf(head + "services:\n  stub: {argv: [s], tls: {ca_fil: x}}\n")
            .find("t.yaml:5:27: unknown key 'ca_fil' in service 'stub'.tls") != std::string::npos);
  CHECK(ErrorOf(head + "egress:\n  p: {upstream: \"https://x:1\", tls: {insecure: yes please}}\n")
            .find("t.yaml:5:48: egress 'p'.tls.insecure must be true or false") != std::string::npos);
  CHECK(ErrorOf(head + "egress:\n  db: {protocol: tcp, upstream: \"127.0.0.1:1\", tls: {insecure: true}}\n")
            .find("t.yaml:5:53: egress 'db'.tls: a tcp egress copies raw bytes") != std::string::npos);
  std::filesystem::remove(ca);
}

TEST_CASE("egress protocol: tcp puts the store behind a byte proxy, its misuses are errors at line:column") {
  const std::string head = "name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {role: create, request: {path: /}}}\n";
  auto ok = ParseTarget(head + "start: {argv: [svc, --store, \"127.0.0.1:{{egress.db.port}}\", \"{{egress.db.address}}\"]}\n"
                               "egress:\n  db: {protocol: tcp, upstream: \"127.0.0.1:{{services.pg.port}}\"}\n"
                               "services:\n  pg: {argv: [pg, \"{{port}}\"], free_port: true}\n",
                        "t.yaml");
  REQUIRE(ok.ok());
  CHECK(ok->egress.at("db").tcp);
  CHECK(ok->egress.at("db").upstream == "127.0.0.1:{{services.pg.port}}");
  CHECK(ErrorOf(head + "egress:\n  db: {protocol: udp, upstream: \"127.0.0.1:1\"}\n")
            .find("t.yaml:5:18: egress 'db'.protocol: unknown protocol 'udp'") != std::string::npos);
  CHECK(ErrorOf(head + "egress:\n  db: {protocol: tcp, upstream: \"http://127.0.0.1:1\"}\n")
            .find("t.yaml:5:33: egress 'db'.upstream of a tcp egress is HOST:PORT") != std::string::npos);
  CHECK(ErrorOf(head + "egress:\n  db: {protocol: tcp, upstream: \"127.0.0.1:1\", record: [\"$.x\"]}\n")
            .find("t.yaml:5:56: egress 'db'.record: a tcp egress has no requests to record") != std::string::npos);
  // No record: no egress probe; no URL: no {{egress.NAME.url}}.
  CHECK(ErrorOf(head + "egress:\n  db: {protocol: tcp, upstream: \"127.0.0.1:1\"}\nprobes:\n  c: {egress: db}\n")
            .find("t.yaml:7:15: egress: 'db' is a tcp egress (protocol: tcp)") != std::string::npos);
  CHECK(ErrorOf(head + "start: {argv: [svc, \"{{egress.db.url}}\"]}\negress:\n  db: {protocol: tcp, upstream: \"127.0.0.1:1\"}\n")
            .find("egress.db.url") != std::string::npos);
}

TEST_CASE("profile: sets the contract's defaults, the idempotency section refines them, --profile replaces it") {
  const std::string head = "name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {role: create, request: {path: /}}}\n";
  auto ietf = ParseTarget(head, "t.yaml");
  REQUIRE(ietf.ok());
  CHECK(ietf->idempotency.profile == "ietf");
  CHECK(ietf->idempotency.mismatch == 422);
  CHECK_FALSE(ietf->idempotency.key_optional);
  CHECK(ietf->idempotency.IsRetryable(503));
  CHECK_FALSE(ietf->idempotency.IsRetryable(404));

  auto stripe = ParseTarget(head + "profile: stripe-v1\n", "t.yaml");
  REQUIRE(stripe.ok());
  CHECK(stripe->idempotency.profile == "stripe-v1");
  CHECK(stripe->idempotency.mismatch == 400);
  CHECK(stripe->idempotency.key_optional);
  REQUIRE(stripe->idempotency.replay);
  CHECK(stripe->idempotency.replay->header == "Idempotent-Replayed");
  CHECK_FALSE(stripe->idempotency.IsRetryable(500));  // saved and replayed

  // The file's own declarations win over the profile's defaults.
  auto refined = ParseTarget(head + "profile: stripe-v1\nidempotency: {mismatch: 409, key: required, retryable: [503]}\n",
                             "t.yaml");
  REQUIRE(refined.ok());
  CHECK(refined->idempotency.mismatch == 409);
  CHECK_FALSE(refined->idempotency.key_optional);
  CHECK(refined->idempotency.IsRetryable(503));
  CHECK_FALSE(refined->idempotency.IsRetryable(500));

  // --profile replaces the file's profile.
  auto replaced = ParseTarget(head + "profile: stripe-v1\n", "t.yaml", "store-2xx-only");
  REQUIRE(replaced.ok());
  CHECK(replaced->idempotency.profile == "store-2xx-only");
  CHECK(replaced->idempotency.IsRetryable(404));
  CHECK_FALSE(replaced->idempotency.IsRetryable(422));  // the declared mismatch is a refusal, classified first

  // Unknown names: located in the file, named on the command line.
  CHECK(ErrorOf(head + "profile: stripe-v3\n")
            .find("t.yaml:4:10: unknown profile 'stripe-v3' (known: ietf, stripe-v1, stripe-v2, store-2xx-only)") !=
        std::string::npos);
  auto bad = ParseTarget(head, "t.yaml", "iettf");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("--profile: unknown profile 'iettf' (known: ietf,") != std::string::npos);
}

// Issue 31: a target file with no role: (an older file, a misspelt key)
// bound almost nothing, and the run passed on 6 valid rows of 82.
TEST_CASE("an action without a role is a located error naming the roles it could have") {
  std::ifstream in(std::string(IDEMPROOF_SOURCE_DIR) + "/scenarios/targets/reference.yaml");
  REQUIRE(in);
  std::stringstream whole;
  whole << in.rdbuf();
  // Every role: and of: removed, on lines of their own and inside {...}.
  std::string text = std::regex_replace(whole.str(), std::regex("\n *(role|of): [A-Za-z_]+ *(?=\n)"), "");
  text = std::regex_replace(text, std::regex("(role|of): [A-Za-z_]+, "), "");
  REQUIRE(text.find("role:") == std::string::npos);
  REQUIRE(text.find(" of:") == std::string::npos);
  auto r = ParseTarget(text, "reference.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidConfig);
  CHECK(r.status().ToString() ==
        "reference.yaml:42:3: action 'pay' has no role, and every scenario asks for actions by role, so it could "
        "never be tested: give it role: one of create, put, delete, pay, callback (it looks like role pay: add "
        "`role: pay`); other actions without a role: 'payment_paid' looks like role callback of create_order: add "
        "`role: callback, of: create_order`; 'payment_refunded' looks like role callback of create_order: add "
        "`role: callback, of: create_order`; 'create_order' looks like role create: add `role: create`; "
        "'cancel_order' looks like role delete of create_order: add `role: delete, of: create_order`; "
        "'set_address' looks like role put of create_order: add `role: put, of: create_order`");

  // One action without a role among roled ones is refused too, located at it.
  CHECK(ErrorOf("name: t\nbase_url: http://127.0.0.1:1\nactions:\n  a: {role: create, request: {path: /a}}\n"
                "  b: {request: {path: /b}}\n")
            .rfind("t.yaml:5:3: action 'b' has no role", 0) == 0);
}

TEST_CASE("max_kept: the run's budget of kept answer bytes loads, is 64 MiB by default, a bad size is located") {
  const std::string head =
      "name: t\nbase_url: \"http://127.0.0.1:1\"\nactions: {a: {role: create, request: {path: /}}}\n";
  auto plain = ParseTarget(head, "t.yaml");
  REQUIRE(plain.ok());
  CHECK(plain->max_kept == std::uint64_t{64} << 20);
  auto set = ParseTarget(head + "max_kept: 8MiB\n", "t.yaml");
  REQUIRE(set.ok());
  CHECK(set->max_kept == std::uint64_t{8} << 20);
  CHECK(ErrorOf(head + "max_kept: 8 MB\n").find("t.yaml:4:11: max_kept: expected bytes") != std::string::npos);
  CHECK(ErrorOf(head + "max_kept: 2GiB\n").find("t.yaml:4:11: max_kept: must be between 1KiB and 1GiB") !=
        std::string::npos);
}

// Issue 31: two callers sharing one credential passed lint, and the correct
// reference then "served one caller another's answer" (a violation).
TEST_CASE("callers with equal credentials are refused, located at the second") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n  a: {role: create, request: {path: /a}}\n";
  CHECK(ErrorOf(head + "callers:\n  tenant_a: {headers: {Authorization: \"Bearer x\"}}\n"
                       "  tenant_b: {headers: {authorization: \"Bearer x\"}}\n") ==
        "t.yaml:7:3: callers.tenant_b: the same headers as callers.tenant_a (authorization: Bearer x): the "
        "service cannot tell the two callers apart; give each its own credential");
  // Equal as sets: the order of the headers does not matter.
  CHECK(ErrorOf(head + "callers:\n  a: {headers: {X-Tenant: t, Authorization: k}}\n"
                       "  b: {headers: {Authorization: k, X-Tenant: t}}\n")
            .rfind("t.yaml:7:3: callers.b: the same headers as callers.a", 0) == 0);
  // Distinct credentials, or one shared header beside a distinct one: two callers.
  CHECK(ParseTarget(head + "callers:\n  a: {headers: {Authorization: k1}}\n  b: {headers: {Authorization: k2}}\n",
                    "t.yaml").ok());
  CHECK(ParseTarget(head + "callers:\n  a: {headers: {Authorization: k, X-Tenant: a}}\n"
                           "  b: {headers: {Authorization: k, X-Tenant: b}}\n",
                    "t.yaml").ok());
  // A value that differs on every request ({{uuid}}) is not one credential.
  CHECK(ParseTarget(head + "callers:\n  a: {headers: {X-Token: \"{{uuid}}\"}}\n  b: {headers: {X-Token: \"{{uuid}}\"}}\n",
                    "t.yaml").ok());
}

TEST_CASE("a counter probe says what it counts: applications, or the sum of a message member") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n  a: {role: create, request: {path: /a}}\n"
                           "probes:\n";
  auto sums = ParseTarget(head + "  balance: {request: {path: /b}, value: $.balance, sums: $.amount}\n", "t.yaml");
  REQUIRE(sums.ok());
  REQUIRE(sums->probes.at("balance").sums);
  CHECK(sums->probes.at("balance").sums->text() == "$.amount");
  auto counts = ParseTarget(head + "  applied: {request: {path: /b}, value: $.applied, counts: applications}\n", "t.yaml");
  REQUIRE(counts.ok());
  CHECK_FALSE(counts->probes.at("applied").sums);
  CHECK(ErrorOf(head + "  b: {request: {path: /b}, counts: amounts}\n") ==
        "t.yaml:6:36: probe 'b'.counts must be applications (for a total of a message member: sums: PATH)");
  CHECK(ErrorOf(head + "  b: {request: {path: /b}, counts: applications, sums: $.amount}\n")
            .find("t.yaml:6:56: probe 'b': give counts: applications or sums: PATH, not both") != std::string::npos);
  // The reference's inbox counter counts applications: its messages carry amount 5.
  std::ifstream in(std::string(IDEMPROOF_SOURCE_DIR) + "/scenarios/targets/reference.yaml");
  std::stringstream text;
  text << in.rdbuf();
  auto ref = ParseTarget(text.str(), "reference.yaml");
  REQUIRE(ref.ok());
  CHECK_FALSE(ref->probes.at("inbox_applied").sums);
}

TEST_CASE("idempotency.retry_after: a level, or a level with the shortest delay it may give") {
  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n  a: {role: create, request: {path: /a}}\n";
  auto plain = ParseTarget(head + "idempotency: {retry_after: required}\n", "t.yaml");
  REQUIRE(plain.ok());
  CHECK(plain->idempotency.retry_after == IdempotencyContract::RetryAfter::kRequired);
  CHECK(plain->idempotency.retry_after_min == 1s);  // 0 would say "retry at once"
  auto two = ParseTarget(head + "idempotency: {retry_after: {level: recommended, min: 2s}}\n", "t.yaml");
  REQUIRE(two.ok());
  CHECK(two->idempotency.retry_after == IdempotencyContract::RetryAfter::kRecommended);
  CHECK(two->idempotency.retry_after_min == 2s);
  CHECK(ErrorOf(head + "idempotency: {retry_after: {level: required, min: 500ms}}\n")
            .find("t.yaml:5:51: idempotency.retry_after.min must be at least 1s") != std::string::npos);
  CHECK(ErrorOf(head + "idempotency: {retry_after: {min: 2s}}\n").find("level") != std::string::npos);
}
