#include "sim/sim_plan.h"

#include <algorithm>
#include <ostream>

namespace idemproof::sim {

namespace {

SimAction Order(std::string key, std::string biz, int qty, std::string name, std::string payload = "default") {
  SimAction a;
  a.kind = SimAction::Kind::create_order;
  a.name = std::move(name);
  a.key = std::move(key);
  a.biz_no = biz;
  a.method = "POST";
  a.target = "/orders";
  a.body = R"({"biz_no":")" + biz + R"(","sku":"s1","qty":)" + std::to_string(qty) +
           R"(,"amount":100})";
  a.payload = std::move(payload);
  return a;
}

SimAction Payment(std::string key, std::string biz) {
  SimAction a;
  a.kind = SimAction::Kind::payment;
  a.name = "pay " + key + " " + biz;
  a.key = std::move(key);
  a.biz_no = biz;
  a.method = "POST";
  a.target = "/payments";
  a.body = R"({"biz_no":")" + biz + R"(","amount":100})";
  return a;
}

}  // namespace

const std::vector<SimAction>& ActionPool() {
  static const std::vector<SimAction> pool{
      Order("k1", "b1", 1, "create_order k1 b1"),
      Order("k1", "b1", 2, "create_order k1 b1 (other payload: qty 2)", "other"),
      Order("k2", "b2", 1, "create_order k2 b2"),
      Payment("kp1", "pb1"),
  };
  return pool;
}

std::string SimOp::ToString() const {
  switch (kind) {
    case SimOpKind::send: return "send " + ActionPool().at(static_cast<std::size_t>(action)).name;
    case SimOpKind::step:
      return "step " + ActionPool().at(static_cast<std::size_t>(action)).name +
             (nth > 0 ? " #" + std::to_string(nth + 1) : "");
    case SimOpKind::crash: return "crash";
    case SimOpKind::wait: return "wait";
  }
  return "?";
}

std::string SimPlan::ToString() const {
  std::string out;
  for (const auto& op : ops) out += (out.empty() ? "" : "; ") + op.ToString();
  return out;
}

void showValue(const SimPlan& plan, std::ostream& os) { os << plan.ToString(); }

rc::Gen<SimPlan> SimPlanGen(int max_ops) {
  const int pool = static_cast<int>(ActionPool().size());

  // Steps weigh most: interleavings are made of them. Crash and wait are rare
  // enough that a plan still has requests worth crashing.
  // inRange scales with RapidCheck's size (small sizes, small values); the
  // size here is the plan's length, so every argument gets the whole range.
  const auto any_of = [](int n) { return rc::gen::resize(100, rc::gen::inRange(0, n)); };
  const rc::Gen<SimOp> ops = rc::gen::weightedOneOf<SimOp>({
      {10, rc::gen::apply([](int action, int nth) { return SimOp{SimOpKind::step, action, nth}; },
                          any_of(pool), any_of(3))},
      {4, rc::gen::map(any_of(pool), [](int action) { return SimOp{SimOpKind::send, action, 0}; })},
      {2, rc::gen::just(SimOp{SimOpKind::crash, 0, 0})},
      {2, rc::gen::just(SimOp{SimOpKind::wait, 0, 0})},
  });
  const auto plans = rc::gen::map(rc::gen::container<std::vector<SimOp>>(ops),
                                  [](std::vector<SimOp> v) { return SimPlan{std::move(v)}; });
  return rc::gen::withSize([plans, max_ops](int size) {
    return rc::gen::resize(std::clamp(size, 0, std::max(0, max_ops)), plans);
  });
}

std::vector<SimPlan> SampleSimPlans(std::uint64_t seed, int count, int max_ops) {
  std::vector<SimPlan> out;
  const rc::Gen<SimPlan> gen = SimPlanGen(max_ops);
  rc::Random random(seed);
  for (int i = 0; i < count; ++i) {
    out.push_back(gen(random.split(), i % std::max(1, max_ops + 1)).value());
  }
  return out;
}

}  // namespace idemproof::sim
