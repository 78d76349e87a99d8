// ApplyPayloadForm (runtime/request_forms.h): what each metamorphic form
// rewrites in a rendered request, and what it refuses to rewrite.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "runtime/request_forms.h"

using namespace idemproof;
using idemproof::runtime::ApplyPayloadForm;
using idemproof::HttpRequest;

namespace {

HttpRequest Order() {
  HttpRequest r;
  r.method = "POST";
  r.target = "/orders?src=web&tag=a";
  r.headers = {{"Content-Type", "application/json"}, {"Idempotency-Key", "k-1"}};
  r.body = R"({"amount":100,"biz_no":"b-1","item":{"qty":1,"sku":"a"},"key":"k-1"})";
  return r;
}

JsonPath P(const char* text) { return *JsonPath::Parse(text); }

std::vector<std::string> Apply(HttpRequest& r, PayloadVariant p, const std::vector<JsonPath>& ignored = {}) {
  auto out = ApplyPayloadForm(r, p, ignored, "k-1", "fresh-1");
  REQUIRE(out.ok());
  return *out;
}

}  // namespace

TEST_CASE("equal forms change the bytes, not the meaning", "[forms]") {
  const HttpRequest original = Order();
  const auto meaning = nlohmann::json::parse(original.body);
  HttpRequest r = original;
  SECTION("reordered") {
    CHECK(Apply(r, PayloadVariant::kReordered) == std::vector<std::string>{"JSON members in reverse order"});
    CHECK(r.body == R"({"key":"k-1","item":{"sku":"a","qty":1},"biz_no":"b-1","amount":100})");
  }
  SECTION("respaced") {
    CHECK(Apply(r, PayloadVariant::kRespaced) == std::vector<std::string>{"JSON indented, final newline"});
    CHECK(r.body.find("\n  \"amount\": 100,") != std::string::npos);
    CHECK(r.body.back() == '\n');
    CHECK(r.body.find("\"amount\"") < r.body.find("\"biz_no\""));  // order kept
  }
  SECTION("header_case") {
    Apply(r, PayloadVariant::kHeaderCase);
    CHECK(r.headers == HeaderList{{"content-type", "application/json"}, {"idempotency-key", "k-1"}});
    Apply(r, PayloadVariant::kHeaderCase);
    CHECK(r.headers.front().first == "CONTENT-TYPE");
  }
  SECTION("extra_header") {
    Apply(r, PayloadVariant::kExtraHeader);
    CHECK(find_header(r.headers, "X-Idemproof-Trace") == std::optional<std::string>("fresh-1"));
  }
  SECTION("query_reordered") {
    CHECK(Apply(r, PayloadVariant::kQueryReordered) == std::vector<std::string>{"query parameters in reverse order"});
    CHECK(r.target == "/orders?tag=a&src=web");
  }
  SECTION("equivalent: all at once") {
    CHECK(Apply(r, PayloadVariant::kEquivalent).size() == 5);
    CHECK(r.body.find("\"key\"") < r.body.find("\"amount\""));
    CHECK(r.body.find('\n') != std::string::npos);
    CHECK(r.target.find("?tag=a&src=web") != std::string::npos);
  }
  CHECK(nlohmann::json::parse(r.body) == meaning);
  CHECK(r.method == original.method);
}

TEST_CASE("an equal form with nothing to change sends the request as it is", "[forms]") {
  HttpRequest r = Order();
  r.target = "/orders";
  r.body = R"({"only":1})";
  CHECK(Apply(r, PayloadVariant::kReordered).empty());
  CHECK(Apply(r, PayloadVariant::kQueryReordered).empty());
  CHECK(r.body == R"({"only":1})");
  CHECK(r.target == "/orders");
}

TEST_CASE("value_changed changes the deepest number, last at its depth", "[forms]") {
  HttpRequest r = Order();
  CHECK(Apply(r, PayloadVariant::kValueChanged) == std::vector<std::string>{"$.item.qty: 1 -> 2"});
  const auto doc = nlohmann::json::parse(r.body);
  CHECK(doc["item"]["qty"] == 2);
  CHECK(doc["amount"] == 100);
}

TEST_CASE("value_changed leaves fingerprint_ignores members and the key alone", "[forms]") {
  HttpRequest r = Order();
  CHECK(Apply(r, PayloadVariant::kValueChanged, {P("$.item")}) == std::vector<std::string>{"$.amount: 100 -> 101"});
  HttpRequest s = Order();
  s.body = R"({"key":"k-1","note":"x"})";
  CHECK(Apply(s, PayloadVariant::kValueChanged) == std::vector<std::string>{"$.note: \"x\" -> \"x-changed\""});
  HttpRequest t = Order();
  t.body = R"({"flag":true,"key":"k-1"})";
  CHECK(Apply(t, PayloadVariant::kValueChanged) == std::vector<std::string>{"$.flag: true -> false"});
}

TEST_CASE("ignored_changed changes only a declared fingerprint_ignores member", "[forms]") {
  HttpRequest r = Order();
  CHECK(Apply(r, PayloadVariant::kIgnoredChanged, {P("$.item.sku")}) ==
        std::vector<std::string>{"$.item.sku: \"a\" -> \"a-changed\""});
  HttpRequest s = Order();
  auto none = ApplyPayloadForm(s, PayloadVariant::kIgnoredChanged, {}, "k-1", "f");
  CHECK(none.status().code() == StatusCode::kUnsupported);
}

TEST_CASE("field_removed removes the last member of the deepest object", "[forms]") {
  HttpRequest r = Order();
  CHECK(Apply(r, PayloadVariant::kFieldRemoved) == std::vector<std::string>{"$.item.sku removed"});
  CHECK(nlohmann::json::parse(r.body)["item"] == nlohmann::json{{"qty", 1}});
  HttpRequest s = Order();
  CHECK(Apply(s, PayloadVariant::kFieldRemoved, {P("$.item")}) == std::vector<std::string>{"$.biz_no removed"});
}

TEST_CASE("a changed form without a JSON body is refused, not faked", "[forms]") {
  HttpRequest r = Order();
  r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  r.body = "a=1&b=2";
  for (auto p : {PayloadVariant::kValueChanged, PayloadVariant::kFieldRemoved}) {
    HttpRequest copy = r;
    auto out = ApplyPayloadForm(copy, p, {}, "k", "f");
    CHECK(out.status().code() == StatusCode::kUnsupported);
    CHECK(copy.body == r.body);
  }
  HttpRequest respaced = r;
  CHECK(Apply(respaced, PayloadVariant::kRespaced).empty());  // not JSON: as it is
  CHECK(respaced.body == r.body);
}

// Issue 33 (size): a large request's answer is tens of kilobytes when the
// target echoes it; the harness grows the first array it finds.
TEST_CASE("payload large grows the first JSON array to tens of kilobytes, and refuses a body without one",
          "[forms]") {
  HttpRequest r = Order();
  r.body = R"({"biz_no":"b-1","meta":{"tags":[]},"lines":[{"sku":"a","qty":1}],"more":[1,2]})";
  // The depth-first first array is meta.tags, empty: nothing to repeat.
  auto empty = ApplyPayloadForm(r, PayloadVariant::kLarge, {}, "k-1", "f");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message() == "the JSON body's first array is empty: nothing to repeat");

  r.body = R"({"biz_no":"b-1","lines":[{"sku":"a","qty":1}],"more":[1,2]})";
  const auto changes = Apply(r, PayloadVariant::kLarge);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].rfind("$.lines: 1 -> ", 0) == 0);
  CHECK(r.body.size() >= kLargeBodyBytes);
  CHECK(r.body.size() < kLargeBodyBytes + 64);  // grown to the size, not past it
  const auto doc = nlohmann::json::parse(r.body);
  CHECK(doc["more"] == nlohmann::json::array({1, 2}));  // only the first array
  CHECK(doc["lines"].size() > 1000);
  CHECK(doc["lines"].back() == nlohmann::json({{"sku", "a"}, {"qty", 1}}));
  // Deterministic: a retry is the same bytes.
  HttpRequest again = Order();
  again.body = R"({"biz_no":"b-1","lines":[{"sku":"a","qty":1}],"more":[1,2]})";
  Apply(again, PayloadVariant::kLarge);
  CHECK(again.body == r.body);

  r.body = R"({"biz_no":"b-1","qty":1})";
  auto none = ApplyPayloadForm(r, PayloadVariant::kLarge, {}, "k-1", "f");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::kUnsupported);
  CHECK(none.status().message() == "the JSON body holds no array to grow (declare a 'large' variant)");
}

TEST_CASE("route spellings respell the path or the query order, body and headers untouched", "[forms][spelling]") {
  const HttpRequest original = Order();
  HttpRequest r = original;
  CHECK(Apply(r, PayloadVariant::kSpelling).empty());  // the first request itself
  CHECK(r.target == original.target);
  CHECK(Apply(r, PayloadVariant::kSpellingTrailingSlash) ==
        std::vector<std::string>{"path /orders spelled /orders/"});
  CHECK(r.target == "/orders/?src=web&tag=a");
  Apply(r, PayloadVariant::kSpellingTrailingSlash);  // a trailing slash is taken off
  CHECK(r.target == original.target);
  CHECK(Apply(r, PayloadVariant::kSpellingCase) == std::vector<std::string>{"path /orders spelled /ORDERS"});
  CHECK(r.target == "/ORDERS?src=web&tag=a");  // the query keeps its case
  Apply(r, PayloadVariant::kSpellingCase);
  CHECK(r.target == original.target);
  CHECK(Apply(r, PayloadVariant::kSpellingQueryOrder) ==
        std::vector<std::string>{"query parameters in reverse order"});
  CHECK(r.target == "/orders?tag=a&src=web");
  CHECK(r.body == original.body);
  CHECK(r.headers == original.headers);

  // Nothing to respell: not sent, and the reason says what to declare.
  HttpRequest bare = original;
  bare.target = "/orders?src=web";
  auto one = ApplyPayloadForm(bare, PayloadVariant::kSpellingQueryOrder, {}, "k-1", "fresh-1");
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().message().find("path_equivalence.query") != std::string::npos);
  bare.target = "/1/2";
  CHECK_FALSE(ApplyPayloadForm(bare, PayloadVariant::kSpellingCase, {}, "k-1", "fresh-1").ok());
}
