// The step-kind registry (model/step_kind.h): a kind defined here, in the
// test, registered as README.md's "add a step kind" says, is loaded from a
// scenario file (its options, its located errors), checked against a target,
// and run by the interpreter, its effect in the history; and the built-ins
// are the registry's one name table.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "local_http_server.h"
#include "model/history_events.h"
#include "model/scenario.h"
#include "model/step_kind.h"
#include "model/plan_model.h"
#include "model/step_parser.h"
#include "oracles/oracle.h"
#include "runtime/interpreter.h"
#include "runtime/step_context.h"
#include "runtime/step_execution.h"
#include "test_support.h"

using namespace idemproof;

namespace {

// TEST-ONLY kind: `stamp: WORD` with `times: N` (1..5) appends N notes
// "stamped WORD" to the history; it needs a hook named WORD. Registered
// outside harness/steps/, it keeps its options in CustomOptions; its model
// half (StepKindSpec) and runtime half (runtime::StepExecution) in one class.
struct StampOptions {
  std::string word;
  int times = 1;
};

class StampStepKind final : public StepKindSpec, public runtime::StepExecution {
 public:
  const char* name() const override { return "stamp"; }
  std::vector<std::string> options() const override { return {"times", "after", "label"}; }
  StepOptions NewOptions() const override { return CustomOptions{StampOptions{}}; }
  static StampOptions& Of(Step& step) { return std::any_cast<StampOptions&>(step.Options<CustomOptions>().value); }
  static const StampOptions& Of(const Step& step) {
    return std::any_cast<const StampOptions&>(step.Options<CustomOptions>().value);
  }
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    StampOptions& o = Of(step);
    o.word = parser.Symbol(parser.RequiredValue(value, key, "step 'stamp'", "a word"), "step 'stamp'");
    if (node["times"]) {
      const long long n = parser.reader().Int(node["times"], "step 'stamp'.times");
      if (n < 1 || n > 5) parser.Fail(node["times"], "step 'stamp'.times must be between 1 and 5");
      o.times = static_cast<int>(n);
    }
  }
  void Check(const Step& step, StepFitCheck& fit) const override {
    const std::string& word = Of(step).word;
    if (!fit.target().hooks.count(word)) fit.AddNeed("a hook '" + word + "' to stamp");
  }
  Status Write(const Step&, YAML::Emitter&) const override {
    return Status(StatusCode::kUnsupported, "stamp has no writer");
  }
  void Plan(const Step&, PlanModel&, const ProvidedVariables&) const override {}
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    const StampOptions& o = Of(step);
    for (int i = 0; i < o.times; ++i) ctx.recorder().Note(index, "stamped " + o.word);
    return Status::Ok();
  }
};

// The registration line of the recipe (once per process).
void RegisterStamp() {
  if (StepKinds().Find("stamp") == nullptr) REQUIRE(StepKinds().Register(std::make_unique<StampStepKind>()).ok());
}

const char* kTarget = R"(name: shop
base_url: "http://127.0.0.1:1"
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
hooks:
  blue: {request: {method: POST, path: /hooks/blue}}
)";

}  // namespace

TEST_CASE("a test-only step kind registered like a built-in loads, checks and runs through the interpreter",
          "[steps][registry]") {
  RegisterStamp();
  const std::string text =
      "layer: gateway\nhunts: x\nsteps:\n  - send: create_order\n  - stamp: blue\n    times: 3\n"
      "  - send: create_order\nexpect: [one_record]\n";
  auto scenario = ParseScenario(text, "s.yaml", BuiltinOracles().Vocabulary());
  INFO(scenario.status().ToString());
  REQUIRE(scenario.ok());
  REQUIRE(scenario->steps.size() == 3);
  CHECK(scenario->steps[1].KindName() == "stamp");
  CHECK(StampStepKind::Of(scenario->steps[1]).times == 3);
  CHECK(StampStepKind::Of(scenario->steps[1]).word == "blue");
  // Its options are its own: no built-in family's.
  CHECK(scenario->steps[1].Find<SendOptions>() == nullptr);
  CHECK(scenario->steps[0].Find<CustomOptions>() == nullptr);

  auto target = ParseTarget(kTarget, "t.yaml");
  INFO(target.status().ToString());
  REQUIRE(target.ok());
  CHECK(CheckScenarioAgainstTarget(*scenario, *target).runnable());
  TargetDescription without_hook = *target;
  without_hook.hooks.clear();
  const ScenarioFit fit = CheckScenarioAgainstTarget(*scenario, without_hook);
  REQUIRE(fit.needs.size() == 1);
  CHECK(fit.needs[0] == "a hook 'blue' to stamp");

  const std::string dir = idemproof::testing::ScratchDir("stamp-kind");
  idemproof::testing::LocalHttpServer server(idemproof::testing::LocalHttpServer::Behaviour::kAnswer);
  target->base_url = "http://127.0.0.1:" + std::to_string(server.port());
  runtime::InterpreterOptions options;
  options.run_namespace = "stamp";
  runtime::Interpreter interpreter(*target, options);
  runtime::ScenarioRun run = interpreter.Run(*scenario, dir, 0);
  INFO(run.error.ToString() << "\n" << run.history.ToJsonl());
  REQUIRE(run.error.ok());
  // Three stamps of step 1, between the two sends' events.
  int stamps = 0, sends_before = 0, sends_after = 0;
  for (const auto& e : run.history.events()) {
    if (e.f == event_f::kSend && e.type == EventType::kInvoke) (stamps == 0 ? sends_before : sends_after)++;
    if (e.f == event_f::kNote && e.value.value("note", "") == "stamped blue") {
      CHECK(e.step == 1);
      ++stamps;
    }
  }
  CHECK(stamps == 3);
  CHECK(sends_before == 1);
  CHECK(sends_after == 1);
}

TEST_CASE("a registered step kind's errors carry file, line and column like a built-in's", "[steps][registry]") {
  RegisterStamp();
  auto bad = ParseScenario("layer: gateway\nhunts: x\nsteps:\n  - stamp: blue\n    times: 9\nexpect: [one_record]\n",
                           "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().ToString().find("s.yaml:5:12") != std::string::npos);
  CHECK(bad.status().message().find("step 'stamp'.times must be between 1 and 5") != std::string::npos);
  // An unknown key is checked against the kind's options, and the registry
  // is the list of kinds an unknown one is told about.
  auto unknown_key = ParseScenario("layer: gateway\nhunts: x\nsteps:\n  - stamp: blue\n    tims: 2\n"
                                   "expect: [one_record]\n",
                                   "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE_FALSE(unknown_key.ok());
  CHECK(unknown_key.status().message().find("times") != std::string::npos);
  auto unknown_kind = ParseScenario("layer: gateway\nhunts: x\nsteps:\n  - stamq: blue\nexpect: [one_record]\n",
                                    "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE_FALSE(unknown_kind.ok());
  CHECK(unknown_kind.status().message().find("did you mean 'stamp'") != std::string::npos);
  CHECK(unknown_kind.status().message().find("send, burst, wait") != std::string::npos);
}

TEST_CASE("a step holds its kind's options and no other kind's", "[steps][registry]") {
  auto s = ParseScenario("layer: gateway\nhunts: x\nsteps:\n  - send: create_order\n    key: k2\n    repeat: 2\n"
                         "  - wait: 250ms\n  - kill\n  - hook: blue\n    biz: b2\n  - join\n"
                         "expect: [one_record]\n",
                         "s.yaml", BuiltinOracles().Vocabulary());
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  REQUIRE(s->steps.size() == 5);
  const Step& send = s->steps[0];
  REQUIRE(send.Find<SendOptions>() != nullptr);
  CHECK(send.Options<SendOptions>().key == "k2");
  CHECK(send.Options<SendOptions>().repeat == 2);
  CHECK(send.Find<WaitOptions>() == nullptr);
  CHECK(s->steps[1].Options<WaitOptions>().duration == std::chrono::milliseconds(250));
  CHECK(s->steps[1].Find<SendOptions>() == nullptr);
  // A bare kind gets its options at their defaults.
  CHECK(s->steps[2].Options<InstanceOptions>().ControlledInstance() == "main");
  CHECK(s->steps[3].Options<HookOptions>().name == "blue");
  CHECK(s->steps[3].Options<HookOptions>().biz == "b2");
  CHECK(std::holds_alternative<std::monostate>(s->steps[4].options));
  // Asking for another kind's options is an error, not a default.
  CHECK_THROWS_AS(s->steps[1].Options<SendOptions>(), std::bad_variant_access);
  // MakeStep gives the kind's options at their defaults.
  const Step made = MakeStep("deliver");
  CHECK(made.Options<QueueOptions>().message_id == "m1");
  CHECK(made.Options<QueueOptions>().consumers == std::vector<std::string>{"main"});
}

TEST_CASE("the registry refuses a step kind registered twice", "[steps][registry]") {
  RegisterStamp();
  const Status again = StepKinds().Register(std::make_unique<StampStepKind>());
  CHECK(again.code() == StatusCode::kInvalidArgument);
  CHECK(again.message().find("'stamp'") != std::string::npos);
  CHECK(StepKinds().Find("send") != nullptr);  // the built-ins registered before main()
}
