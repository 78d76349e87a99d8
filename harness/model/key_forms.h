// Malformed keys (issue 48 item 4): `key_form:` on a send that puts a
// malformed form of its named key in the key header (or the `{{key}}`
// placeholder), so the target's own key syntax is judged. The IETF draft
// makes the key an Item Structured Header whose value MUST be a String
// (RFC 8941 sf-string: printable ASCII); a target may also declare the
// longest key it keeps (idempotency.key_max_length).
//
//   empty            the key header sent with an empty value
//   over_max_length  the key one character longer than the declared maximum
//   comma            "<key>,<key>": a list of two, not one Item
//   quote            a double quote in the key: no String nor Token
//   non_ascii        "<key>-é" (UTF-8): outside sf-string's characters
//
// The history's request keeps the named key in `key` (so oracles group it
// as usual) and records the form in `value.key_form`; the header as sent
// is in the request record. Each form has the oracle that judges it.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace idemproof {

// The malformed forms, in the order above.
const std::vector<std::string>& MalformedKeyForms();
bool IsMalformedKeyForm(const std::string& form);

// The value sent for `key` (the named key, for over_max_length already
// grown to the declared maximum + 1) in `form`.
// REQUIRES: IsMalformedKeyForm(form)
std::string MalformedKey(const std::string& form, const std::string& key);

// The oracle judging requests of `form`: empty_key_rejected,
// long_key_rejected or key_syntax_rejected. REQUIRES: IsMalformedKeyForm(form)
std::string MalformedKeyOracle(const std::string& form);

// What a request of `form` carried, for evidence: "an empty key",
// "a key of 256 characters (key_max_length: 255)", "a key with a comma"...
std::string MalformedKeyText(const std::string& form, std::size_t sent_length, std::size_t max_length);

}  // namespace idemproof
