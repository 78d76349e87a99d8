// ApplyVariant: one request of an action as a variant (target.h,
// RequestVariant) changes it, still a template: its query parameters are
// added to the template's `query` (expanded, percent-encoded and merged
// into the path's query string by the runtime's RenderRequest), its headers
// replace same-named ones (case-insensitive) or are appended, its json or
// body replaces the body (and its content_type, when given, the body's), and
// each patch sets one JSON path of the json body (creating missing members).
//
// Thread-safety: a pure function.
#pragma once

#include "model/target.h"

namespace idemproof {

// REQUIRES: variant.patch is empty or base.json is set (the loader checks it).
RequestTemplate ApplyVariant(const RequestTemplate& base, const RequestVariant& variant);

}  // namespace idemproof
