#include "idemproof/ref/chaos_control.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "base/query_string.h"

#include <string>

namespace idemproof::ref {
namespace {

std::optional<std::string> read_int(const nlohmann::json& patch, const char* field,
                                    std::int64_t min, std::int64_t max, std::int64_t& out) {
  if (!patch.contains(field)) return std::nullopt;
  const auto& v = patch.at(field);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 1u << 30)) {
    return std::string(field) + " must be an integer";
  }
  const auto n = v.get<std::int64_t>();
  if (n < min || n > max) {
    return std::string(field) + " must be in [" + std::to_string(min) + ", " +
           std::to_string(max) + "]";
  }
  out = n;
  return std::nullopt;
}

}  // namespace

nlohmann::json ChaosSettings::to_json() const {
  return {{"delay_ms", delay_ms}, {"fail_next", fail_next}, {"fail_status", fail_status}};
}

ChaosSettings ChaosControl::settings() const {
  std::lock_guard lock(mu_);
  return settings_;
}

std::optional<std::string> ChaosControl::apply(const nlohmann::json& patch) {
  if (!patch.is_object()) return "the body must be a JSON object";
  for (const auto& [name, value] : patch.items()) {
    if (name != "delay_ms" && name != "fail_next" && name != "fail_status") {
      return "unknown field " + name;
    }
  }
  std::lock_guard lock(mu_);
  ChaosSettings next = settings_;
  std::int64_t fail_status = next.fail_status;
  if (auto e = read_int(patch, "delay_ms", 0, 600'000, next.delay_ms)) return e;
  if (auto e = read_int(patch, "fail_next", 0, 1'000'000, next.fail_next)) return e;
  if (auto e = read_int(patch, "fail_status", 400, 599, fail_status)) return e;
  next.fail_status = static_cast<int>(fail_status);
  settings_ = next;
  return std::nullopt;
}

std::optional<std::string> request_chaos(std::string_view query, ChaosForStep& out) {
  auto number = [&](const char* name, long lo, long hi, long& value) -> std::optional<std::string> {
    const auto text = query_parameter(query, name);
    if (!text) return std::nullopt;
    const char* end = text->data() + text->size();
    auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc() || ptr != end || value < lo || value > hi)
      return std::string(name) + " must be an integer " + std::to_string(lo) + ".." + std::to_string(hi);
    return std::nullopt;
  };
  long slow = -1, fail = -1;
  if (auto e = number("slow_ms", 0, 600'000, slow)) return e;
  if (auto e = number("fail_status", 400, 599, fail)) return e;
  if (slow >= 0) out.delay = std::chrono::milliseconds(slow);
  if (fail >= 0) out.fail_status = static_cast<int>(fail);
  return std::nullopt;
}

void ChaosControl::reset() {
  std::lock_guard lock(mu_);
  settings_ = ChaosSettings{};
}

ChaosForStep ChaosControl::begin_business_step() {
  std::lock_guard lock(mu_);
  ChaosForStep step;
  step.delay = std::chrono::milliseconds(settings_.delay_ms);
  if (settings_.fail_next > 0) {
    --settings_.fail_next;
    step.fail_status = settings_.fail_status;
  }
  return step;
}

}  // namespace idemproof::ref
