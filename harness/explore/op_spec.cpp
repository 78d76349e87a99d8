#include "explore/op_spec.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>


namespace idemproof::explore {

std::vector<Step> Op::Steps() const { return kind->Steps(*this); }

std::string Op::ToString() const { return kind != nullptr ? kind->ToString(*this) : std::string("?"); }

bool Op::operator==(const Op& o) const {
  return kind == o.kind && action == o.action && key == o.key && biz == o.biz && name == o.name &&
         duration == o.duration && n == o.n && mode == o.mode && copies == o.copies && from == o.from &&
         to == o.to && fail_after == o.fail_after && instance == o.instance && caller == o.caller && variant == o.variant &&
         hook == o.hook && work == o.work;
}

std::ostream& operator<<(std::ostream& os, const Op& op) { return os << op.ToString(); }

Status OpContext::ConfigError(const std::string& item, const std::string& message) const {
  auto it = block.marks.find(item);
  return Status::InvalidConfig("explore: " + message, it != block.marks.end() ? it->second : block.mark);
}

bool PlanRules::Captured(const Op& op, const PlanModel& m) const {
  auto it = needs_captured.find(op.action);
  if (it == needs_captured.end()) return true;
  return std::all_of(it->second.begin(), it->second.end(),
                     [&](const std::string& var) { return m.captured.count({var, op.biz}) > 0; });
}

void PlanRules::ApplyStep(const Step& step, PlanModel& m) const {
  m.elapsed_ms += std::chrono::duration_cast<std::chrono::milliseconds>(step.after).count();
  step.kind->Plan(step, m, provides);  // its kind's (harness/steps/)
}

void PlanEnd::RunJob(const Op& op) {
  if (std::none_of(jobs.begin(), jobs.end(), [&](const Op& j) { return j.name == op.name; })) jobs.push_back(op);
}

void OpSpec::AfterSteps(const Op&, const PlanModel&, PlanModel&, const PlanRules&) const {}

Status OpRegistry::Register(std::unique_ptr<OpSpec> kind) {
  if (Find(kind->name()) != nullptr)
    return Status::InvalidArgument(std::string("op kind '") + kind->name() + "' is registered twice");
  kinds_.push_back(std::move(kind));
  return Status::Ok();
}

const OpSpec* OpRegistry::Find(const std::string& name) const {
  for (const auto& k : kinds_) {
    if (name == k->name()) return k.get();
  }
  return nullptr;
}

std::vector<const OpSpec*> OpRegistry::Kinds() const {
  std::vector<const OpSpec*> out;
  for (const auto& k : kinds_) out.push_back(k.get());
  return out;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) out.emplace_back(k->name());
  return out;
}

}  // namespace idemproof::explore
