// The base room: durations, header lists, problem+json, query strings.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/header_list.h"
#include "base/problem.h"
#include "base/query_string.h"

using namespace idemproof;
using namespace std::chrono_literals;

TEST_CASE("durations parse every unit and reject the rest", "[base]") {
  CHECK(*ParseDuration("250us") == 250us);
  CHECK(*ParseDuration("250ms") == 250ms);
  CHECK(*ParseDuration("4s") == 4s);
  CHECK(*ParseDuration("2m") == 2min);
  CHECK(*ParseDuration("24h") == 24h);
  CHECK(*ParseDuration("0s") == 0s);
  for (const char* bad : {"", "5", "ms", "1.5s", "-1s", "5 s", "5sec", "3d", "99999999999999999999h"}) {
    INFO(bad);
    auto r = ParseDuration(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
  }
  CHECK(ParseDuration("3d").status().message().find("unknown unit 'd'") != std::string::npos);
  CHECK(FormatDuration(1500ms) == "1500ms");
  CHECK(FormatDuration(4s) == "4s");
  CHECK(FormatDuration(24h) == "24h");
  CHECK(FormatDuration(0s) == "0s");
  CHECK(*ParseDuration(FormatDuration(90s)) == 90s);
}

TEST_CASE("a bare 0 is the one duration without a unit", "[base]") {
  CHECK(*ParseDuration("0") == 0ns);
  CHECK(*ParseDuration("200us") == 200us);
  CHECK_FALSE(ParseDuration("10").ok());
  CHECK_FALSE(ParseDuration("00").ok());
  CHECK_FALSE(ParseDuration("s").ok());
  CHECK(FormatDuration(90s) == "90s");
}

TEST_CASE("header lookups ignore case and keep the first value", "[base]") {
  const HeaderList headers = {{"Content-Type", "text/plain"}, {"X-A", "1"}, {"x-a", "2"}};
  CHECK(find_header(headers, "content-type") == "text/plain");
  CHECK(find_header(headers, "X-A") == "1");
  CHECK_FALSE(find_header(headers, "X-B"));
  CHECK(equals_ignoring_case("Idempotency-Key", "idempotency-key"));
  CHECK_FALSE(equals_ignoring_case("Key", "Keys"));
  HttpResponse r;
  r.headers = headers;
  r.set_header("X-A", "3");
  CHECK(r.header("x-a") == "3");
  CHECK(r.headers.size() == 2);
}

TEST_CASE("problem answers are RFC 9457 problem+json", "[base]") {
  const HttpResponse r = problem_response(422, "key-reused", "Key reused", "another payload");
  CHECK(r.status == 422);
  CHECK(r.header("Content-Type") == "application/problem+json");
  const auto body = nlohmann::json::parse(r.body);
  CHECK(body.at("type") == "urn:idemproof:key-reused");
  CHECK(body.at("status") == 422);
  CHECK(body.at("detail") == "another payload");
  CHECK(json_response(201, {{"id", 1}}).header("Content-Type") == "application/json");
}

TEST_CASE("query parameters are percent-decoded", "[base]") {
  CHECK(split_target("/orders?biz_no=x").first == "/orders");
  CHECK(query_parameter("a=1&biz_no=b%201+2", "biz_no") == "b 1 2");
  CHECK_FALSE(query_parameter("a=1", "biz_no"));
  CHECK_FALSE(query_parameter("biz_no=%zz", "biz_no"));
}

TEST_CASE("percent_encode keeps the unreserved characters and decodes back", "[base]") {
  CHECK(percent_encode("a-b.c_d~9") == "a-b.c_d~9");
  CHECK(percent_encode("a b&c={{x}}\xC3\xA9") == "a%20b%26c%3D%7B%7Bx%7D%7D%C3%A9");
  CHECK(query_parameter("v=" + percent_encode("x+y z%"), "v") == "x+y z%");
}

