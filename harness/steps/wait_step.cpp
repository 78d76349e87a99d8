// `wait: DURATION` sleeps; `wait: past_window` sleeps past the target's retry
// window (PastWindowWait, model/scenario.h), `wait: past_lease` past its
// in-progress lease (PastLeaseWait), resolved when it runs. A wait event
// records what it slept.
#include "model/history_events.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

// The declared lease plus a fifth of it, at least 200ms more (2s -> 2.4s):
// the lease of a request sent just before has lapsed, and one slowed to
// {{slow_ms}} (the lease x 1.5) is still running. nullopt without a lease.
std::optional<Duration> PastLeaseWait(const IdempotencyContract& contract) {
  if (!contract.lease || *contract.lease > kLongestPastWindow) return std::nullopt;
  return *contract.lease + std::max<Duration>(std::chrono::milliseconds(200), *contract.lease / 5);
}

class WaitStepKind final : public StepKind {
 public:
  const char* name() const override { return "wait"; }
  std::vector<std::string> options() const override { return {"label"}; }
  StepOptions NewOptions() const override { return WaitOptions{}; }

  void Parse(StepParser& parser, const YAML::Node&, const YAML::Node& value, const YAML::Node& key,
             Step& s) const override {
    const std::string what = What(*this);
    WaitOptions& step = s.Options<WaitOptions>();
    const YAML::Node d = parser.RequiredValue(value, key, what, "a duration, past_window or past_lease");
    if (d.IsScalar() && d.Scalar() == "past_window") {
      step.past_window = true;  // resolved from the target's idempotency.window
    } else if (d.IsScalar() && d.Scalar() == "past_lease") {
      step.past_lease = true;  // resolved from the target's idempotency.lease
    } else {
      if (d.IsScalar() && !ParseDuration(d.Scalar()).ok())
        parser.Fail(d, what + ": '" + d.Scalar() + "' is neither a duration (250ms, 4s) nor past_window or past_lease" +
                           yaml::DidYouMean(d.Scalar(), {"past_window", "past_lease"}));
      step.duration = parser.reader().DurationOf(d, what);
    }
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const TargetDescription& target = fit.target();
    const WaitOptions& s = step.Options<WaitOptions>();
    if (s.past_lease && !PastLeaseWait(target.idempotency))
      fit.AddNeed("an in-progress lease (idempotency.lease) of at most " + FormatDuration(kLongestPastWindow) +
                  " for 'wait: past_lease'");
    if (!s.past_window) return;
    if (!target.idempotency.window)
      fit.AddNeed("a retry window (idempotency.window) for 'wait: past_window'");
    else if (*target.idempotency.window > kLongestPastWindow)
      fit.AddNeed("a retry window of at most " + FormatDuration(kLongestPastWindow) +
                  " for 'wait: past_window' (idempotency.window is " + FormatDuration(*target.idempotency.window) +
                  ")");
  }

  Status Write(const Step& step, YAML::Emitter& out) const override {
    const WaitOptions& s = step.Options<WaitOptions>();
    out << YAML::Key << name() << YAML::Value
        << (s.past_window  ? std::string("past_window")
            : s.past_lease ? std::string("past_lease")
                           : FormatDuration(s.duration));
    return Status::Ok();
  }

  void Plan(const Step& s, PlanModel& m, const ProvidedVariables&) const override {
    const WaitOptions& step = s.Options<WaitOptions>();
    if (step.past_window) {
      ++m.past_window_waits;
      m.elapsed_ms = 0;  // the next answer opens a new window
    } else {
      AddPlanTime(m, std::chrono::duration_cast<std::chrono::milliseconds>(step.duration).count());
    }
  }

  Status Execute(const Step& s, int index, runtime::StepContext& ctx) const override {
    const WaitOptions& step = s.Options<WaitOptions>();
    if (step.past_window && !PastWindowWait(ctx.target().idempotency))
      return Status::InvalidConfig("'wait: past_window' needs a retry window (idempotency.window) of at most " +
                                       FormatDuration(kLongestPastWindow),
                                   s.mark);
    if (step.past_lease && !PastLeaseWait(ctx.target().idempotency))
      return Status::InvalidConfig("'wait: past_lease' needs an in-progress lease (idempotency.lease)", s.mark);
    const Duration d = step.past_lease ? *PastLeaseWait(ctx.target().idempotency)
                                       : WaitDuration(step, ctx.target().idempotency);
    HistoryEvent wait = WaitEvent(index, FormatDuration(d), step.past_window);
    if (step.past_lease) wait.value["past_lease"] = true;
    ctx.recorder().Append(std::move(wait), runtime::monotonic_ns());
    ctx.Sleep(d);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeWaitStep() { return std::make_unique<WaitStepKind>(); }

}  // namespace idemproof::steps
