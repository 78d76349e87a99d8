#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "model/json_path.h"
#include "model/template.h"

using namespace idemproof;
using namespace std::chrono_literals;

TEST_CASE("templates expand known variables and refuse unknown ones") {
  TemplateVars vars{{"biz", "b-7"}, {"port", "8080"}};
  CHECK(*ExpandTemplate("/orders?biz_no={{biz}}", vars) == "/orders?biz_no=b-7");
  CHECK(*ExpandTemplate("http://127.0.0.1:{{ port }}/{{biz}}{{biz}}", vars) == "http://127.0.0.1:8080/b-7b-7");
  CHECK(*ExpandTemplate("no vars", vars) == "no vars");
  auto unknown = ExpandTemplate("/x/{{order_id}}", vars);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("unknown template variable '{{order_id}}'") != std::string::npos);
  CHECK(unknown.status().message().find("known: biz, port") != std::string::npos);
  CHECK_FALSE(ExpandTemplate("{{biz", vars).ok());
  CHECK_FALSE(ExpandTemplate("{{1x}}", vars).ok());
  CHECK(*TemplateVariables("{{a}}-{{b}}-{{a}}") == std::vector<std::string>{"a", "b"});

  nlohmann::json body = {{"biz_no", "{{biz}}"}, {"qty", 1}, {"tags", {"{{port}}", true}}};
  auto expanded = ExpandTemplateJson(body, vars);
  REQUIRE(expanded.ok());
  CHECK(*expanded == nlohmann::json{{"biz_no", "b-7"}, {"qty", 1}, {"tags", {"8080", true}}});
  CHECK_FALSE(ExpandTemplateJson({{"x", "{{nope}}"}}, vars).ok());
}

TEST_CASE("a template literal {{'...'}} expands to its text, and escaped text to itself") {
  TemplateVars vars{{"biz", "b-7"}};
  CHECK(*ExpandTemplate("a{{'{{'}}b}}", vars) == "a{{b}}");
  CHECK(*ExpandTemplate("{{ 'it''s }}' }}-{{biz}}", vars) == "it's }}-b-7");
  CHECK_FALSE(ExpandTemplate("{{'open", vars).ok());
  CHECK_FALSE(ExpandTemplate("{{'x' y}}", vars).ok());
  // a literal names no variable, and a partial expansion keeps it a literal
  CHECK(TemplateVariables("{{'{{key}}'}}")->empty());
  auto partial = ExpandSome("{{'{{x}}'}}{{biz}}", [](const std::string&) -> Result<std::optional<std::string>> {
    return std::optional<std::string>();
  });
  REQUIRE(partial.ok());
  CHECK(*ExpandTemplate(*partial, vars) == "{{x}}b-7");
  for (const std::string text : {"{{biz}}", "{", "{{", "{{{", "a{{'x'}}", "}}{{", "{ {", "x{{ key }}y{"}) {
    const std::string escaped = EscapeTemplateLiteral(text);
    CHECK(*ExpandTemplate(escaped, vars) == text);
    // followed by a variable of the writer's, it still reads as meant
    CHECK(*ExpandTemplate(escaped + "{{biz}}", vars) == text + "b-7");
  }
  CHECK(EscapeTemplateLiteral("/orders/{id}") == "/orders/{id}");
}

TEST_CASE("JSON paths find, map to json_pointer, and erase") {
  nlohmann::json doc = R"({"count": 2, "items": [{"id": 1, "at": "t1"}, {"id": 2, "at": "t2"}], "a b": {"c": 3}})"_json;
  CHECK(*JsonPath::Parse("$.count")->Find(doc) == 2);
  CHECK(*JsonPath::Parse("$.items[1].id")->Find(doc) == 2);
  CHECK(*JsonPath::Parse("$['a b'].c")->Find(doc) == 3);
  CHECK(*JsonPath::Parse("$")->Find(doc) == doc);
  CHECK(*JsonPath::Parse("$.items[*].id")->Find(doc) == nlohmann::json{1, 2});
  CHECK(JsonPath::Parse("$.items[0].id")->pointer() == "/items/0/id"_json_pointer);
  CHECK(doc.at(JsonPath::Parse("$.items[0].at")->pointer()) == "t1");
  CHECK(JsonPath::Parse("$.missing")->Find(doc).status().code() == StatusCode::kNotFound);
  CHECK(JsonPath::Parse("$.items[7]")->Find(doc).status().code() == StatusCode::kNotFound);

  nlohmann::json stripped = WithoutPaths(doc, {*JsonPath::Parse("$.items[*].at"), *JsonPath::Parse("$.count"),
                                               *JsonPath::Parse("$.nothing.here")});
  CHECK(stripped == R"({"items": [{"id": 1}, {"id": 2}], "a b": {"c": 3}})"_json);

  for (const char* bad : {"", "count", "$.", "$[", "$[x]", "$['a", "$.a[1", "$..a"}) {
    INFO(bad);
    CHECK_FALSE(JsonPath::Parse(bad).ok());
  }
}
