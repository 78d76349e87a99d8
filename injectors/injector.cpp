#include "injectors/injector.h"

namespace idemproof::injectors {

std::vector<std::string> never_fired(const std::vector<InjectorCounters>& counters) {
  std::vector<std::string> names;
  for (const auto& c : counters) {
    if (!c.fired()) names.push_back(c.kind + "/" + c.name);
  }
  return names;
}

Status ActiveFaults::start(std::unique_ptr<Injector> injector) {
  Status st = injector->start(context_);
  if (!st.ok()) {
    injector->heal();
    return st;
  }
  injectors_.push_back(std::move(injector));
  return Status::Ok();
}

void ActiveFaults::heal_all() noexcept {
  for (auto it = injectors_.rbegin(); it != injectors_.rend(); ++it) (*it)->heal();
}

std::vector<InjectorCounters> ActiveFaults::counters() const {
  std::vector<InjectorCounters> out;
  for (const auto& i : injectors_) out.push_back(i->counters());
  return out;
}

}  // namespace idemproof::injectors
