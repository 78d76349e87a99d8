// `idemproof init`'s library without a process: the OpenAPI subset read
// ($ref, allOf, examples), the errors a bad document gets, and the target
// file written from a small document (its contract, roles, of:, captures,
// records and probes), which the target loader must accept.
#include <catch2/catch.hpp>

#include <string>

#include "init/openapi_document.h"
#include "init/target_writer.h"
#include "model/target.h"

using namespace idemproof;
using namespace idemproof::init;

namespace {

// A small shop: a keyed create with its listing and item, a cancel on the
// item (POST .../cancel), a keyless PUT and a keyless POST.
const char* const kShop = R"(openapi: 3.1.0
info: {title: Tiny Shop, version: "1"}
servers: [{url: "https://api.example.com/v2"}]
paths:
  /carts:
    get:
      parameters: [{name: owner, in: query, schema: {type: string}}]
      responses:
        "200":
          description: listing
          content: {application/json: {schema: {type: object, properties: {carts: {type: array}, total: {type: integer}}}}}
    post:
      operationId: createCart
      parameters: [{$ref: "#/components/parameters/Key"}]
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewCart"}
      responses:
        "201":
          description: created
          headers: {Idempotency-Replayed: {schema: {type: string}}}
          content: {application/json: {schema: {$ref: "#/components/schemas/CartAnswer"}}}
        "409": {description: in progress, headers: {Retry-After: {schema: {type: integer}}}}
        "422": {description: key reused}
  /carts/{cartId}:
    get:
      parameters: [{name: cartId, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: the cart, content: {application/json: {schema: {$ref: "#/components/schemas/CartAnswer"}}}}
    put:
      operationId: replaceCart
      parameters: [{name: cartId, in: path, required: true, schema: {type: string}}]
      requestBody:
        content:
          application/json:
            examples:
              first: {value: {items: 3}}
              second: {$ref: "#/components/examples/Five"}
      responses:
        "200": {description: replaced}
  /carts/{cartId}/cancel:
    post:
      operationId: cancelCart
      parameters:
        - {name: cartId, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/Key"}
      responses:
        "200": {description: cancelled}
  /webhooks/stock:
    post:
      operationId: stockWebhook
      requestBody:
        content: {application/json: {schema: {type: object, properties: {sku: {type: string}}}}}
      responses:
        "204": {description: taken}
components:
  parameters:
    Key: {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
  examples:
    Five: {value: {items: 5}}
  schemas:
    Base:
      type: object
      required: [owner]
      properties: {owner: {type: string}, note: {type: string}}
    NewCart:
      allOf:
        - $ref: "#/components/schemas/Base"
        - type: object
          required: [currency, items]
          properties:
            currency: {type: string, enum: [EUR, USD]}
            items: {type: integer, minimum: 1}
    CartAnswer:
      type: object
      properties:
        cart: {type: object, properties: {cartId: {type: string}, owner: {type: string}}}
)";

const Operation& Find(const OpenApiDocument& doc, const std::string& method, const std::string& path) {
  for (const auto& op : doc.operations)
    if (op.method == method && op.path == path) return op;
  FAIL("no " << method << " " << path);
  throw 0;
}

}  // namespace

TEST_CASE("init reads $ref, allOf and examples of an OpenAPI document", "[init]") {
  auto doc = ParseOpenApi(kShop, "shop.yaml");
  REQUIRE(doc.ok());
  CHECK(doc->version == "3.1.0");
  CHECK(doc->title == "Tiny Shop");
  REQUIRE(doc->operations.size() == 6);
  const Operation& create = Find(*doc, "POST", "/carts");
  // $ref to a component parameter
  const Parameter* key = create.FindParameter("header", "idempotency-key");
  REQUIRE(key != nullptr);
  CHECK(key->required);
  // allOf: both parts' properties and required lists merged
  REQUIRE(create.request_schema.IsMap());
  CHECK(create.request_schema["properties"]["owner"].IsDefined());
  CHECK(create.request_schema["properties"]["items"].IsDefined());
  CHECK(create.request_schema["required"].size() == 3);
  // examples: the inline one and the $ref'd one, in order
  const Operation& put = Find(*doc, "PUT", "/carts/{cartId}");
  REQUIRE(put.request_examples.size() == 2);
  CHECK(put.request_examples[0]["items"].as<int>() == 3);
  CHECK(put.request_examples[1]["items"].as<int>() == 5);
  CHECK(put.PathParameters() == std::vector<std::string>{"cartId"});
  REQUIRE(create.Success() != nullptr);
  CHECK(create.Success()->status == 201);
  CHECK(create.Success()->headers.count("Idempotency-Replayed") == 1);
}

TEST_CASE("init's errors name the document, and the place in it", "[init]") {
  SECTION("no such file") {
    auto doc = LoadOpenApi("/nonexistent/api.yaml");
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.status().ToString().find("/nonexistent/api.yaml") != std::string::npos);
  }
  SECTION("not YAML nor JSON") {
    auto doc = ParseOpenApi("openapi: 3.0.0\npaths: {/a: [\n", "broken.json");
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.status().ToString().rfind("broken.json:", 0) == 0);
  }
  SECTION("Swagger 2.0") {
    auto doc = ParseOpenApi("swagger: \"2.0\"\npaths: {}\n", "old.yaml");
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.status().ToString().find("old.yaml:1:") == 0);
    CHECK(doc.status().message().find("2.0") != std::string::npos);
  }
  SECTION("a $ref to another file, one that names nothing, a cycle: warnings, the rest read") {
    auto doc = ParseOpenApi(
        "openapi: 3.0.3\npaths:\n  /a:\n    post:\n      parameters: [{$ref: \"common.yaml#/Key\"}]\n"
        "      responses: {\"200\": {description: ok}}\n  /b:\n    post:\n"
        "      parameters: [{$ref: \"#/components/parameters/Nope\"}, {$ref: \"#/components/parameters/A\"}]\n"
        "      responses: {\"200\": {description: ok}}\ncomponents:\n  parameters:\n"
        "    A: {$ref: \"#/components/parameters/B\"}\n    B: {$ref: \"#/components/parameters/A\"}\n",
        "api.yaml");
    REQUIRE(doc.ok());
    REQUIRE(doc->warnings.size() == 3);
    CHECK(doc->warnings[0].find("api.yaml:5:") == 0);
    CHECK(doc->warnings[0].find("common.yaml#/Key") != std::string::npos);
    CHECK(doc->warnings[1].find("names nothing") != std::string::npos);
    CHECK(doc->warnings[2].find("cycle") != std::string::npos);
    CHECK(doc->operations.size() == 2);
  }
  SECTION("only GET endpoints: nothing to make an action of") {
    auto doc = ParseOpenApi("openapi: 3.0.3\npaths:\n  /a:\n    get:\n      responses: {\"200\": {description: ok}}\n",
                            "reads.yaml");
    REQUIRE(doc.ok());
    auto text = WriteTarget(*doc, InitOptions{"reads.yaml", "", "", ""});
    REQUIRE_FALSE(text.ok());
    CHECK(text.status().ToString().find("reads.yaml") == 0);
  }
  SECTION("an x-idempotency role that is no role") {
    auto doc = ParseOpenApi(
        "openapi: 3.0.3\npaths:\n  /a:\n    post:\n      x-idempotency: {role: charge}\n"
        "      responses: {\"200\": {description: ok}}\n",
        "api.yaml");
    REQUIRE(doc.ok());
    auto text = WriteTarget(*doc, InitOptions{"api.yaml", "", "", ""});
    REQUIRE_FALSE(text.ok());
    CHECK(text.status().ToString().find("api.yaml:5:") == 0);
    CHECK(text.status().message().find("pay") != std::string::npos);
  }
}

TEST_CASE("init writes a target file the loader accepts, every guess marked", "[init]") {
  auto doc = ParseOpenApi(kShop, "shop.yaml");
  REQUIRE(doc.ok());
  auto text = WriteTarget(*doc, InitOptions{"shop.yaml", "", "./shop --listen {{port}}", ""});
  REQUIRE(text.ok());
  const std::string& t = *text;
  INFO(t);
  auto target = ParseTarget(t, "generated.yaml");
  REQUIRE(target.ok());
  CHECK(t.rfind("# Generated by `idemproof init` from shop.yaml (OpenAPI 3.1.0", 0) == 0);
  // base_url keeps the server's path; {{port}} in --start: a free port
  CHECK(t.find("base_url: \"http://127.0.0.1:{{port}}/v2\"") != std::string::npos);
  CHECK(t.find("free_port: true") != std::string::npos);
  CHECK(t.find("argv: [\"./shop\", \"--listen\", \"{{port}}\"]") != std::string::npos);
  // the contract from the documented header, statuses and replay header
  CHECK(t.find("key_header: Idempotency-Key\n") != std::string::npos);
  CHECK(t.find("replay: {header: Idempotency-Replayed") != std::string::npos);
  CHECK(t.find("in_progress: 409") != std::string::npos);
  CHECK(t.find("mismatch: 422") != std::string::npos);
  CHECK(t.find("retry_after: recommended") != std::string::npos);
  // the create: a body built from allOf's required members, {{biz}} in the
  // listing's filter member, its records from that listing
  CHECK(t.find("json: {\"owner\": \"{{biz}}\", \"currency\": \"EUR\", \"items\": 1}") != std::string::npos);
  CHECK(t.find("other_payload: {json: {\"owner\": \"{{biz}}\", \"currency\": \"EUR\", \"items\": 2}}") !=
        std::string::npos);
  CHECK(t.find("records: {request: {method: GET, path: \"/carts?owner={{biz}}\"}, count: \"$.total\"}") !=
        std::string::npos);
  // the path parameter's capture, one object down in the create's answer
  CHECK(t.find("capture: {cart_id: \"$.cart.cartId\"}") != std::string::npos);
  const TargetDescription& d = *target;
  REQUIRE(d.actions.count("create_cart"));
  CHECK(d.actions.at("create_cart").role == "create");
  // POST .../cancel: a delete of the create; a keyless PUT: still an action (idempotent by its method)
  REQUIRE(d.actions.count("cancel_cart"));
  CHECK(d.actions.at("cancel_cart").role == "delete");
  CHECK(d.actions.at("cancel_cart").of == "create_cart");
  REQUIRE(d.actions.count("replace_cart"));
  CHECK(d.actions.at("replace_cart").role == "put");
  CHECK(t.find("path: \"/carts/{{cart_id}}\", json: {\"items\": 3}") != std::string::npos);
  CHECK(t.find("# CONFIRM: declares no Idempotency-Key header: kept as an action since PUT") != std::string::npos);
  // a keyless POST is left out, said so
  CHECK(d.actions.count("stock_webhook") == 0);
  CHECK(t.find("# left out: POST /webhooks/stock: declares no Idempotency-Key header") != std::string::npos);
  // the item GET: a resource probe of the create
  REQUIRE(d.probes.count("cart"));
  CHECK(t.find("cart: {role: resource, of: create_cart, request: {method: GET, path: \"/carts/{{cart_id}}\"}, "
               "value: \"$.cart\"}") != std::string::npos);
  // the guesses: the create's role, where {{biz}} went, the window
  CHECK(t.find("# CONFIRM: role create") != std::string::npos);
  CHECK(t.find("# CONFIRM: body from the document's schema; {{biz}} (the business id, one per test) in $.owner") !=
        std::string::npos);
  CHECK(t.find("# CONFIRM: window:") != std::string::npos);
}

TEST_CASE("init takes the base URL it is given, or the document's server with a CONFIRM", "[init]") {
  auto doc = ParseOpenApi(kShop, "shop.yaml");
  REQUIRE(doc.ok());
  auto given = WriteTarget(*doc, InitOptions{"shop.yaml", "http://10.0.0.5:9000/v2", "", ""});
  REQUIRE(given.ok());
  CHECK(given->find("base_url: \"http://10.0.0.5:9000/v2\"\n") != std::string::npos);
  CHECK(given->find("start:") == std::string::npos);
  auto server = WriteTarget(*doc, InitOptions{"shop.yaml", "", "", "../schemas/target.schema.json"});
  REQUIRE(server.ok());
  CHECK(server->rfind("# yaml-language-server: $schema=../schemas/target.schema.json\n", 0) == 0);
  CHECK(server->find("base_url: \"https://api.example.com/v2\"   # CONFIRM:") != std::string::npos);
  // the service prints its port: port_from_stdout, to confirm
  auto printed = WriteTarget(*doc, InitOptions{"shop.yaml", "", "./shop --port 0", ""});
  REQUIRE(printed.ok());
  CHECK(printed->find("port_from_stdout: '127\\.0\\.0\\.1:(\\d+)'   # CONFIRM:") != std::string::npos);
  CHECK(ParseTarget(*printed, "printed.yaml").ok());
}

TEST_CASE("init splits --start like a shell's words, without a shell", "[init]") {
  auto words = SplitCommand(R"(node "{{source_dir}}/app.js" --name 'a b' x\y "q\"d")");
  REQUIRE(words.ok());
  CHECK(*words == std::vector<std::string>{"node", "{{source_dir}}/app.js", "--name", "a b", "x\\y", "q\"d"});
  CHECK_FALSE(SplitCommand("node 'app.js").ok());
  CHECK_FALSE(SplitCommand("   ").ok());
}

namespace {

// One POST /things whose key is the given header parameter (with its
// description) or body member; `media` json or form.
OpenApiDocument OneOperation(const std::string& yaml_parameters, const std::string& yaml_body,
                             const std::string& media = "application/json", const std::string& extra = "") {
  const std::string text = "openapi: 3.0.3\ninfo: {title: K, version: \"1\"}\n" + extra +
                           "paths:\n  /things:\n    post:\n      operationId: makeThing\n"
                           "      parameters: " + yaml_parameters + "\n" +
                           (yaml_body.empty() ? "" : "      requestBody: {content: {" + media + ": {schema: " + yaml_body + "}}}\n") +
                           "      responses: {\"201\": {description: made}}\n";
  auto doc = ParseOpenApi(text, "k.yaml");
  REQUIRE(doc.ok());
  return *doc;
}

std::string Header(const std::string& name, const std::string& description = "") {
  return "[{name: \"" + name + "\", in: header, required: true, description: \"" + description +
         "\", schema: {type: string}}]";
}

}  // namespace

TEST_CASE("init finds the key under any vendor spelling, never a credential", "[init]") {
  struct Case {
    std::string name, description;
    bool key;
  };
  const std::vector<Case> headers = {
      {"Idempotency-Key", "", true},
      {"X-Idempotency-Key", "", true},
      {"Idempotent-Key", "", true},
      {"idempotency-token", "", true},
      {"X-Dedup-Id", "", true},
      {"X-Client-Token", "", true},
      {"X-Request-Id", "", false},  // a tracing id unless its description says otherwise
      {"X-Request-Id", "Retries with the same id are not processed twice.", true},
      {"Request-Token", "A request with a token already seen is a duplicate and is not repeated.", true},
      {"X-Correlation-Id", "Tracing only.", false},
      {"Ocp-Apim-Subscription-Key", "Makes retries safe (idempotency).", false},  // a credential
      {"X-API-Key", "idempotency", false},
      {"Authorization", "", false},
      {"X-Trace", "Unique per call so that duplicates are dropped (idempotent).", true},
  };
  for (const auto& c : headers) {
    INFO(c.name << " / " << c.description);
    const OpenApiDocument doc = OneOperation(Header(c.name, c.description), "");
    const KeyPlace key = FindKey(doc.operations[0], doc.security_headers);
    CHECK((key.in == KeyPlace::In::kHeader) == c.key);
    if (c.key) CHECK(key.name == c.name);
  }
  // an apiKey security scheme's header is a credential, whatever its name says
  const OpenApiDocument secured = OneOperation(
      Header("X-Idempotency-Secret-Key"), "", "application/json",
      "components: {securitySchemes: {k: {type: apiKey, in: header, name: X-Idempotency-Secret-Key}}}\n");
  CHECK(FindKey(secured.operations[0], secured.security_headers).in == KeyPlace::In::kNone);
  // a body member: by name, or by its description
  struct Member {
    std::string name, description;
    bool key;
  };
  const std::vector<Member> members = {
      {"idempotency_key", "", true},  {"idempotencyKey", "", true}, {"client_token", "", true},
      {"ClientToken", "", true},      {"request_id", "", false},    {"request_id", "Deduplicates retried requests.", true},
      {"client_reference_id", "", false},
      {"client_reference_id", "A second request with the same reference is treated as a duplicate.", true},
      {"amount", "", false},
  };
  for (const auto& m : members) {
    INFO(m.name << " / " << m.description);
    const std::string schema = "{type: object, required: [\"" + m.name + "\"], properties: {amount: {type: integer}, \"" +
                               m.name + "\": {type: string, description: \"" + m.description + "\"}}}";
    const OpenApiDocument json_doc = OneOperation("[]", schema);
    const KeyPlace key = FindKey(json_doc.operations[0], json_doc.security_headers);
    CHECK((key.in == KeyPlace::In::kJson) == m.key);
    if (m.key) {
      CHECK(key.name == m.name);
      CHECK(key.required);
    }
    const OpenApiDocument form_doc = OneOperation("[]", schema, "application/x-www-form-urlencoded");
    CHECK((FindKey(form_doc.operations[0], form_doc.security_headers).in == KeyPlace::In::kForm) == m.key);
  }
  // a member that is no string is no key, whatever its description
  const OpenApiDocument number = OneOperation("[]", "{type: object, properties: {seq: {type: integer, description: \"idempotency sequence\"}}}");
  CHECK(FindKey(number.operations[0], number.security_headers).in == KeyPlace::In::kNone);
  // found by its description only: the target says so, to confirm
  const OpenApiDocument described = OneOperation(Header("X-Request-Id", "Retried requests with the same id are not repeated."), "");
  CHECK(FindKey(described.operations[0], described.security_headers).by_description);
  auto written = WriteTarget(described, InitOptions{"k.yaml", "http://127.0.0.1:9", "", ""});
  REQUIRE(written.ok());
  CHECK(written->find("# CONFIRM: the key: header X-Request-Id, taken from its description") != std::string::npos);
  CHECK(written->find("key_header: X-Request-Id\n") != std::string::npos);
  // a header that says it wins over a body member
  const OpenApiDocument both = OneOperation(Header("Idempotency-Key"), "{type: object, properties: {idempotency_key: {type: string}}}");
  CHECK(FindKey(both.operations[0], both.security_headers).Where() == "header Idempotency-Key");
}

TEST_CASE("init places the key where each operation takes it: key_header none and {{key}} in the request", "[init]") {
  auto doc = ParseOpenApi(R"(openapi: 3.0.3
info: {title: Pay, version: "1"}
paths:
  /payments:
    post:
      operationId: createPayment
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [idempotency_key, customer, amount]
              properties:
                idempotency_key: {type: string}
                customer: {type: string}
                amount: {type: integer}
      responses: {"201": {description: made, content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}}}
  /refunds:
    post:
      operationId: createRefund
      parameters: [{name: X-Idempotency-Key, in: header, required: false, schema: {type: string}}]
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {charge: {type: string}, memo: {type: string, example: "a b&c"}, cents: {type: integer}}}
      responses: {"201": {description: made}}
  /payments/{id}:
    put:
      operationId: replacePayment
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
)", "pay.yaml");
  REQUIRE(doc.ok());
  InitSummary summary;
  auto text = WriteTarget(*doc, InitOptions{"pay.yaml", "http://127.0.0.1:9", "", ""}, &summary);
  REQUIRE(text.ok());
  INFO(*text);
  auto target = ParseTarget(*text, "pay-target.yaml");
  REQUIRE(target.ok());
  CHECK(target->idempotency.key_header.empty());  // none
  const auto& pay = target->actions.at("create_payment").request;
  REQUIRE(pay.json.has_value());
  CHECK((*pay.json)["idempotency_key"] == "{{key}}");
  CHECK((*pay.json)["customer"] == "{{biz}}");  // the business id never goes in the key member
  const auto& refund = target->actions.at("create_refund").request;
  CHECK(refund.headers == HeaderList{{"X-Idempotency-Key", "{{key}}"}});
  REQUIRE(refund.body.has_value());
  CHECK(refund.content_type == "application/x-www-form-urlencoded");
  CHECK(*refund.body == "charge={{biz}}&memo=a%20b%26c&cents=1");
  // the keyless PUT still carries a key, said so
  CHECK(target->actions.at("replace_payment").request.headers == HeaderList{{"Idempotency-Key", "{{key}}"}});
  CHECK(text->find("# CONFIRM: no key declared: sent under Idempotency-Key") != std::string::npos);
  REQUIRE(summary.rows.size() == 3);
  CHECK(summary.rows[0].key == "json member idempotency_key");
  CHECK(summary.rows[1].key == "header X-Idempotency-Key");
  CHECK(summary.rows[2].key == "none");
}

TEST_CASE("init on a document that declares no key writes candidates to confirm, not nothing", "[init]") {
  auto doc = ParseOpenApi(R"(openapi: 3.0.3
info: {title: Plain, version: "1"}
paths:
  /notes:
    post:
      requestBody: {content: {application/json: {example: {text: hi}}}}
      responses: {"201": {description: made}}
)", "plain.yaml");
  REQUIRE(doc.ok());
  auto text = WriteTarget(*doc, InitOptions{"plain.yaml", "http://127.0.0.1:9", "", ""});
  REQUIRE(text.ok());
  INFO(*text);
  CHECK(text->find("# CONFIRM: the document declares no idempotency key anywhere: a candidate") != std::string::npos);
  CHECK(text->find("key_header: Idempotency-Key   # CONFIRM:") != std::string::npos);
  auto target = ParseTarget(*text, "plain-target.yaml");
  REQUIRE(target.ok());
  CHECK(target->actions.count("post_notes") == 1);
}

TEST_CASE("init makes actions of operations on existing resources: of: their create, else a setup to fill", "[init]") {
  const std::string ops = R"(
  /payments/{id}/capture:
    post:
      operationId: capturePayment
      parameters: [{name: id, in: path, required: true, schema: {type: string}}, {$ref: "#/components/parameters/Key"}]
      responses: {"200": {description: captured}}
  /payments/{id}/refund:
    post:
      operationId: refundPayment
      parameters: [{name: id, in: path, required: true, schema: {type: string}}, {$ref: "#/components/parameters/Key"}]
      responses: {"200": {description: refunded}}
components:
  parameters:
    Key: {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
)";
  const std::string head = "openapi: 3.0.3\ninfo: {title: Cap, version: \"1\"}\npaths:\n";
  const std::string create = R"(  /payments:
    post:
      operationId: createPayment
      parameters: [{$ref: "#/components/parameters/Key"}]
      requestBody: {content: {application/json: {example: {customer: c-1, cents: 5}}}}
      responses: {"201": {description: made}}
)";
  SECTION("no create: the path as written, a setup to complete") {
    auto doc = ParseOpenApi(head + ops, "cap.yaml");
    REQUIRE(doc.ok());
    auto text = WriteTarget(*doc, InitOptions{"cap.yaml", "http://127.0.0.1:9", "", ""});
    REQUIRE(text.ok());
    INFO(*text);
    auto target = ParseTarget(*text, "cap-target.yaml");
    REQUIRE(target.ok());
    REQUIRE(target->actions.count("capture_payment") == 1);
    CHECK(target->actions.at("capture_payment").role == "put");
    CHECK(target->actions.at("capture_payment").of.empty());
    CHECK(target->actions.at("capture_payment").request.path == "/payments/{id}/capture");
    CHECK(text->find("# CONFIRM: setup: no create of the document makes {id}: put an existing resource's id in the "
                     "path") != std::string::npos);
    CHECK(target->actions.count("refund_payment") == 1);
  }
  SECTION("with the create of {id}: of: it, its id captured") {
    auto doc = ParseOpenApi(head + create + ops, "cap.yaml");
    REQUIRE(doc.ok());
    auto text = WriteTarget(*doc, InitOptions{"cap.yaml", "http://127.0.0.1:9", "", ""});
    REQUIRE(text.ok());
    INFO(*text);
    auto target = ParseTarget(*text, "cap-target.yaml");
    REQUIRE(target.ok());
    CHECK(target->actions.at("capture_payment").of == "create_payment");
    CHECK(target->actions.at("capture_payment").request.path == "/payments/{{payment_id}}/capture");
  }
}

TEST_CASE("init writes the operations chosen by path, tag, operationId or key, and keyed ones only past 40", "[init]") {
  std::string text = "openapi: 3.0.3\ninfo: {title: Big, version: \"1\"}\npaths:\n";
  for (int i = 0; i < 45; ++i) {
    const std::string n = std::to_string(i);
    text += "  /r" + n + ":\n    post:\n      operationId: make" + n + "\n      tags: [" + (i % 2 ? "odd" : "even") +
            "]\n" + (i < 5 ? "      parameters: [{name: Idempotency-Key, in: header, required: true, schema: {type: string}}]\n" : "") +
            "      responses: {\"201\": {description: made}}\n";
  }
  // 45 writes, 5 keyed: the default takes the keyed ones, said so
  auto doc = ParseOpenApi(text, "big.yaml");
  REQUIRE(doc.ok());
  InitSummary summary;
  auto all = WriteTarget(*doc, InitOptions{"big.yaml", "http://127.0.0.1:9", "", ""}, &summary);
  REQUIRE(all.ok());
  auto big = ParseTarget(*all, "big-target.yaml");
  REQUIRE(big.ok());
  CHECK(big->actions.size() == 5);
  REQUIRE(summary.notes.size() == 1);
  CHECK(summary.notes[0].find("45 write operations (more than 40): only those that carry a key") != std::string::npos);
  CHECK(summary.rows.size() == 45);
  CHECK(summary.rows[10].note == "no key (a big document: keyed ones only)");
  CHECK(all->find("# CONFIRM: 45 write operations") != std::string::npos);
  // a selection: only what it names (keyless POSTs named are still left out: the document names keys)
  InitOptions chosen{"big.yaml", "http://127.0.0.1:9", "", ""};
  chosen.path_globs = {"/r1*"};
  chosen.tags = {"odd"};
  InitSummary picked;
  auto some = WriteTarget(*doc, chosen, &picked);
  REQUIRE(some.ok());
  auto t = ParseTarget(*some, "some.yaml");
  REQUIRE(t.ok());
  CHECK(t->actions.size() == 1);  // /r1 (odd, keyed); /r11.. /r19 odd but keyless POSTs
  CHECK(t->actions.count("make1") == 1);
  InitOptions by_id{"big.yaml", "http://127.0.0.1:9", "", ""};
  by_id.operation_ids = {"make3"};
  by_id.keyed_only = true;
  auto one = WriteTarget(*doc, by_id);
  REQUIRE(one.ok());
  CHECK(ParseTarget(*one, "one.yaml")->actions.size() == 1);
  // a selection that leaves nothing: an error that says why
  InitOptions none{"big.yaml", "http://127.0.0.1:9", "", ""};
  none.tags = {"absent"};
  auto empty = WriteTarget(*doc, none);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message().find("not selected") != std::string::npos);
}

// The target written from `document` and loaded back: both must succeed.
struct Written {
  std::string text;
  TargetDescription target;
};
static Written WriteAndLoad(const std::string& document, const std::string& file) {
  auto doc = ParseOpenApi(document, file);
  REQUIRE(doc.ok());
  auto text = WriteTarget(*doc, InitOptions{file, "http://127.0.0.1:9", "", ""});
  INFO((text.ok() ? *text : text.status().message()));
  REQUIRE(text.ok());
  auto target = ParseTarget(*text, file + "-target.yaml");
  INFO((target.ok() ? std::string() : target.status().message()));
  REQUIRE(target.ok());
  return {*text, *target};
}

TEST_CASE("init builds a body through an object with additionalProperties and no properties", "[init]") {
  // Stripe's `metadata`: {type: object, additionalProperties: {...}} with no
  // `properties`, in a body with no `required` (so every member is built).
  const std::string text = R"(openapi: 3.0.3
info: {title: Meta, version: "1"}
paths:
  /accounts:
    post:
      operationId: createAccount
      parameters: [{name: Idempotency-Key, in: header, required: true, schema: {type: string}}]
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                email: {type: string}
                individual:
                  type: object
                  properties:
                    metadata: {type: object, additionalProperties: {type: string}}
                    tags: {type: array, minItems: 1}
      responses: {"200": {description: made}}
)";
  const Written w = WriteAndLoad(text, "meta.yaml");
  INFO(w.text);
  REQUIRE(w.target.actions.count("create_account") == 1);
  CHECK(w.target.actions.at("create_account").role == "create");
  CHECK(w.text.find("\"metadata\": {}") != std::string::npos);  // its free keys: none
  CHECK(w.text.find("\"tags\": [null]") != std::string::npos);    // minItems, no items
}

TEST_CASE("init takes a POST to a sub-collection for a create: its parents' ids a setup to fill", "[init]") {
  // Twilio's shape: POST .../{AccountSid}/Calls.json makes a call under an
  // account; POST .../Calls/{CallSid}.json (an item) updates one.
  const std::string text = R"(openapi: 3.0.3
info: {title: Nested, version: "1"}
paths:
  /Accounts/{AccountSid}/Calls.json:
    post:
      operationId: CreateCall
      parameters: [{name: AccountSid, in: path, required: true, schema: {type: string}}, {$ref: "#/components/parameters/Key"}]
      requestBody: {content: {application/json: {schema: {type: object, required: [To], properties: {To: {type: string}}}}}}
      responses: {"201": {description: made, content: {application/json: {schema: {type: object, properties: {sid: {type: string}}}}}}}
  /Accounts/{AccountSid}/Calls/{CallSid}.json:
    post:
      operationId: UpdateCall
      parameters:
        - {name: AccountSid, in: path, required: true, schema: {type: string}}
        - {name: CallSid, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/Key"}
      responses: {"200": {description: updated}}
  /Accounts/{AccountSid}/Calls/{CallSid}/cancel:
    post:
      operationId: CancelCall
      parameters:
        - {name: AccountSid, in: path, required: true, schema: {type: string}}
        - {name: CallSid, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/Key"}
      responses: {"200": {description: cancelled}}
components:
  parameters:
    Key: {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
)";
  const Written w = WriteAndLoad(text, "nested.yaml");
  INFO(w.text);
  REQUIRE(w.target.actions.count("create_call") == 1);
  CHECK(w.target.actions.at("create_call").role == "create");
  CHECK(w.target.actions.at("create_call").request.path == "/Accounts/{AccountSid}/Calls.json");
  CHECK(w.text.find("# CONFIRM: setup: no create of the document makes {AccountSid}: put an existing resource's id "
                      "in the path") != std::string::npos);
  // an item (last segment a parameter) stays a put, an ending verb a delete
  CHECK(w.target.actions.at("update_call").role == "put");
  CHECK(w.target.actions.at("cancel_call").role == "delete");
}

TEST_CASE("init names a captured id apart from the built-in template variables", "[init]") {
  // Stripe's DELETE /v1/ephemeral_keys/{key}: a capture named `key` would
  // shadow the idempotency key's {{key}}.
  const std::string text = R"(openapi: 3.0.3
info: {title: Keys, version: "1"}
paths:
  /ephemeral_keys:
    post:
      operationId: createKey
      parameters: [{$ref: "#/components/parameters/Key"}]
      requestBody: {content: {application/json: {schema: {type: object, required: [customer], properties: {customer: {type: string}}}}}}
      responses: {"200": {description: made, content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}}}
  /ephemeral_keys/{key}:
    delete:
      operationId: deleteKey
      parameters: [{name: key, in: path, required: true, schema: {type: string}}, {$ref: "#/components/parameters/Key"}]
      responses: {"200": {description: deleted}}
components:
  parameters:
    Key: {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
)";
  const Written w = WriteAndLoad(text, "keys.yaml");
  INFO(w.text);
  CHECK(w.target.actions.at("delete_key").of == "create_key");
  CHECK(w.target.actions.at("delete_key").request.path == "/ephemeral_keys/{{ephemeral_key_id}}");
}
