// The OpenAPI documents of docs/openapi/ against the services they describe,
// and `idemproof init`'s files from them, end to end:
//  - every documented operation is called on the running service and must
//    answer the status the call expects, a status its document lists (so a
//    document cannot drift from its service, nor a route go undocumented
//    here: a document operation no call covers fails too);
//  - the written target file lints clean (exit 0), and two scenarios run
//    against it (a create's double submit; a put through the capture of the
//    create's id, judged with the resource probe) hold.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "clients/http_client.h"
#include "init/openapi_document.h"
#include "platform/child_process.h"
#include "runtime/target_process.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::testing;
using nlohmann::json;

namespace {

// A started helper: stopped (SIGTERM, then SIGKILL) and reaped on scope exit.
struct Started {
  std::optional<runtime::ChildProcess> child;
  int port = 0;
  ~Started() {
    if (child) child->Terminate(std::chrono::seconds(3));
  }
};

// Starts argv and waits (at most 15 s) for its stdout to print a line
// matching `port_line` (group 1 the port), or for a connect to `port`.
void Start(Started& s, const std::vector<std::string>& argv, const std::string& dir, const std::string& name,
           int port = 0) {
  runtime::ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = dir;
  spec.stdout_path = dir + "/" + name + ".out";
  spec.stderr_path = dir + "/" + name + ".err";
  auto child = runtime::ChildProcess::Spawn(spec);
  REQUIRE(child.ok());
  s.child.emplace(std::move(child).value());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  static const std::regex kPort("127\\.0\\.0\\.1:(\\d+)");
  while (std::chrono::steady_clock::now() < deadline) {
    REQUIRE(s.child->Running());
    std::smatch m;
    const std::string out = ReadFile(spec.stdout_path);
    if (std::regex_search(out, m, kPort)) {
      s.port = std::stoi(m[1]);
      if (port == 0 || s.port == port) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL(name << " printed no port line in 15 s: " << ReadFile(spec.stdout_path) << ReadFile(spec.stderr_path));
}

// A free loopback port for a service that cannot take --port 0.
int FreePort() {
  auto port = runtime::FreeLoopbackPort();
  REQUIRE(port.ok());
  return *port;
}

// Calls the service and checks the answer against the document: the
// operation (method, documented path) must be in it, the status the one
// expected and one the operation documents. Records the operation as covered.
class DocumentCheck {
 public:
  DocumentCheck(const std::string& doc_path, int port) : origin_("http://127.0.0.1:" + std::to_string(port)) {
    auto doc = init::LoadOpenApi(doc_path);
    REQUIRE(doc.ok());
    doc_ = std::move(doc).value();
  }

  json Call(const std::string& method, const std::string& documented, const std::string& target, int expected,
            const std::string& body = "", const HeaderList& headers = {}) {
    const init::Operation* op = nullptr;
    for (const auto& o : doc_.operations)
      if (o.method == method && o.path == documented) op = &o;
    INFO(method << " " << target);
    REQUIRE(op != nullptr);  // the call's route is documented
    runtime::OutgoingRequest request;
    request.origin = origin_;
    request.message.method = method;
    request.message.target = target;
    request.message.headers = headers;
    if (!body.empty()) {
      request.message.headers.emplace_back("Content-Type", "application/json");
      request.message.body = body;
    }
    request.timeout = std::chrono::seconds(10);
    runtime::HttpClient client;
    const runtime::HttpExchange answer = client.send(request);
    INFO(answer.error << answer.response_body);
    REQUIRE(answer.outcome == runtime::HttpOutcome::kAnswered);
    CHECK(answer.status == expected);
    CHECK(op->Documents(answer.status));  // the document lists the status it answered
    covered_.insert(method + " " + documented);
    last_ = answer;
    return json::parse(answer.response_body, nullptr, false);
  }

  const runtime::HttpExchange& last() const { return last_; }

  // Every operation of the document was called.
  void AllCovered() const {
    for (const auto& o : doc_.operations) {
      INFO("documented but never called: " << o.method << " " << o.path);
      CHECK(covered_.count(o.method + " " + o.path) == 1);
    }
  }

 private:
  std::string origin_;
  init::OpenApiDocument doc_;
  std::set<std::string> covered_;
  runtime::HttpExchange last_;
};

std::string Doc(const std::string& name) { return SourceDir() + "/docs/openapi/" + name; }

}  // namespace

TEST_CASE("docs/openapi/reference.yaml describes what the reference serves", "[slow][init]") {
  const std::string dir = ScratchDir("init-routes-ref");
  Started stub, ref;
  Start(stub, {BuildDir() + "/payment-stub/idemproof-stub", "--port", "0"}, dir, "stub");
  Start(ref, {ReferenceExe(), "--port", "0", "--db", dir + "/ref.db", "--payment-provider",
              "http://127.0.0.1:" + std::to_string(stub.port)}, dir, "ref");
  DocumentCheck check(Doc("reference.yaml"), ref.port);
  const HeaderList key = {{"Idempotency-Key", "k-1"}};
  const std::string order = R"({"biz_no": "B-1", "sku": "sku-1", "qty": 1, "amount": 100})";
  check.Call("GET", "/healthz", "/healthz", 200);
  const json created = check.Call("POST", "/orders", "/orders", 201, order, key);
  REQUIRE(created.contains("id"));
  const std::string id = std::to_string(created["id"].get<long long>());
  check.Call("POST", "/orders", "/orders", 201, order, key);
  CHECK(check.last().response_header("Idempotent-Replayed") == std::optional<std::string>("true"));
  check.Call("POST", "/orders", "/orders", 422, R"({"biz_no": "B-1", "sku": "sku-1", "qty": 2, "amount": 100})", key);
  check.Call("POST", "/orders", "/orders", 400, order);  // no key
  check.Call("GET", "/orders", "/orders?biz_no=B-1", 200);
  check.Call("GET", "/orders/{id}", "/orders/" + id, 200);
  check.Call("GET", "/orders/{id}", "/orders/999999", 404);
  check.Call("PUT", "/orders/{id}/address", "/orders/" + id + "/address", 200, R"({"address": "1 Main St"})");
  check.Call("DELETE", "/orders/{id}", "/orders/" + id, 200, "", {{"Idempotency-Key", "k-2"}});
  check.Call("GET", "/stock", "/stock?sku=sku-1", 200);
  check.Call("GET", "/stock", "/stock", 400);
  check.Call("POST", "/payments", "/payments", 201, R"({"biz_no": "B-1", "amount": 100})", {{"Idempotency-Key", "p-1"}});
  const json payments = check.Call("GET", "/payments", "/payments?biz_no=B-1", 200);
  CHECK(payments["count"] == 1);
  check.Call("POST", "/callbacks/payment", "/callbacks/payment", 200,
             R"({"seq": "s-1", "biz_no": "B-1", "event": "paid"})");
  check.Call("GET", "/callbacks/payment", "/callbacks/payment?biz_no=B-1", 200);
  check.AllCovered();
}

TEST_CASE("docs/openapi/foreign-node.yaml describes what the Node billing service serves", "[slow][init]") {
  const std::string dir = ScratchDir("init-routes-node");
  Started provider, billing;
  const int provider_port = FreePort();
  Start(provider, {"node", SourceDir() + "/tests/foreign/provider.js", "--port", std::to_string(provider_port)}, dir,
        "provider", provider_port);
  const int port = FreePort();
  Start(billing, {"node", SourceDir() + "/tests/foreign/billing_service.js", "--port", std::to_string(port),
                  "--provider", "http://127.0.0.1:" + std::to_string(provider_port), "--db", dir + "/billing.log"},
        dir, "billing", port);
  DocumentCheck check(Doc("foreign-node.yaml"), port);
  const HeaderList key = {{"X-Idempotency-Key", "k-1"}};
  const std::string sub = R"({"customer": "c-1", "plan": "basic", "seats": 2})";
  check.Call("GET", "/healthz", "/healthz", 200);
  const json created = check.Call("POST", "/v1/subscriptions", "/v1/subscriptions", 201, sub, key);
  const std::string id = created["subscription"]["id"].get<std::string>();
  check.Call("POST", "/v1/subscriptions", "/v1/subscriptions", 201, sub, key);
  CHECK(check.last().response_header("X-Idempotency-Replayed") == std::optional<std::string>("true"));
  check.Call("POST", "/v1/subscriptions", "/v1/subscriptions", 422, R"({"customer": "c-1", "plan": "pro"})", key);
  check.Call("POST", "/v1/subscriptions", "/v1/subscriptions", 400, R"({"plan": "basic"})");
  check.Call("POST", "/v1/subscriptions", "/v1/subscriptions", 503, R"({"customer": "c-2", "plan": "flaky"})");
  check.Call("GET", "/v1/subscriptions", "/v1/subscriptions?customer=c-1", 200);
  check.Call("GET", "/v1/subscriptions/{id}", "/v1/subscriptions/" + id, 200);
  check.Call("GET", "/v1/subscriptions/{id}", "/v1/subscriptions/sub_999", 404);
  check.Call("PUT", "/v1/subscriptions/{id}/plan", "/v1/subscriptions/" + id + "/plan", 200, R"({"plan": "pro"})");
  check.Call("DELETE", "/v1/subscriptions/{id}", "/v1/subscriptions/" + id, 200);
  check.Call("POST", "/v1/invoices", "/v1/invoices", 201, R"({"customer": "c-1", "lines": [{"sku": "seat", "cents": 1200}]})",
             {{"X-Idempotency-Key", "i-1"}});
  check.Call("GET", "/v1/invoices", "/v1/invoices?customer=c-1", 200);
  check.Call("POST", "/v1/payments", "/v1/payments", 201, R"({"customer": "c-1", "cents": 4200})",
             {{"X-Idempotency-Key", "p-1"}});
  const json payments = check.Call("GET", "/v1/payments", "/v1/payments?customer=c-1", 200);
  CHECK(payments["count"] == 1);
  check.AllCovered();
}

namespace {

// `idemproof init` on a document, then lint and a run of two scenarios
// against the file it wrote.
void InitLintAndRun(const std::string& name, const std::string& doc, const std::string& start) {
  const std::string dir = ScratchDir("init-" + name);
  const std::string target = dir + "/target.yaml";
  CliResult init = RunIdemproof({"init", "--openapi", doc, "--start", start, "-o", target}, dir);
  INFO(init.err);
  REQUIRE(init.exit_code == 0);
  const std::string text = ReadFile(target);
  CHECK(text.find("# Generated by `idemproof init` from " + doc) != std::string::npos);
  CHECK(text.find("# CONFIRM:") != std::string::npos);
  CliResult lint = RunIdemproof({"lint", SourceDir() + "/scenarios", "--target", target}, dir);
  INFO(lint.out << lint.err);
  CHECK(lint.exit_code == 0);
  CliResult run = RunIdemproof({"run", SourceDir() + "/scenarios/client/double-submit.yaml",
                                SourceDir() + "/scenarios/client/put-target-state.yaml", "--target", target,
                                "--seed", "7", "--out", dir + "/runs"},
                               dir, std::chrono::seconds(90));
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  const VerdictTally tally = TallyVerdicts(ReadFile(dir + "/runs/latest/results.json"));
  INFO(tally.ProblemText());
  CHECK(tally.problems.empty());
  CHECK(tally.not_applicable == 0);
  CHECK(tally.valid >= 4);
}

}  // namespace

TEST_CASE("init's target from the reference's document lints clean and its scenarios hold", "[slow][init]") {
  InitLintAndRun("ref", Doc("reference.yaml"),
                 "{{build_dir}}/reference-impl/idemproof-ref --port 0 --db {{run_dir}}/ref.db");
}

TEST_CASE("init's target from the Node service's document lints clean and its scenarios hold", "[slow][init]") {
  InitLintAndRun("node", Doc("foreign-node.yaml"),
                 "node {{source_dir}}/tests/foreign/billing_service.js --port {{port}} --provider http://127.0.0.1:9 "
                 "--db {{run_dir}}/billing.log");
}

TEST_CASE("idemproof init exits 2 naming the document it could not read", "[init]") {
  const std::string dir = ScratchDir("init-bad");
  CliResult missing = RunIdemproof({"init", "--openapi", dir + "/absent.yaml"}, dir);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(dir + "/absent.yaml: cannot read") != std::string::npos);
  WriteFile(dir + "/broken.json", "{\"openapi\": \"3.0.3\",\n \"paths\": {\"/a\": }\n}\n");
  CliResult broken = RunIdemproof({"init", "--openapi", dir + "/broken.json", "-o", dir + "/t.yaml"}, dir);
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find(dir + "/broken.json:2:") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/t.yaml"));  // nothing written
  // an existing output is kept unless --force
  WriteFile(dir + "/kept.yaml", "mine\n");
  CliResult kept = RunIdemproof({"init", "--openapi", SourceDir() + "/docs/openapi/reference.yaml", "-o",
                                 dir + "/kept.yaml"}, dir);
  CHECK(kept.exit_code == 2);
  CHECK(ReadFile(dir + "/kept.yaml") == "mine\n");
}

TEST_CASE("idemproof init without a document writes a minimal target from --post and the key's place", "[slow][init]") {
  const std::string dir = ScratchDir("init-post");
  CliResult header = RunIdemproof({"init", "--base-url", "http://127.0.0.1:9", "--post", "/v1/orders", "--key-header",
                                   "X-Request-Token", "-o", dir + "/header.yaml"},
                                  dir);
  INFO(header.err);
  REQUIRE(header.exit_code == 0);
  CHECK(header.err.find("idemproof discover --target " + dir + "/header.yaml") != std::string::npos);
  CHECK(header.err.find("POST /v1/orders") != std::string::npos);  // the closing table
  const std::string text = ReadFile(dir + "/header.yaml");
  CHECK(text.find("key_header: X-Request-Token\n") != std::string::npos);
  CHECK(text.find("path: \"/v1/orders\"") != std::string::npos);
  CHECK(text.find("start:") == std::string::npos);
  CliResult body = RunIdemproof({"init", "--base-url", "http://127.0.0.1:9", "--post", "/pay", "--key-body",
                                 "idempotency_key", "-o", dir + "/body.yaml"},
                                dir);
  INFO(body.err);
  REQUIRE(body.exit_code == 0);
  const std::string body_text = ReadFile(dir + "/body.yaml");
  CHECK(body_text.find("key_header: none") != std::string::npos);
  CHECK(body_text.find("json: {\"idempotency_key\": \"{{key}}\"}") != std::string::npos);
  CliResult lint = RunIdemproof({"lint", SourceDir() + "/scenarios", "--target", dir + "/body.yaml"}, dir);
  INFO(lint.out << lint.err);
  CHECK(lint.exit_code == 0);
  // usage errors: neither a document nor --post; --post without a server
  CHECK(RunIdemproof({"init"}, dir).exit_code == 2);
  CHECK(RunIdemproof({"init", "--post", "/x"}, dir).exit_code == 2);
  CHECK(RunIdemproof({"init", "--base-url", "http://127.0.0.1:9", "--post", "x"}, dir).exit_code == 2);
}
