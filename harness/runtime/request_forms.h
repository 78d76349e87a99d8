// ApplyPayloadForm: rewrites a rendered request into one of the payload
// forms of model/payload.h, the metamorphic requests of issue 17: ones a
// correct target must treat as the same request (replay its stored answer)
// and ones it must treat as another (reject under the same key).
//
// Equal forms: reordered (every JSON object's members in reverse order, the
// same bytes otherwise), respaced (the JSON indented by two spaces, a final
// newline), header_case (every header name lower-cased; upper-cased when it
// already was), extra_header (X-Idemproof-Trace: `fresh`), query_reordered
// (the query parameters in reverse order), ignored_changed (the first
// declared fingerprint_ignores value changed), equivalent (reordered,
// respaced, header_case, extra_header and query_reordered at once).
// Changed forms: value_changed (one JSON leaf: the deepest number, else
// boolean, else string, the last in document order at that depth; a number
// + 1, a boolean negated, a string with "-changed" appended), field_removed
// (the last member of the deepest object). Both skip the members under
// `ignored` and a string equal to the request's key.
// Route spellings: spelling (no change: the first request), and on its path
// (the query stays) spelling_trailing_slash (a slash appended, or the final
// one removed), spelling_case (every letter upper-cased; lower-cased when
// none was lower: kUnsupported without letters), spelling_query_order (the
// query parameters reversed: kUnsupported with fewer than two).
// large: the first JSON array (document order, depth first) grown by copies
// of its last element until the body holds kLargeBodyBytes; kUnsupported
// without an array or with an empty one (the runtime applies the action's
// `large` variant first, when declared).
//
// Returns what changed, one line each ("$.qty: 1 -> 2"); an empty list when
// the form found nothing to change in this request (one member, no query):
// it is sent as it was. kUnsupported when a changed form or ignored_changed
// has nothing to change (no JSON body, every leaf ignored): not sent.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <string>
#include <vector>

#include "base/http_message.h"
#include "base/status.h"
#include "model/json_path.h"
#include "model/payload.h"

namespace idemproof::runtime {

// REQUIRES: payload is not kDefault or kOther (those are templates, not rewrites).
Result<std::vector<std::string>> ApplyPayloadForm(HttpRequest& request, PayloadVariant payload,
                                                  const std::vector<JsonPath>& ignored, const std::string& key,
                                                  const std::string& fresh);

}  // namespace idemproof::runtime
