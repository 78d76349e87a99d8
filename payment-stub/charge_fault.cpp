#include "charge_fault.h"

namespace idemproof::stub {
namespace {

std::optional<FaultMode> parse_mode(const std::string& s) {
  for (FaultMode m : {FaultMode::none, FaultMode::fail, FaultMode::delay, FaultMode::timeout,
                      FaultMode::kill_after_commit, FaultMode::kill_after_answer}) {
    if (s == fault_mode_name(m)) return m;
  }
  return std::nullopt;
}

}  // namespace

const char* fault_mode_name(FaultMode mode) {
  switch (mode) {
    case FaultMode::none: return "none";
    case FaultMode::fail: return "fail";
    case FaultMode::delay: return "delay";
    case FaultMode::timeout: return "timeout";
    case FaultMode::kill_after_commit: return "kill_after_commit";
    case FaultMode::kill_after_answer: return "kill_after_answer";
  }
  return "?";
}

nlohmann::json ChargeFault::to_json() const {
  return {{"mode", fault_mode_name(mode)}, {"times", times}, {"status", status},
          {"delay_ms", delay_ms}, {"pid", pid}};
}

std::optional<std::string> ChargeFaults::arm(const nlohmann::json& spec) {
  if (!spec.is_object()) return "expected a JSON object";
  ChargeFault f;
  f.delay_ms = -1;
  for (const auto& [name, value] : spec.items()) {
    if (name == "mode") {
      if (!value.is_string()) return "mode must be a string";
      auto m = parse_mode(value.get<std::string>());
      if (!m) return "unknown mode '" + value.get<std::string>() + "'";
      f.mode = *m;
      continue;
    }
    // Integers may come as strings: template-expanded YAML ("{{target_pid}}").
    std::int64_t n = 0;
    if (value.is_number_integer()) {
      n = value.get<std::int64_t>();
    } else if (value.is_string()) {
      try {
        std::size_t used = 0;
        n = std::stoll(value.get<std::string>(), &used);
        if (used != value.get<std::string>().size()) return name + " must be an integer";
      } catch (const std::exception&) {
        return name + " must be an integer";
      }
    } else {
      return name + " must be an integer";
    }
    if (name == "times") {
      if (n < 1) return "times must be >= 1";
      f.times = n;
    } else if (name == "status") {
      if (n < 400 || n > 599) return "status must be 400..599";
      f.status = static_cast<int>(n);
    } else if (name == "delay_ms") {
      if (n < 0 || n > 600000) return "delay_ms must be 0..600000";
      f.delay_ms = n;
    } else if (name == "pid") {
      f.pid = n;
    } else {
      return "unknown field '" + name + "'";
    }
  }
  if (f.delay_ms < 0) f.delay_ms = f.mode == FaultMode::timeout ? 60000 : 0;
  if ((f.mode == FaultMode::kill_after_commit || f.mode == FaultMode::kill_after_answer) &&
      f.pid <= 1) {
    return "mode " + std::string(fault_mode_name(f.mode)) + " needs the caller's pid (> 1)";
  }
  base::MutexLock lock(mu_);
  armed_ = f;
  return std::nullopt;
}

void ChargeFaults::clear() {
  base::MutexLock lock(mu_);
  armed_ = ChargeFault{};
}

ChargeFault ChargeFaults::armed() const {
  base::MutexLock lock(mu_);
  return armed_;
}

ChargeFault ChargeFaults::take() {
  base::MutexLock lock(mu_);
  ChargeFault f = armed_;
  if (armed_.mode == FaultMode::none) return f;
  ++injected_;
  if (--armed_.times <= 0) armed_ = ChargeFault{};
  return f;
}

std::int64_t ChargeFaults::injected() const {
  base::MutexLock lock(mu_);
  return injected_;
}

}  // namespace idemproof::stub
