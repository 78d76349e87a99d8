#include "runtime/batch_steps.h"

#include "model/request_variant.h"
#include "runtime/request_render.h"

namespace idemproof::runtime {

namespace {

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

const char* RoleOf(BatchRole role) {
  if (role == BatchRole::kRerun) return "rerun";
  if (role == BatchRole::kClean) return "clean";
  return "run";
}

}  // namespace

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
                          target, ctx.options().kept);
    if (!request.ok()) return request.status();
    nlohmann::json info = {{"job", vars["job"]}, {"job_name", step.job}, {"role", RoleOf(role)},
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

Status BatchStep(StepContext& ctx, const Step& batch_step, int index, BatchRole role) {
  const BatchOptions& step = batch_step.Options<BatchOptions>();
  if (!step.background) return BatchNow(ctx, step, index, role);
  // In flight while later steps run (a kill cuts it); `join` waits for it.
  ctx.RunInBackground([&ctx, step, index, role] {
    Status s = BatchNow(ctx, step, index, role);
    if (!s.ok()) ctx.recorder().Note(index, "background batch run failed: " + s.ToString());
  });
  return Status::Ok();
}

}  // namespace idemproof::runtime
