// Nothing an OpenAPI document says becomes YAML structure or a template in
// `idemproof init`'s file (issue 43 item 1, issue 44 item 3): a property
// feeds hostile text (every line break kind, control characters, quotes,
// template braces, YAML indicators) into every string position of a
// generated document and checks the written file loads, with exactly the
// keys the writer means and the values the document said; the five
// injection documents of issue 43 as regression cases, and (slow) `run` on
// what init wrote executes nothing from the document.
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "base/duration.h"
#include "init/openapi_document.h"
#include "init/target_writer.h"
#include "init/yaml_out.h"
#include "model/target.h"
#include "model/template.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::init;
using ojson = nlohmann::ordered_json;

namespace {

// Pieces that break naive YAML or template writing, and plain characters.
rc::Gen<std::string> HostileText() {
  static const std::vector<std::string> kPieces = {
      "\n", "\r", "\r\n", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9", "\t", "\x01", "\x1B[31m", "\x7F",
      std::string(1, '\0'), "\xC2\x9B", "\xEF\xBB\xBF", "\xE2\x80\xAE", "\xC3\xA9", "\xF0\x9F\x98\x80",
      "\"", "'", "\\", "\\n", "{{", "}}", "{", "}", "{{key}}", "{{'", ": ", ":", "#", " #", "- ", "-", "&a",
      "*a", "!!str ", "%YAML", "@", "`", "|", ">", "[", "]", ",", "?", "---", "...", "~", "null", "true",
      "\nstart: {argv: [sh, -c, 'touch PWNED']}", "\n  hooks: x", " ", "  ", "x", "a1", "-1e999"};
  const auto piece = rc::gen::oneOf(rc::gen::elementOf(kPieces),
                                    rc::gen::map(rc::gen::inRange<int>(0x20, 0x7F),
                                                 [](int c) { return std::string(1, static_cast<char>(c)); }));
  return rc::gen::map(rc::gen::resize(12, rc::gen::container<std::vector<std::string>>(piece)),
                      [](const std::vector<std::string>& parts) {
                        std::string out;
                        for (const auto& p : parts) out += p;
                        return out;
                      });
}

// A path segment: hostile, but no '/' (a segment) nor '{' '}' (a path
// parameter of the document's own is the writer's business, not this one's).
rc::Gen<std::string> Segment() {
  return rc::gen::map(HostileText(), [](std::string s) {
    std::erase_if(s, [](char c) { return c == '/' || c == '{' || c == '}' || c == '?' || c == '#'; });
    return "s" + s;
  });
}

bool IsToken(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos))
      return false;
  return true;
}

std::set<std::string> Keys(const YAML::Node& map) {
  std::set<std::string> out;
  for (const auto& kv : map) out.insert(kv.first.Scalar());
  return out;
}

// The document as YAML flow text (the reader gets exactly these strings).
std::string Text(const ojson& tree) {
  YamlOut out;
  out.Json(tree);
  return out.Text();
}

}  // namespace

TEST_CASE("init's file from a document with hostile text everywhere loads to exactly what the document said",
          "[init]") {
  const bool ok = rc::check([] {
    const std::string title = *HostileText();
    const std::string server = *HostileText();
    const std::string seg = *Segment();
    const std::string seg2 = *Segment();
    const std::string create_id = *HostileText();
    const std::string put_id = *HostileText();
    const std::string key_name = "X-Idempotency-" + *HostileText();
    const std::string header_name = *HostileText();
    const std::string slow_name = "slow" + *HostileText();
    const std::string example_name = *HostileText();
    const std::string ref = *HostileText();
    const std::string note = *HostileText();
    const std::string member = "m" + *HostileText();
    const std::string enum_value = *HostileText();
    const std::string code = *HostileText();
    const std::string window = *rc::gen::oneOf(rc::gen::just<std::string>("24h"), HostileText());
    const ojson example = {{"ref", ref}, {"note", note}, {member, "v"}, {"amount", 5}};
    ojson ok_responses = {{"201", {{"description", "created"}}}};
    ok_responses[code] = {{"description", "other"}};
    const std::string create_path = "/" + seg;
    const std::string put_path = "/" + seg + "/{id}" + "/" + seg2;
    const ojson doc = {
        {"openapi", "3.1.0"},
        {"info", {{"title", title}, {"version", "1"}}},
        {"servers", {{{"url", "https://api.example.com/" + server}}}},
        {"x-idempotency", {{"window", window}}},
        {"paths",
         {{create_path,
           {{"post",
             {{"operationId", create_id},
              {"x-idempotency", true},
              {"parameters",
               {{{"name", key_name}, {"in", "header"}, {"required", true}, {"schema", {{"type", "string"}}}},
                {{"name", header_name}, {"in", "header"}, {"schema", {{"type", "string"}}}},
                {{"name", slow_name}, {"in", "query"}, {"schema", {{"type", "integer"}}}}}},
              {"requestBody",
               {{"content", {{"application/json", {{"examples", {{example_name, {{"value", example}}}}}}}}}}},
              {"responses", ok_responses}}}}},
          {put_path,
           {{"put",
             {{"operationId", put_id},
              {"parameters", {{{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}}},
              {"requestBody",
               {{"content",
                 {{"application/json",
                   {{"schema",
                     {{"type", "object"},
                      {"required", {"state"}},
                      {"properties", {{"state", {{"type", "string"}, {"enum", {enum_value, "b"}}}}}}}}}}}}}},
              {"responses", {{"200", {{"description", "set"}}}}}}}}}}}};
    auto read = ParseOpenApi(Text(doc), "hostile.yaml");
    if (!read.ok()) {
      // the reader's refusal must say where
      RC_ASSERT(read.status().message().find("hostile.yaml") != std::string::npos ||
                read.status().ToString().find("hostile.yaml") != std::string::npos);
      RC_TAG("document refused by the reader");
      return;
    }
    auto written = WriteTarget(*read, InitOptions{"hostile.yaml", "", "", ""});
    if (!written.ok()) {
      RC_ASSERT(!written.status().message().empty());
      RC_TAG("refused by the writer");
      return;
    }
    RC_TAG("written");
    const std::string& text = *written;
    const YAML::Node root = YAML::Load(text);
    RC_ASSERT(root.IsMap());
    const std::set<std::string> top = {"name", "base_url", "idempotency", "request_timeout", "compare_headers",
                                       "actions"};
    RC_ASSERT(Keys(root) == top);
    auto target = ParseTarget(text, "written.yaml");
    if (!target.ok()) RC_FAIL("the written file does not load: " + target.status().ToString() + "\n" + text);
    RC_ASSERT(!target->start.has_value());
    // the server, the key header, the window: the document's, or the default with a CONFIRM
    RC_ASSERT(*ExpandTemplate(root["base_url"].Scalar(), {}) == "https://api.example.com/" + server);
    const std::string key_header = IsToken(key_name) ? key_name : "Idempotency-Key";
    RC_ASSERT(root["idempotency"]["key_header"].Scalar() == key_header);
    if (ParseDuration(window).ok()) RC_ASSERT(root["idempotency"]["window"].Scalar() == window);
    else RC_ASSERT(!root["idempotency"]["window"]);
    // the actions: the create and the put of its resource, their keys exactly the writer's
    const YAML::Node actions = root["actions"];
    RC_ASSERT(actions.size() == 2u);
    std::string create, put;
    for (const auto& kv : actions) (kv.second["role"].Scalar() == "create" ? create : put) = kv.first.Scalar();
    RC_ASSERT(!create.empty());
    RC_ASSERT(!put.empty());
    RC_ASSERT(Keys(actions[create]) ==
              (std::set<std::string>{"role", "request", "other_payload", "capture", "variants"}));
    RC_ASSERT(Keys(actions[put]) == (std::set<std::string>{"role", "of", "request"}));
    RC_ASSERT(actions[put]["of"].Scalar() == create);
    const ActionDescription& c = target->actions.at(create);
    const ActionDescription& p = target->actions.at(put);
    // the values sent are the document's text
    TemplateVars vars = {{"biz", "B"}};
    for (const auto& [var, rule] : c.capture) vars[var] = "ID";
    RC_ASSERT(c.request.method == "POST");
    RC_ASSERT(*ExpandTemplate(c.request.path, vars) == create_path);
    RC_ASSERT(c.request.json.has_value());
    nlohmann::json sent = example;
    sent["ref"] = "B";
    RC_ASSERT(*ExpandTemplateJson(*c.request.json, vars) == sent);
    RC_ASSERT(*ExpandTemplate(p.request.path, vars) == "/" + seg + "/ID/" + seg2);
    RC_ASSERT(*ExpandTemplateJson(*p.request.json, vars) == nlohmann::json({{"state", enum_value}}));
    RC_ASSERT(c.variants.count("slow") == 1u);
    RC_ASSERT(c.variants.at("slow").query.size() == 1u);
    RC_ASSERT(c.variants.at("slow").query[0].first == slow_name);
  });
  CHECK(ok);
}

TEST_CASE("init quotes any text so a YAML reader reads it back, and comments never end early", "[init]") {
  const bool ok = rc::check([] {
    const std::string text = *HostileText();
    auto quoted = QuoteYaml(text);
    RC_ASSERT(quoted.ok());
    const YAML::Node back = YAML::Load("v: " + *quoted + "\n");
    RC_ASSERT(back["v"].as<std::string>() == text);
    // one line, printable: a comment that stays a comment
    const std::string comment = CommentText(text);
    const YAML::Node after = YAML::Load("a: 1 # " + comment + "\nb: 2\n");
    RC_ASSERT(Keys(after) == (std::set<std::string>{"a", "b"}));
    RC_ASSERT(comment.find_first_of("\r\n") == std::string::npos);
    RC_ASSERT(comment.find("\xE2\x80\xA8") == std::string::npos);
    RC_ASSERT(comment.find("\xC2\x85") == std::string::npos);
  });
  CHECK(ok);
  // not UTF-8: refused, never written half
  CHECK_FALSE(QuoteYaml("a\xFF").ok());
  CHECK_FALSE(QuoteYaml("\xC0\xAF").ok());       // overlong '/'
  CHECK_FALSE(QuoteYaml("\xED\xA0\x80").ok());   // a surrogate
  CHECK(*QuoteYaml("a\xE2\x80\xA8" "b") == "\"a\\u2028b\"");
  CHECK(CommentText("a\xFF\nb") == "a  b");
  // the writer: a value that is not UTF-8 is refused with a clear error; in
  // a comment (the title) it is blanked
  OpenApiDocument doc;
  doc.file = "latin1.yaml";
  doc.version = "3.0.3";
  doc.title = "Caf\xE9\nstart: x";
  Operation op;
  op.method = "PUT";
  op.path = "/caf\xE9";
  doc.operations.push_back(op);
  auto refused = WriteTarget(doc, InitOptions{"latin1.yaml", "http://127.0.0.1:9", "", ""});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().ToString().find("latin1.yaml") != std::string::npos);
  CHECK(refused.status().message().find("not UTF-8") != std::string::npos);
  doc.operations[0].path = "/cafe";
  auto written = WriteTarget(doc, InitOptions{"latin1.yaml", "http://127.0.0.1:9", "", ""});
  REQUIRE(written.ok());
  CHECK(YAML::Load(*written)["start"].IsDefined() == false);
  CHECK(ParseTarget(*written, "latin1-target.yaml").ok());
}

namespace {

// A small keyed shop whose one string position carries an injection.
struct Injection {
  const char* where;
  std::string title = "Shop", path = "/orders", example = "", code = "\"409\"", window = "24h";
};

std::string InjectionDocument(const Injection& in) {
  return "openapi: 3.0.3\n"
         "info: {title: " + in.title + ", version: \"1\"}\n"
         "x-idempotency: {window: " + in.window + "}\n"
         "paths:\n"
         "  " + in.path + ":\n"
         "    post:\n"
         "      operationId: createOrder\n"
         "      parameters: [{name: Idempotency-Key, in: header, required: true, schema: {type: string}}]\n"
         "      requestBody:\n"
         "        content:\n"
         "          application/json:\n"
         "            examples:\n" +
         // an example by reference only: its name reaches the reader's notes
         (in.example.empty() ? "" : "              " + in.example + ": {externalValue: \"https://example.com/x.json\"}\n") +
         "              second: {value: {customer: c-1, cents: 100}}\n"
         "      responses:\n"
         "        \"201\": {description: created}\n"
         "        " + in.code + ": {description: in progress}\n";
}

// The five places of issue 43's campaign, each holding
// "\nstart: {argv: [sh, -c, 'touch MARKER']}\n#" (the "#" comments out the
// rest of the line it lands on). On main before the emitter, `init` wrote
// files with that start: for the title, the response-code key, the example
// name and the x-idempotency value (and `run` touched the marker), and an
// unloadable file for the path key (refused by init's own reload check).
std::vector<Injection> Injections(const std::string& marker) {
  const std::string start = "\\nstart: {argv: [sh, -c, 'touch " + marker + "']}\\n#";
  std::vector<Injection> out(5);
  out[0].where = "title";
  out[0].title = "\"Shop" + start + "\"";
  out[1].where = "path key";
  out[1].path = "\"/orders" + start + "\"";
  out[2].where = "response-code key";
  out[2].code = "\"409" + start + "\"";
  out[3].where = "example name";
  out[3].example = "\"first" + start + "\"";
  out[4].where = "x-idempotency value";
  out[4].window = "\"24h" + start + "\"";
  return out;
}

}  // namespace

TEST_CASE("init writes no start: from a document that holds one (issue 43's five places)", "[init]") {
  for (const Injection& in : Injections("/tmp/idemproof-PWNED")) {
    INFO(in.where);
    const std::string text = InjectionDocument(in);
    INFO(text);
    auto doc = ParseOpenApi(text, "injected.yaml");
    if (!doc.ok()) {
      CHECK(doc.status().ToString().find("injected.yaml") != std::string::npos);
      continue;
    }
    auto written = WriteTarget(*doc, InitOptions{"injected.yaml", "http://127.0.0.1:9", "", ""});
    if (!written.ok()) continue;  // refused: init exits 2, nothing written
    INFO(*written);
    const YAML::Node root = YAML::Load(*written);
    CHECK_FALSE(root["start"]);
    CHECK_FALSE(root["hooks"]);
    auto target = ParseTarget(*written, "written.yaml");
    REQUIRE(target.ok());
    CHECK_FALSE(target->start.has_value());
  }
}

TEST_CASE("idemproof run on what init wrote from an injected document executes nothing of it",
          "[slow][init]") {
  const std::string dir = testing::ScratchDir("init-injected");
  const std::string marker = dir + "/PWNED";
  for (const Injection& in : Injections(marker)) {
    INFO(in.where);
    const std::string name = std::string(in.where).substr(0, std::string(in.where).find(' '));
    const std::string doc = dir + "/" + name + ".yaml";
    const std::string target = dir + "/" + name + "-target.yaml";
    testing::WriteFile(doc, InjectionDocument(in));
    testing::CliResult init =
        testing::RunIdemproof({"init", "--openapi", doc, "--base-url", "http://127.0.0.1:9", "-o", target}, dir);
    INFO(init.err);
    CHECK((init.exit_code == 0 || init.exit_code == 2));
    if (init.exit_code != 0) continue;
    CHECK(testing::ReadFile(target).find("\nstart:") == std::string::npos);
    testing::CliResult run = testing::RunIdemproof(
        {"run", testing::SourceDir() + "/scenarios/client/double-submit.yaml", "--target", target, "--out",
         dir + "/runs-" + name},
        dir, std::chrono::seconds(60));
    INFO(run.out << run.err);
    CHECK(run.exit_code != 0);  // nothing listens on :9; the point is what ran
    CHECK_FALSE(std::filesystem::exists(marker));
  }
}
