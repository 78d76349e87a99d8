// Broken and hostile input files (issue 16): each case was accepted, hung or
// crashed before; now each is an error with file:line:column or is handled
// within bounds.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "model/console_text.h"
#include "model/pattern.h"
#include "model/results.h"
#include "load_helpers.h"
#include "model/scenario.h"
#include "model/target.h"
#include "model/target_commands.h"
#include "oracles/oracle.h"
#include "model/results_json.h"

using namespace idemproof;
using namespace idemproof::testing;

namespace {

const std::string kTarget =
    "name: t\nbase_url: http://127.0.0.1:1\n"
    "actions:\n  create_order: {role: create, request: {method: POST, path: /orders}}\n";

const std::string kScenarioHead = "layer: client\nhunts: x\n";

}  // namespace

TEST_CASE("a file with a NUL byte is named binary, never empty", "[hostile]") {
  const std::string nul(1, '\0');
  CHECK(TargetError(nul + "name: t\n") ==
        "t.yaml:1:1: a NUL byte: this is a binary file (or UTF-16), not YAML text");
  CHECK(TargetError(kTarget + "headers: {X-A: \"b" + nul + "\"}\n").rfind("t.yaml:5:", 0) == 0);
  CHECK(ScenarioError(nul).find("NUL byte") != std::string::npos);
  CHECK(ScenarioError("").find("scenario file is empty") != std::string::npos);
}

TEST_CASE("invalid UTF-8 in a file is an error at its byte", "[hostile]") {
  CHECK(TargetError(kTarget + "headers: {X-A: \"caf\xc3\"}\n") == "t.yaml:5:20: invalid UTF-8 byte sequence");
  CHECK(TargetError("name: \xff\n").rfind("t.yaml:1:7: invalid UTF-8", 0) == 0);
  // Valid multi-byte text is fine.
  CHECK(ParseTarget(kTarget + "headers: {X-A: \"caf\xc3\xa9\"}\n", "t.yaml").ok());
}

TEST_CASE("a duplicate key is an error at the second one", "[hostile]") {
  CHECK(TargetError("name: t\nname: u\nbase_url: http://127.0.0.1:1\n") ==
        "t.yaml:2:1: duplicate key 'name' in one map (YAML keys must be unique)");
  CHECK(TargetError(kTarget + "headers:\n  X-A: b\n  X-A: c\n").rfind("t.yaml:7:3: duplicate key 'X-A'", 0) == 0);
  CHECK(ScenarioError(kScenarioHead + "steps:\n  - {send: a, send: b}\nexpect: [one_record]\n")
            .rfind("s.yaml:4:15: duplicate key 'send'", 0) == 0);
  // The same key in two different maps is no duplicate.
  CHECK(ParseTarget(kTarget + "probes:\n  a: {request: {path: /a}}\n  b: {request: {path: /b}}\n", "t.yaml").ok());
}

TEST_CASE("a second YAML document is an error", "[hostile]") {
  CHECK(TargetError(kTarget + "---\nname: other\n").rfind(
            "t.yaml:5:1: a second YAML document ('---'): the file must hold exactly one", 0) == 0);
  CHECK(ParseTarget("---\n" + kTarget, "t.yaml").ok());  // one document, opened explicitly
}

TEST_CASE("an alias bomb inside a json block is refused quickly", "[hostile]") {
  std::string bomb = "  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    bomb += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p + ", " + p +
            ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
  }
  const std::string text = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n  create_order:\n"
                           "    role: create\n    request:\n      method: POST\n      path: /orders\n"
                           "      json:\n" +
                           [&] {
                             std::string indented;
                             for (std::size_t i = 0; i < bomb.size(); ++i) {
                               if (i == 0 || bomb[i - 1] == '\n') indented += "      ";
                               indented += bomb[i];
                             }
                             return indented;
                           }();
  const auto start = std::chrono::steady_clock::now();
  const std::string error = TargetError(text);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(error.find("expands to more than 100000 nodes") != std::string::npos);
  CHECK(error.rfind("t.yaml:", 0) == 0);
  CHECK(took < std::chrono::seconds(2));
  // A few honest aliases are fine.
  CHECK(ParseTarget(kTarget + "probes:\n  a: &p {request: {path: /a}}\n  b: *p\n", "t.yaml").ok());
}

TEST_CASE("CR, LF and NUL in header values fail, as do bad header names", "[hostile]") {
  CHECK(TargetError(kTarget + "headers: {X-A: \"b\\r\\nX-Injected: 1\"}\n") ==
        "t.yaml:5:16: headers 'X-A': the value holds the control byte 0x0D (CR, LF and NUL would split or cut the "
        "request)");
  CHECK(TargetError(kTarget + "headers: {X-A: \"b\\0c\"}\n").find("control byte 0x00") != std::string::npos);
  CHECK(TargetError("name: t\nbase_url: http://127.0.0.1:1\nactions:\n  create_order:\n    role: create\n"
                    "    request: {method: POST, path: /orders, headers: {X-A: \"b\\nc\"}}\n")
            .find("control byte 0x0A") != std::string::npos);
  CHECK(TargetError(kTarget + "headers: {\"X A\": b}\n").find("is not a valid header name") != std::string::npos);
  CHECK(ParseTarget(kTarget + "headers: {X-A: \"b\\tc\"}\n", "t.yaml").ok());  // a tab is allowed in a value
}

TEST_CASE("a zero timeout and a duration past 24h are errors", "[hostile]") {
  CHECK(TargetError(kTarget + "request_timeout: 0s\n") ==
        "t.yaml:5:18: request_timeout must be longer than 0 (every wait has a deadline; there is no 'no timeout')");
  CHECK(TargetError(kTarget + "request_timeout: 0\n").find("longer than 0") != std::string::npos);
  CHECK(ScenarioError(kScenarioHead + "steps:\n  - wait: 2562047h\nexpect: [one_record]\n") ==
        "s.yaml:4:11: step 'wait': '2562047h' is longer than the longest duration a file may give (24h)");
  CHECK(ScenarioError(kScenarioHead + "steps:\n  - send: a\n    timeout: 0ms\nexpect: [one_record]\n")
            .find("timeout must be longer than 0") != std::string::npos);
  CHECK(ParseScenario(kScenarioHead + "steps:\n  - wait: 24h\nexpect: [one_record]\n", "s.yaml",
                      BuiltinOracles().Vocabulary())
            .ok());
}

TEST_CASE("regexes from files run on RE2: a 50 KB line cannot crash the harness", "[hostile]") {
  auto p = Pattern::Compile(".*port (\\d+)");
  REQUIRE(p.ok());
  const std::string line = std::string(50 * 1024, 'x') + " port 4242 " + std::string(50 * 1024, 'y');
  CHECK(p->FirstGroup(line) == "4242");  // std::regex recursed per character here: SIGSEGV
  CHECK_FALSE(p->FirstGroup(std::string(50 * 1024, 'x')).has_value());
  CHECK(p->Search(line));
  CHECK_FALSE(p->FullMatch(line));  // the whole line: it starts with x, ends with y
  CHECK(Pattern::Compile("-?[0-9]+")->FullMatch("-42"));
  CHECK_FALSE(Pattern::Compile("-?[0-9]+")->FullMatch("42x"));  // where Search says yes
  CHECK(Pattern::Compile("-?[0-9]+")->Search("42x"));
  // A capture rule over a header value uses the same engine.
  CaptureRule rule;
  rule.header = "Location";
  rule.pattern = ".*/orders/(\\d+)$";
  CHECK(rule.From({{"Location", std::string(50 * 1024, 'a') + "/orders/17"}}, "") == "17");
  // Bad patterns are load errors naming the file position.
  CHECK(TargetError("name: t\nbase_url: http://127.0.0.1:1\nstart:\n  argv: [x]\n  port_from_stdout: '(\\d+'\n"
                    "actions:\n  create_order: {role: create, request: {method: POST, path: /orders}}\n")
            .rfind("t.yaml:5:21: start.port_from_stdout: bad regex '(\\d+': missing )", 0) == 0);
  CHECK(TargetError("name: t\nbase_url: http://127.0.0.1:1\nstart:\n  argv: [x]\n  port_from_stdout: '(?=a)(\\d)'\n"
                    "actions:\n  create_order: {role: create, request: {method: POST, path: /orders}}\n")
            .find("bad regex") != std::string::npos);  // lookahead: not RE2 syntax
}

TEST_CASE("a 200,000-character name is a located error: the loaders' own name checks run on RE2", "[hostile]") {
  // std::regex_match recursed per character: past about 100,000 the loader
  // crashed (SIGSEGV) instead of saying where the bad name is. (Explicit
  // keys: YAML refuses a plain key over 1,024 characters by itself.)
  const std::string name = std::string(200 * 1000, 'a');
  const std::string bad = name + "!";
  const std::string head = "name: t\nbase_url: http://127.0.0.1:1\nactions:\n  ? ";
  const std::string action = "\n  : {role: create, request: {method: POST, path: /orders}}\n";
  CHECK(TargetError(head + bad + action).rfind("t.yaml:4:5: bad action name", 0) == 0);
  const std::string header = TargetError(kTarget + "headers:\n  ? " + name + "@\n  : b\n");  // '!' is a token byte
  CHECK(header.rfind("t.yaml:6:5: ", 0) == 0);
  CHECK(header.find("is not a valid header name") != std::string::npos);
  CHECK(ScenarioError(kScenarioHead + "for_each:\n  ? " + bad + "\n  : {role: create}\nsteps:\n  - wait: 1s\n"
                      "expect: [one_record]\n")
            .find("s.yaml:4:5: bad parameter name") != std::string::npos);
  CHECK(ScenarioError(kScenarioHead + "steps:\n  - send: " + bad + "\nexpect: [one_record]\n")
            .rfind("s.yaml:4:11: ", 0) == 0);
  // Names that are fine stay fine, however long.
  CHECK(ParseTarget(head + name + action, "t.yaml").ok());
}

TEST_CASE("the console never gets raw control bytes from a target", "[hostile]") {
  CHECK(ConsoleSafe("ok \x1b[2J\x1b]0;pwned\x07 done") == "ok \\x1b[2J\\x1b]0;pwned\\x07 done");
  CHECK(ConsoleSafe(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(ConsoleSafe("line\r\nnext\tcol") == "line  next col");
  CHECK(ConsoleSafe("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // UTF-8 passes
  CHECK(ConsoleSafe("\xc2\x9b" "31m") == "\\xc2\\x9b31m");                     // C1 CSI
  CHECK(ConsoleSafe("bad \xff\xfe") == "bad \\xff\\xfe");
}

TEST_CASE("the console shows bidi controls as escapes and an argv's line breaks escaped too", "[hostile]") {
  // "Trojan Source": U+202E would show the rest of the line reversed.
  CHECK(ConsoleSafe("a\u202Eb\u2066c\u200Fd\u061Ce") == "a\\u202eb\\u2066c\\u200fd\\u061ce");
  CHECK(ConsoleSafe("\u202D\u2069\u200E") == "\\u202d\\u2069\\u200e");
  CHECK(ConsoleSafe("\u2028 \u05D0") == "\u2028 \u05D0");  // other code points pass
  CHECK(ConsoleSafe("a\nb\tc\rd", LineBreaks::kEscape) == "a\\nb\\tc\\rd");
}

// Issue 43: the commands a target file runs are gathered in one place, so
// run, discover and explore show them before the first starts.
TEST_CASE("DeclaredCommands lists every argv of a target file escaped and shell-quoted", "[hostile]") {
  const std::string file =
      "name: t\nbase_url: \"http://127.0.0.1:{{port}}\"\n"
      "start: {argv: [sh, -c, \"touch x; echo 'y'\"], env: {A: b}, cwd: /tmp, flaw_args: [--flaw, \"{{flaw}}\"]}\n"
      "reset: {command: [reset-it]}\n"
      "services:\n  stub: {argv: [\"stub\\e[31m\", \"a\\nb\"]}\n"
      "hooks:\n  heal: {command: [heal-it, \"\"]}\n  slow_business: {request: {method: POST, path: /slow}}\n"
      "actions:\n  create_order:\n    role: create\n    request: {method: POST, path: /orders}\n"
      "    records: {command: [count-it, \"{{biz}}\"], count: \"$.count\"}\n"
      "probes:\n  ledger: {command: [ledger-it], value: stdout}\n"
      "  web: {request: {method: GET, path: /x}}\n";
  auto t = ParseTarget(file, "t.yaml");
  INFO((t.ok() ? std::string() : t.status().ToString()));
  REQUIRE(t.ok());
  const std::vector<DeclaredCommand> commands = DeclaredCommands(*t, std::string("slow"));
  std::vector<std::string> where;
  for (const auto& c : commands) where.push_back(c.where);
  CHECK(where == std::vector<std::string>{"start with flaw slow", "services.stub.start", "reset", "hooks.heal",
                                          "actions.create_order.records", "probes.ledger"});
  CHECK(commands[0].argv == std::vector<std::string>{"sh", "-c", "touch x; echo 'y'", "--flaw", "{{flaw}}"});
  const std::string text = DeclaredCommandsText(commands);
  INFO(text);
  CHECK(text.find("  start with flaw slow (t.yaml:3:8): sh -c 'touch x; echo '\\''y'\\''' --flaw '{{flaw}}'\n"
                  "      env A=b\n      cwd /tmp\n") == 0);
  CHECK(text.find(": 'stub\\x1b[31m' 'a\\nb'\n") != std::string::npos);  // no ESC, no line break of its own
  CHECK(text.find("hooks.heal (t.yaml:8:9): heal-it ''\n") != std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
  // One line per command and one per env / cwd: 8 in all.
  CHECK(std::count(text.begin(), text.end(), '\n') == 8);
  CHECK(DeclaredCommandsNotice(*t).find("idemproof: t.yaml makes the harness run these 6 command(s)") == 0);
  auto none = ParseTarget(kTarget, "t.yaml");
  REQUIRE(none.ok());
  CHECK(DeclaredCommands(*none).empty());
  CHECK(DeclaredCommandsNotice(*none).empty());
}

TEST_CASE("an incomplete run reads back as finished: false and never exits 0", "[hostile]") {
  RunResults r;
  r.run_id = "x";
  r.complete = false;
  ScenarioResult tested;  // a row that judged the target: an empty run tests nothing (exit 3)
  tested.name = "double-submit";
  tested.verdicts.push_back(Verdict::Valid("one_record", "1 business id(s) with the expected record count"));
  r.scenarios.push_back(tested);
  nlohmann::json doc = RunResultsToJson(r);
  CHECK(doc.at("finished") == false);
  CHECK(doc.at("exit_code") == 3);
  auto back = RunResultsFromJson(doc);
  REQUIRE(back.ok());
  CHECK_FALSE(back->complete);
  CHECK(back->ExitCode() == 3);
  // A finished run keeps its time; an old run directory (a time string) is complete.
  r.complete = true;
  r.finished = "2024-05-01T12:00:03.250Z";
  doc = RunResultsToJson(r);
  CHECK(doc.at("finished") == "2024-05-01T12:00:03.250Z");
  CHECK(doc.at("exit_code") == 0);
  CHECK(RunResultsFromJson(doc)->complete);
  // Written atomically: no temp file is left beside it.
  const std::string dir = std::filesystem::temp_directory_path() / ("idemproof-results-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  REQUIRE(WriteRunResults(r, dir + "/results.json").ok());
  CHECK(std::filesystem::exists(dir + "/results.json"));
  CHECK_FALSE(std::filesystem::exists(dir + "/results.json.tmp"));
  CHECK(ReadRunResults(dir + "/results.json")->finished == r.finished);
  std::filesystem::remove_all(dir);
}
