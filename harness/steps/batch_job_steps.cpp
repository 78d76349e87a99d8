// The batch steps (docs/scenario-reference.md, "Batch"): `run_batch: JOB`
// over rows [from, to), optionally failing after `fail_after` rows; `rerun:
// JOB` over its last range, `repeat` times; `clean_run: JOB` a fresh job once
// over the range of `of` (default: the first job run): the reference result.
// They share the job options and need the target's batch section.
// Execution: runtime/batch_steps.h (BatchStep).
#include "runtime/batch_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

using runtime::BatchRole;

class BatchStepKind final : public StepKindSpec {
 public:
  explicit BatchStepKind(BatchRole role) : role_(role) {}
  const char* name() const override {
    return role_ == BatchRole::kRun ? "run_batch" : role_ == BatchRole::kRerun ? "rerun" : "clean_run";
  }
  std::vector<std::string> options() const override {
    if (role_ == BatchRole::kRun) return {"from", "to", "fail_after", "biz", "variant", "background", "after", "label"};
    if (role_ == BatchRole::kRerun) return {"repeat", "fail_after", "biz", "after", "label"};
    return {"of", "from", "to", "biz", "after", "label"};
  }
  bool runs_batch() const override { return true; }
  StepOptions NewOptions() const override { return BatchOptions{}; }

  // Ranges and job references. Jobs are checked in step order: a rerun needs
  // an earlier run_batch of its job, a clean run a job never used before.
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    BatchOptions& st = step.Options<BatchOptions>();
    st.job = parser.Symbol(parser.RequiredValue(value, key, what, "a job name"), what);
    yaml::Reader& r = parser.reader();
    auto row = [&](const char* k) {
      long long n = r.Int(node[k], what + "." + k);
      if (n < 0 || n > 100'000'000) r.Fail(node[k], what + "." + k + " must be between 0 and 100000000");
      return static_cast<std::int64_t>(n);
    };
    auto& job_ranges = parser.job_ranges();
    auto& clean_jobs = parser.clean_jobs();
    if (node["fail_after"]) st.fail_after = row("fail_after");
    if (node["variant"]) st.variant = parser.Symbol(node["variant"], what + ".variant");
    if (node["biz"]) st.biz = parser.Symbol(node["biz"], what + ".biz");
    if (node["repeat"]) st.repeat = parser.Repeat(node["repeat"], what + ".repeat");
    if (node["background"]) st.background = r.Bool(node["background"], what + ".background");
    if (role_ == BatchRole::kRun) {
      if (!node["from"] || !node["to"]) r.Fail(node, what + " needs 'from' and 'to' (rows [from, to))");
      st.from = row("from");
      st.to = row("to");
      if (st.to <= st.from) r.Fail(node["to"], what + ".to must be greater than 'from'");
      if (clean_jobs.count(st.job)) r.Fail(node, what + ": job '" + st.job + "' is a clean run's job");
      job_ranges[st.job] = {st.from, st.to};
      if (parser.first_job().empty()) parser.first_job() = st.job;
      return;
    }
    if (role_ == BatchRole::kRerun) {
      auto it = job_ranges.find(st.job);
      if (it == job_ranges.end()) r.Fail(node, what + ": job '" + st.job + "' has no earlier run_batch step to rerun");
      st.from = it->second.first;
      st.to = it->second.second;
      return;
    }
    // clean_run: a fresh job over the range of `of` (default: the first job run)
    if (job_ranges.count(st.job) || clean_jobs.count(st.job))
      r.Fail(node, what + ": job '" + st.job + "' was used before; a clean run needs a fresh job");
    if (node["of"]) {
      st.of = parser.Symbol(node["of"], what + ".of");
      if (!job_ranges.count(st.of)) r.Fail(node["of"], what + ".of: job '" + st.of + "' has no earlier run_batch step");
    } else if (!parser.first_job().empty()) {
      st.of = parser.first_job();
    }
    if (node["from"] || node["to"]) {
      if (!node["from"] || !node["to"]) r.Fail(node, what + ": give both 'from' and 'to', or neither");
      st.from = row("from");
      st.to = row("to");
      if (st.to <= st.from) r.Fail(node["to"], what + ".to must be greater than 'from'");
    } else if (!st.of.empty()) {
      st.from = job_ranges[st.of].first;
      st.to = job_ranges[st.of].second;
    } else {
      r.Fail(node, what + " needs 'of' (a job run before) or 'from' and 'to'");
    }
    clean_jobs.insert(st.job);
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const BatchOptions& s = step.Options<BatchOptions>();
    if (!fit.target().batch) {
      fit.AddNeed("a batch section (target 'batch') for " + What(*this));
    } else if (s.fail_after && !fit.target().batch->failing_run) {
      fit.AddNeed("batch.failing_run for 'fail_after'");
    } else if (!s.variant.empty() && !fit.target().batch->variants.count(s.variant)) {
      fit.AddNeed("a variant '" + s.variant + "' of the batch run (batch.variants)");
    }
  }

  Status Write(const Step& step, YAML::Emitter& out) const override {
    const BatchOptions& s = step.Options<BatchOptions>();
    out << YAML::Key << name() << YAML::Value << s.job;
    if (role_ != BatchRole::kRerun) {
      out << YAML::Key << "from" << YAML::Value << s.from;
      out << YAML::Key << "to" << YAML::Value << s.to;
    }
    if (role_ == BatchRole::kRerun && s.repeat != 1) out << YAML::Key << "repeat" << YAML::Value << s.repeat;
    if (s.fail_after) out << YAML::Key << "fail_after" << YAML::Value << *s.fail_after;
    if (role_ == BatchRole::kClean && !s.of.empty()) out << YAML::Key << "of" << YAML::Value << s.of;
    if (!s.variant.empty()) out << YAML::Key << "variant" << YAML::Value << s.variant;
    if (s.background) out << YAML::Key << "background" << YAML::Value << true;
    return Status::Ok();
  }

  void Plan(const Step& s, explore::PlanModel& m, const ProvidedVariables&) const override {
    const BatchOptions& step = s.Options<BatchOptions>();
    if (role_ == BatchRole::kRun) {
      m.jobs_run.insert(step.job);
      AddPlanTime(m, 200);
    } else if (role_ == BatchRole::kRerun) {
      AddPlanTime(m, 200 * step.repeat);
    } else {
      AddPlanTime(m, 10);
    }
  }

  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::BatchStep(ctx, step, index, role_);
  }

 private:
  const BatchRole role_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeRunBatchStep() { return std::make_unique<BatchStepKind>(BatchRole::kRun); }
std::unique_ptr<StepKindSpec> MakeRerunStep() { return std::make_unique<BatchStepKind>(BatchRole::kRerun); }
std::unique_ptr<StepKindSpec> MakeCleanRunStep() { return std::make_unique<BatchStepKind>(BatchRole::kClean); }

}  // namespace idemproof::steps
