// The OpenAPI reader of `idemproof init` (harness/init/openapi_document.h)
// against hostile and unusual documents: what it reads for the writer
// (descriptions, tags, form bodies, security headers), its bounds (a
// regular file only, a size cap, UTF-8, numbers, aliases, recursive
// schemas, many parameters: each refused with the document's line and
// column or read with a warning, within 5 s), the `$ref` forms real
// documents use, and a small JSON/YAML conformance set.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "init/openapi_document.h"

using namespace idemproof;
using namespace idemproof::init;

namespace {

const Operation& FindOp(const OpenApiDocument& doc, const std::string& method, const std::string& path) {
  for (const auto& op : doc.operations)
    if (op.method == method && op.path == path) return op;
  FAIL("no " << method << " " << path);
  throw 0;
}

}  // namespace

TEST_CASE("the reader keeps descriptions, tags, form bodies and security headers", "[init][reader]") {
  auto doc = ParseOpenApi(R"(openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /charges:
    post:
      summary: Create a charge
      description: Charges a card.
      tags: [charges, payments]
      parameters:
        - {name: Request-Id, in: header, description: "deduplicates retries", schema: {type: string}}
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {amount: {type: integer}, idempotency_key: {type: string}}}
            example: {amount: 100}
      responses: {"200": {description: ok}}
  /refunds:
    post:
      requestBody:
        content:
          text/plain: {schema: {type: string}}
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
    query: {type: apiKey, in: query, name: api_key}
    bearer: {type: http, scheme: bearer}
)",
                          "form.yaml");
  REQUIRE(doc.ok());
  const Operation& charge = FindOp(*doc, "POST", "/charges");
  CHECK(charge.summary == "Create a charge");
  CHECK(charge.description == "Charges a card.");
  CHECK(charge.tags == std::vector<std::string>{"charges", "payments"});
  REQUIRE(charge.parameters.size() == 1);
  CHECK(charge.parameters[0].description == "deduplicates retries");
  CHECK(charge.request_media == "form");
  REQUIRE(charge.request_schema.IsMap());
  CHECK(charge.request_schema["properties"]["idempotency_key"].IsDefined());
  REQUIRE(charge.request_examples.size() == 1);
  CHECK(charge.request_examples[0]["amount"].as<int>() == 100);
  CHECK(FindOp(*doc, "POST", "/refunds").request_media.empty());
  CHECK(doc->security_headers == std::vector<std::string>{"x-api-key"});
}
