#include "explore/plan.h"

#include <algorithm>
#include <memory>

#include <rapidcheck/state.h>


namespace idemproof::explore {

namespace {

struct PlanSut {};
using PlanCommandBase = rc::state::Command<PlanModel, PlanSut>;

// One op as a RapidCheck command: its precondition and model update are its
// kind's (OpSpec::Allowed, OpSpec::AfterSteps and its steps' Plan), behind the
// alphabet's budget and pause checks; run() is empty because a plan runs as a
// whole scenario.
class OpCommand : public PlanCommandBase {
 public:
  OpCommand(const Alphabet* alphabet, Op op) : alphabet_(alphabet), op_(std::move(op)) {}
  void checkPreconditions(const PlanModel& model) const override { RC_PRE(alphabet_->Allowed(op_, model)); }
  void apply(PlanModel& model) const override { alphabet_->Apply(op_, model); }
  void run(const PlanModel&, PlanSut&) const override {}
  void show(std::ostream& os) const override { os << op_; }
  const Op& op() const { return op_; }

 private:
  const Alphabet* alphabet_;
  Op op_;
};

using CommandPtr = std::shared_ptr<const PlanCommandBase>;

// Picks a kind by weight among those with an allowed op, then one of its ops.
rc::Gen<CommandPtr> NextCommand(const Alphabet* alphabet, const PlanModel& model) {
  auto choices = std::make_shared<std::vector<std::pair<int, std::vector<Op>>>>(alphabet->Choices(model));
  int total = 0;
  for (const auto& [w, ops] : *choices) total += w;
  if (total == 0) {
    return rc::gen::map(rc::gen::just(0), [](int) -> CommandPtr {
      throw rc::GenerationFailure("no op is allowed in this state");
    });
  }
  // RapidCheck scales inRange/elementOf with the size, and ours (the plan
  // length) is tiny: pick at the nominal size so every op can be drawn.
  return rc::gen::resize(100, rc::gen::mapcat(rc::gen::inRange(0, total), [alphabet, choices](int r) {
    std::size_t group = 0;
    while (r >= (*choices)[group].first) r -= (*choices)[group++].first;
    return rc::gen::map(rc::gen::elementOf((*choices)[group].second), [alphabet](const Op& op) {
      return CommandPtr(std::make_shared<const OpCommand>(alphabet, op));
    });
  }));
}

Plan PlanOf(const rc::state::Commands<PlanCommandBase>& commands) {
  Plan plan;
  for (const auto& c : commands) {
    plan.ops.push_back(static_cast<const OpCommand&>(*c).op());
  }
  return plan;
}

}  // namespace

std::string Plan::ToString() const {
  std::string out;
  for (const auto& op : ops) out += (out.empty() ? "" : "; ") + op.ToString();
  return out;
}

rc::Gen<Plan> PlanGen(const Alphabet& alphabet, int max_ops) {
  const Alphabet* a = &alphabet;
  auto commands = rc::state::gen::commands(alphabet.initial(),
                                           [a](const PlanModel& model) { return NextCommand(a, model); });
  auto plans = rc::gen::map(std::move(commands), &PlanOf);
  // RapidCheck draws 1..size+1 commands: cap the size at max_ops - 1.
  return rc::gen::withSize([plans, max_ops](int size) {
    return rc::gen::resize(std::min(size, std::max(0, max_ops - 1)), plans);
  });
}

rc::Gen<Plan> TrialPlanGen(const Alphabet& alphabet, int max_ops, std::uint64_t seed, int trial) {
  // The (trial + 1)-th split of Random(seed): a function of the two alone.
  rc::Random stream(seed);
  rc::Random random = stream.split();
  for (int i = 0; i < trial; ++i) random = stream.split();
  const rc::Shrinkable<Plan> drawn = PlanGen(alphabet, max_ops)(random, trial % std::max(1, max_ops));
  return rc::Gen<Plan>([drawn](const rc::Random&, int) { return drawn; });
}

std::vector<Plan> SamplePlans(const Alphabet& alphabet, std::uint64_t seed, int count, int max_ops) {
  std::vector<Plan> out;
  for (int i = 0; i < count; ++i) out.push_back(TrialPlanGen(alphabet, max_ops, seed, i)(rc::Random(), 0).value());
  return out;
}

Scenario ToScenario(const ExploreSpec& spec, const Plan& plan, const std::string& name) {
  Scenario s = spec.scenario;
  s.name = name;
  s.steps.clear();
  const std::size_t at = spec.insert_at();
  s.steps.insert(s.steps.end(), spec.scenario.steps.begin(), spec.scenario.steps.begin() + at);
  PlanEnd end;
  for (const auto& op : plan.ops) {
    std::vector<Step> steps = op.Steps();
    s.steps.insert(s.steps.end(), steps.begin(), steps.end());
    op.kind->Track(op, end);
  }
  // Never leave the target frozen, nor dead before fixed steps or the clean
  // runs of the jobs: the probes, records and reference results after need it.
  if (end.paused) {
    s.steps.push_back(MakeStep("resume"));
  }
  if (end.killed && (at < spec.scenario.steps.size() || !end.jobs.empty())) {
    s.steps.push_back(MakeStep("restart"));
  }
  // The reference result of every job: a fresh job over the same rows.
  for (const auto& job : end.jobs) {
    Step clean = MakeStep("clean_run");
    BatchOptions& o = clean.Options<BatchOptions>();
    o.job = "clean-" + job.name;
    o.of = job.name;
    o.from = job.from;
    o.to = job.to;
    s.steps.push_back(clean);
  }
  s.steps.insert(s.steps.end(), spec.scenario.steps.begin() + at, spec.scenario.steps.end());
  // A cause no later request of its action could feel changes nothing (and
  // a scenario file rejects it): drop it.
  for (std::size_t i = s.steps.size(); i-- > 0;) {
    const Step& c = s.steps[i];
    const CauseOptions* cause = c.Find<CauseOptions>();
    if (cause == nullptr || !c.kind->NeedsLaterRequest(c)) continue;
    const bool felt = std::any_of(s.steps.begin() + static_cast<std::ptrdiff_t>(i) + 1, s.steps.end(), [&](const Step& n) {
      const SendOptions* send = n.Find<SendOptions>();
      return n.kind->sends_request() && send != nullptr && send->action == cause->action;
    });
    if (!felt) s.steps.erase(s.steps.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return s;
}

}  // namespace idemproof::explore
