// Actions' lookups (actions.h).
#include <algorithm>

#include "model/pattern.h"
#include "model/target/actions.h"

namespace idemproof {

bool ActionDescription::HasRole(const std::string& r) const {
  return std::find(roles.begin(), roles.end(), r) != roles.end() || (roles.empty() && !r.empty() && role == r);
}

std::optional<std::string> CaptureRule::From(const HeaderList& headers, const std::string& body) const {
  if (path) {
    nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
    if (doc.is_discarded()) return std::nullopt;
    return path->FindText(doc);
  }
  for (const auto& [name, value] : headers) {
    if (!equals_ignoring_case(name, header)) continue;
    if (pattern.empty()) return value;
    auto re = Pattern::Compile(pattern);
    if (!re.ok()) return std::nullopt;  // the loader compiled it already
    return re->FirstGroup(value);
  }
  return std::nullopt;
}

Result<std::int64_t> RecordsProbe::CountIn(const nlohmann::json& value) const {
  auto at = count.Find(value);
  if (at.ok() && at->is_number_integer()) return at->get<std::int64_t>();
  if (at.ok() && at->is_array()) return static_cast<std::int64_t>(at->size());
  if (at.ok())
    return Status(StatusCode::kNotFound, count.text() + " in the answer is " + DescribeJsonValue(*at) +
                                             ", not an integer or an array");
  return Status(StatusCode::kNotFound, "no integer or array at " + count.text() + " in the answer");
}

}  // namespace idemproof
