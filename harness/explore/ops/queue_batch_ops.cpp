// The ops of the other roles (op_spec.h), all needing the target up:
// deliver (push a message explore.messages lists to the consumer, ids from
// the keys pool), redeliver (push a message delivered before again, two
// copies at once), run_batch (a job of explore.batch.jobs over its rows,
// possibly failing part-way; each job once, and a clean run of it at the
// end: the reference range_continuity compares with) and rerun (a job run
// before, again; after a kill_mid_work of it under a declared lease, only
// once a wait_past_lease followed).
#include "explore/ops/builtin_ops.h"
#include "explore/ops/op_steps.h"

namespace idemproof::explore {
namespace {

class QueueOp : public OpSpec {
 public:
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    const ExploreBlock& b = ctx.block;
    OpCandidates out;
    for (const auto& message : b.messages) {
      if (!ctx.target.messages.count(message))
        return ctx.ConfigError("message " + message, "the target declares no message '" + message + "'");
      for (const auto& key : b.keys) {
        if (key == kNoKey) continue;
        Op op;
        op.kind = this;
        op.action = message;
        op.key = key;
        op.biz = b.biz.front();
        op.copies = copies();
        out.ops.push_back(op);
      }
    }
    out.absent = b.messages.empty() ? "no message listed under explore.messages"
                                    : "every key of explore.keys is 'none' (message ids come from the keys)";
    return out;
  }
  std::vector<Step> Steps(const Op& op) const override { return {DeliverStep(op)}; }
  std::int64_t EstimateMs(const Op&) const override { return 50; }
  std::string ToString(const Op& op) const override {
    std::string out = std::string(name()) + " " + op.action + " " + op.key;
    if (op.copies != 1) out += " x" + std::to_string(op.copies);
    return out;
  }

 protected:
  // Copies pushed at once.
  virtual int copies() const { return 1; }
};

class DeliverOp final : public QueueOp {
 public:
  const char* name() const override { return "deliver"; }
  int default_weight() const override { return 10; }
  bool reaches_logic() const override { return true; }
  bool Allowed(const Op&, const PlanModel& m, const PlanRules&) const override { return m.up; }
};

class RedeliverOp final : public QueueOp {
 public:
  const char* name() const override { return "redeliver"; }
  int default_weight() const override { return 3; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules&) const override {
    return m.up && m.delivered.count(op.key) > 0;
  }

 protected:
  int copies() const override { return 2; }
};

class BatchOp : public OpSpec {
 public:
  Result<OpCandidates> Candidates(const OpContext& ctx) const override {
    const ExploreBlock& b = ctx.block;
    OpCandidates out;
    if (b.jobs.empty()) {
      out.absent = "no job listed under explore.batch.jobs";
    } else if (!ctx.target.batch) {
      out.absent = "the target declares no batch section";
    } else if (b.batch_fail_after && !ctx.target.batch->failing_run) {
      out.absent = "explore.batch.fail_after needs the target's batch.failing_run";
    } else {
      for (const auto& job : b.jobs) {
        Op op;
        op.kind = this;
        op.name = job;
        op.from = b.batch_from;
        op.to = b.batch_to;
        Add(ctx, op, out.ops);
      }
    }
    return out;
  }
  std::vector<Step> Steps(const Op& op) const override { return {BatchStep(name(), op)}; }
  std::int64_t EstimateMs(const Op&) const override { return 200; }
  std::string ToString(const Op& op) const override {
    std::string out = std::string(name()) + " " + op.name + Rows(op);
    if (op.fail_after) out += " fail_after " + std::to_string(*op.fail_after);
    return out;
  }

 protected:
  // Adds the ops of one job (`op`): default, `op` itself.
  virtual void Add(const OpContext& /*ctx*/, const Op& op, std::vector<Op>& out) const { out.push_back(op); }
  // " [from, to)" where the kind's line shows the rows.
  virtual std::string Rows(const Op& /*op*/) const { return ""; }
};

class RunBatchOp final : public BatchOp {
 public:
  const char* name() const override { return "run_batch"; }
  int default_weight() const override { return 5; }
  bool reaches_logic() const override { return true; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules&) const override {
    return m.up && !m.jobs_run.count(op.name);
  }
  void Track(const Op& op, PlanEnd& end) const override { end.RunJob(op); }

 protected:
  // The job whole, and failing after explore.batch.fail_after rows when set.
  void Add(const OpContext& ctx, const Op& op, std::vector<Op>& out) const override {
    out.push_back(op);
    if (!ctx.block.batch_fail_after) return;
    Op failing = op;
    failing.fail_after = ctx.block.batch_fail_after;
    out.push_back(failing);
  }
  std::string Rows(const Op& op) const override {
    return " [" + std::to_string(op.from) + ", " + std::to_string(op.to) + ")";
  }
};

class RerunOp final : public BatchOp {
 public:
  const char* name() const override { return "rerun"; }
  int default_weight() const override { return 5; }
  bool Allowed(const Op& op, const PlanModel& m, const PlanRules&) const override {
    return m.up && m.jobs_run.count(op.name) > 0 && !m.jobs_cut.count(op.name);
  }
};

}  // namespace

std::unique_ptr<OpSpec> MakeDeliverOp() { return std::make_unique<DeliverOp>(); }
std::unique_ptr<OpSpec> MakeRedeliverOp() { return std::make_unique<RedeliverOp>(); }
std::unique_ptr<OpSpec> MakeRunBatchOp() { return std::make_unique<RunBatchOp>(); }
std::unique_ptr<OpSpec> MakeRerunOp() { return std::make_unique<RerunOp>(); }

}  // namespace idemproof::explore
