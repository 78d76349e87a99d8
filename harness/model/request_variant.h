// ApplyVariant: one request of an action as a variant (target.h,
// RequestVariant) changes it, still a template: its query parameters are
// added to the template's `query` (expanded, percent-encoded and merged
// into the path's query string by the runtime's RenderRequest), its headers
// replace same-named ones (case-insensitive) or are appended, its json or
// body replaces the body (and its content_type, when given, the body's), and
// each patch sets one JSON path of the json body (JsonPath::SetIn: missing
// members are created).
//
// Thread-safety: pure functions.
#pragma once

#include "model/target/request.h"

namespace idemproof {

// REQUIRES: variant.patch is empty or base.json is set (the loader checks it).
// kInvalidArgument, naming the variant and the path, when a patch cannot
// apply to the body (a path through a scalar: see JsonPath::SetIn); the
// loader refuses such a variant for the action's bodies, so at run time this
// is a target built past the loader. Never throws.
Result<RequestTemplate> ApplyVariant(const RequestTemplate& base, const RequestVariant& variant);

// The patches of `variant` applied in order to `body`, as ApplyVariant does.
Status ApplyPatches(nlohmann::json& body, const RequestVariant& variant);

}  // namespace idemproof
