#include "sim/sim_invariants.h"

#include "sim/sim_plan.h"

namespace idemproof::sim {

namespace {

bool Is2xx(const HttpResponse& r) { return r.status >= 200 && r.status < 300; }

std::string Ids(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "r" : ", r") + std::to_string(id);
  return out;
}

void OneRecord(const SimHistory& h, std::vector<Violation>& out) {
  for (const auto& [biz, count] : h.orders_by_biz) {
    std::vector<int> succeeded;
    for (const auto& r : h.requests) {
      const SimAction& a = ActionPool()[static_cast<std::size_t>(r.action)];
      if (a.kind == SimAction::Kind::create_order && a.biz_no == biz && r.answer && Is2xx(*r.answer)) {
        succeeded.push_back(r.id);
      }
    }
    if (count > 1) {
      out.push_back({"one_record", biz + " has " + std::to_string(count) +
                                       " orders (one business action, one key); 2xx answers: " +
                                       (succeeded.empty() ? "none" : Ids(succeeded))});
    } else if (count == 0 && !succeeded.empty()) {
      out.push_back({"one_record", biz + " has no order but " + Ids(succeeded) + " got 2xx"});
    }
  }
}

void IntentReconciled(const SimHistory& h, std::vector<Violation>& out) {
  for (const auto& [biz, count] : h.effects_by_biz) {
    if (count > 1) {
      out.push_back({"intent_reconciled", biz + " was charged " + std::to_string(count) +
                                              " times at the provider (one payment action)"});
    }
  }
}

void LeaseRecovery(const SimHistory& h, ref::Nanos lease, std::vector<Violation>& out) {
  for (std::size_t i = 0; i < h.claims.size(); ++i) {
    const ClaimSeen& c = h.claims[i];
    if (c.kind != ref::ClaimKind::in_progress) continue;
    bool live_lease = false;
    std::optional<ref::TimePoint> newest;
    for (std::size_t j = 0; j < i; ++j) {
      const ClaimSeen& g = h.claims[j];
      if (g.scope != c.scope) continue;
      if (g.kind != ref::ClaimKind::claimed && g.kind != ref::ClaimKind::took_over) continue;
      if (!newest || g.now > *newest) newest = g.now;
      if (g.now + lease > c.now) live_lease = true;
    }
    if (live_lease) continue;
    std::string age = "no lease was ever granted on it";
    if (newest) {
      age = "its newest lease was granted " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(c.now - *newest).count()) +
            "s earlier, lease " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(lease).count()) + "s";
    }
    out.push_back({"lease_recovery", "r" + std::to_string(c.request) + ": key " + c.scope.key +
                                         " answered in progress, but " + age});
  }
}

void IdenticalReplay(const SimHistory& h, std::vector<Violation>& out) {
  std::map<std::string, const SentRequest*> first;  // by route + key
  for (const auto& r : h.requests) {
    if (!r.answer || !Is2xx(*r.answer)) continue;
    const SimAction& a = ActionPool()[static_cast<std::size_t>(r.action)];
    const std::string scope = a.method + " " + a.target + " " + a.key;
    auto [it, inserted] = first.emplace(scope, &r);
    if (inserted) continue;
    const HttpResponse& f = *it->second->answer;
    const HttpResponse& x = *r.answer;
    if (f.status != x.status || f.body != x.body || f.header("Location") != x.header("Location")) {
      out.push_back({"identical_replay", "key " + a.key + ": r" + std::to_string(r.id) + " got " +
                                            std::to_string(x.status) + " " + x.body + ", but r" +
                                            std::to_string(it->second->id) + " got " +
                                            std::to_string(f.status) + " " + f.body});
    }
  }
}

void NoInternalError(const SimHistory& h, std::vector<Violation>& out) {
  for (const auto& r : h.requests) {
    if (r.answer && r.answer->status >= 500) {
      out.push_back({"no_internal_error", "r" + std::to_string(r.id) + " got " +
                                              std::to_string(r.answer->status) + " " + r.answer->body});
    }
  }
}

}  // namespace

std::vector<Violation> CheckInvariants(const SimHistory& history, ref::Nanos lease) {
  std::vector<Violation> out;
  OneRecord(history, out);
  IntentReconciled(history, out);
  LeaseRecovery(history, lease, out);
  IdenticalReplay(history, out);
  NoInternalError(history, out);
  return out;
}

}  // namespace idemproof::sim
