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
