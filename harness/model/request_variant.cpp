#include "model/request_variant.h"

#include <algorithm>

#include "base/header_list.h"

namespace idemproof {

Status ApplyPatches(nlohmann::json& body, const RequestVariant& variant) {
  for (const auto& [path, value] : variant.patch) {
    Status s = path.SetIn(body, value);
    if (!s.ok())
      return Status::InvalidArgument("variant '" + variant.name + "'.patch: '" + path.text() +
                                     "' cannot apply to the json body: " + s.message());
  }
  return Status::Ok();
}

Result<RequestTemplate> ApplyVariant(const RequestTemplate& base, const RequestVariant& variant) {
  RequestTemplate out = base;
  // Pairs, not structured bindings: clang 14 (scripts/fuzz.sh) cannot
  // capture a binding in a lambda.
  for (const auto& header : variant.headers) {
    std::erase_if(out.headers, [&](const auto& h) { return equals_ignoring_case(h.first, header.first); });
    out.headers.push_back(header);
  }
  for (const auto& param : variant.query) {
    std::erase_if(out.query, [&](const auto& q) { return q.first == param.first; });
    out.query.push_back(param);
  }
  if (variant.json) {
    out.json = variant.json;
    out.body.reset();
  } else if (variant.body) {
    out.body = variant.body;
    out.json.reset();
  }
  if (variant.json || variant.body) out.content_type = variant.content_type;
  if (out.json) {
    Status patched = ApplyPatches(*out.json, variant);
    if (!patched.ok()) return patched;
  }
  return out;
}

}  // namespace idemproof
