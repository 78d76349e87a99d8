// PayloadVariant: which body and headers a send or burst request carries,
// relative to its action's declared request (issue 17, metamorphic forms).
//
//  - default: the action's request as declared;
//  - other: the action's declared other_payload (a different request);
//  - forms EQUAL to the default (a correct target replays them: no second
//    execution, no mismatch status): reordered (JSON object members in
//    reverse order), respaced (the JSON re-indented), header_case (every
//    header name in another letter case), extra_header (an undocumented
//    header with a fresh value), query_reordered (query parameters in
//    reverse order), ignored_changed (a declared fingerprint_ignores field
//    changed), equivalent (all of these at once);
//  - forms DIFFERENT from it (a correct target rejects them): value_changed
//    (one JSON leaf value changed, the deepest number first), field_removed
//    (one JSON member removed);
//  - large (issue 33, size): the action's declared `large` variant if any,
//    then the first JSON array of the body grown to kLargeBodyBytes by
//    repeating its last element: a request of its own, judged by
//    identical_replay as a class of its own ("large");
//  - route spellings (issue 33, judged by the target's path_equivalence):
//    spelling (the default request with path_equivalence.query added: the
//    first request the others respell), spelling_trailing_slash (its path
//    with a trailing slash, or without the one it had), spelling_case (its
//    path's letters in the other case), spelling_query_order (its query
//    parameters in reverse order). Each is a class of its own: whether it is
//    the same request is the target's to declare, not the harness's.
// The runtime derives them from the rendered request (runtime/request_forms.h).
//
// Thread-safety: pure functions over constants.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace idemproof {

enum class PayloadVariant {
  kDefault, kOther,
  kReordered, kRespaced, kHeaderCase, kExtraHeader, kQueryReordered, kIgnoredChanged, kEquivalent,
  kValueChanged, kFieldRemoved,
  kLarge,
  kSpelling, kSpellingTrailingSlash, kSpellingCase, kSpellingQueryOrder,
};

// The body size `payload: large` grows a request to (tens of kilobytes: a
// stored answer cut at a 4, 8 or 16 KiB column shows), and the variant name
// it takes first when the action declares it.
inline constexpr std::size_t kLargeBodyBytes = 24 * 1024;
inline constexpr const char* kLargeVariant = "large";

// The name a scenario file uses ("default", "value_changed", ...).
const char* PayloadName(PayloadVariant payload);
std::optional<PayloadVariant> ParsePayloadName(const std::string& name);
const std::vector<std::string>& PayloadNames();

// A form derived from the default request that means the same request.
bool IsEqualForm(PayloadVariant payload);
// A form derived from the default request that means another request.
bool IsChangedForm(PayloadVariant payload);
// One of the route-spelling forms (spelling and its respellings).
bool IsSpellingForm(PayloadVariant payload);
// Needs the action's request to have a JSON body (the bind stage checks it).
bool NeedsJsonBody(PayloadVariant payload);

// The request a recorded payload name stands for, as oracles group requests:
// "default" for the default and every equal form, "other" for other_payload,
// a changed form's own name (value_changed, field_removed: each another
// request again, so a changed form sent after `other` took an expired key is
// no retry of `other`), "large" for large, a spelling form's own name ("" counts
// as "default"; an unknown name as itself).
std::string PayloadClass(const std::string& name);
// A class PayloadClass gives a request other than the default's: "other"
// or a changed form's (mismatch_rejected judges them as reuses of the key).
bool IsOtherRequestClass(const std::string& payload_class);
// True for a payload name of a changed form (not "other"): its rejection
// may be any client error, since the target may validate before it dedups.
bool IsChangedFormName(const std::string& name);

}  // namespace idemproof
