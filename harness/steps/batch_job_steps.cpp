// The batch steps (docs/scenario-reference.md, "Batch"): `run_batch: JOB`
// over rows [from, to), optionally failing after `fail_after` rows; `rerun:
// JOB` over its last range, `repeat` times; `clean_run: JOB` a fresh job once
// over the range of `of` (default: the first job run): the reference result.
// They share the job options and need the target's batch section.
//
// Execution: each run sends the target's batch.run (or batch.failing_run
// when the step has `fail_after`) with {{job}}, {{from}}, {{to}},
// {{fail_after}} and the step's biz to the target's own URL, and after every
// run reads the job's result (and markers): f batch and f batch_result events
// (model/history_events.h, model/batch_history.h). A `variant:` changes the
// run request (batch.variants, ApplyVariant); `background: true` runs it on a
// thread of the context's (joined by `join`), and a background run that got
// no answer (a kill cut it) reads no result.
#include "model/batch_history.h"
#include "model/request_variant.h"
#include "runtime/request_render.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

using runtime::Capped;
using runtime::HttpClient;
using runtime::HttpExchange;
using runtime::HttpOutcome;
using runtime::monotonic_ns;
using runtime::RenderRequest;
using runtime::StepContext;

Status BatchResult(StepContext& ctx, const BatchOptions& step, const TemplateVars& vars, std::int64_t after, int index) {
  const BatchDescription& batch = *ctx.target().batch;
  HistoryEvent invoke = BatchResultInvoke(vars.at("job"), step.job, after, index);
  auto result = ctx.Call(batch.result, vars);
  if (!result.ok()) return result.status();
  HistoryEvent done = CompletionOf(invoke, result->type);
  ctx.recorder().Append(std::move(invoke), result->start_ns);
  std::int64_t end = result->end_ns;
  if (result->type != EventType::kOk) {
    done.value["error"] = result->error.empty() ? "the result call failed" : result->error;
  } else if (!result->response.is_null() && result->response.value("status", 0) / 100 != 2) {
    done.type = EventType::kFail;
    done.value["error"] = "the result call answered " + std::to_string(result->response.value("status", 0));
  } else {
    done.value["result"] = result->value;
    if (batch.markers_call) {
      auto markers = ctx.Call(*batch.markers_call, vars);
      if (!markers.ok()) return markers.status();
      end = markers->end_ns;
      if (markers->type == EventType::kOk) {
        done.value["markers"] = markers->value;
      } else {
        done.type = markers->type;
        done.value.erase("result");
        done.value["error"] = "the markers call failed: " + markers->error;
      }
    }
  }
  ctx.recorder().Append(std::move(done), end);
  return Status::Ok();
}

// One batch step, in the foreground or on a background thread.
Status BatchNow(StepContext& ctx, const BatchOptions& step, int index, BatchRole role) {
  const TargetDescription& target = ctx.target();
  if (!target.batch) return Status(StatusCode::kUnsupported, "the target declares no batch section");
  const BatchDescription& batch = *target.batch;
  if (step.fail_after && !batch.failing_run)
    return Status(StatusCode::kUnsupported, "the target declares no batch.failing_run");
  const int times = role == BatchRole::kRerun ? step.repeat : 1;
  for (int attempt = 1; attempt <= times; ++attempt) {
    if (ctx.Cancelled()) break;
    TemplateVars vars = ctx.VarsFor("", step.biz, index);
    vars["job"] = ctx.recorder().naming().Job(step.job);
    vars["from"] = std::to_string(step.from);
    vars["to"] = std::to_string(step.to);
    if (step.fail_after) vars["fail_after"] = std::to_string(*step.fail_after);
    RequestTemplate tmpl = step.fail_after ? *batch.failing_run : batch.run;
    if (!step.variant.empty()) {
      auto v = batch.variants.find(step.variant);
      if (v == batch.variants.end())
        return Status(StatusCode::kUnsupported, "the target's batch declares no variant " + step.variant);
      auto changed = ApplyVariant(tmpl, v->second);
      if (!changed.ok()) return changed.status();
      tmpl = std::move(changed).value();
    }
    auto request = Capped(RenderRequest(tmpl, ctx.routing().BaseUrl(), vars, target.headers, {},
                                        target.request_timeout),
                          target, ctx.options().kept, runtime::Hop::kTarget);
    if (!request.ok()) return request.status();
    nlohmann::json info = {{"job", vars["job"]}, {"job_name", step.job}, {"role", BatchRoleName(role)},
                           {"from", step.from}, {"to", step.to},        {"attempt", attempt}};
    if (step.fail_after) info["fail_after"] = *step.fail_after;
    if (!step.of.empty()) info["of"] = step.of;
    HistoryEvent invoke = BatchInvoke(RecordOf(*request), info, index);
    if (!step.variant.empty()) invoke.value["variant"] = step.variant;
    const std::int64_t at = ctx.recorder().Append(invoke, monotonic_ns());
    HttpClient background_client(ctx.options().cancel);
    HttpExchange e = (step.background ? background_client : ctx.client()).send(*request);
    ctx.recorder().Append(BatchCompletion(invoke, RecordOf(e)), e.end_ns);
    // A background run that got no answer was cut off (a kill): the target
    // that would answer the result call is gone; the rerun reads it.
    if (step.background && e.outcome != HttpOutcome::kAnswered) continue;
    Status s = BatchResult(ctx, step, vars, at, index);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status RunBatch(StepContext& ctx, const Step& batch_step, int index, BatchRole role) {
  const BatchOptions& step = batch_step.Options<BatchOptions>();
  if (!step.background) return BatchNow(ctx, step, index, role);
  // In flight while later steps run (a kill cuts it); `join` waits for it.
  ctx.RunInBackground([&ctx, step, index, role] {
    Status s = BatchNow(ctx, step, index, role);
    if (!s.ok()) ctx.recorder().Note(index, "background batch run failed: " + s.ToString());
  });
  return Status::Ok();
}

class BatchStepKind final : public StepKind {
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

  void Plan(const Step& s, PlanModel& m, const ProvidedVariables&) const override {
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
    return RunBatch(ctx, step, index, role_);
  }

 private:
  const BatchRole role_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeRunBatchStep() { return std::make_unique<BatchStepKind>(BatchRole::kRun); }
std::unique_ptr<StepKindSpec> MakeRerunStep() { return std::make_unique<BatchStepKind>(BatchRole::kRerun); }
std::unique_ptr<StepKindSpec> MakeCleanRunStep() { return std::make_unique<BatchStepKind>(BatchRole::kClean); }

}  // namespace idemproof::steps
