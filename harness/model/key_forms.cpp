#include "model/key_forms.h"

#include <algorithm>

namespace idemproof {

const std::vector<std::string>& MalformedKeyForms() {
  static const std::vector<std::string> forms = {"empty", "over_max_length", "comma", "quote", "non_ascii"};
  return forms;
}

bool IsMalformedKeyForm(const std::string& form) {
  const auto& forms = MalformedKeyForms();
  return std::find(forms.begin(), forms.end(), form) != forms.end();
}

std::string MalformedKey(const std::string& form, const std::string& key) {
  if (form == "empty") return "";
  if (form == "comma") return key + "," + key;
  if (form == "quote") {
    // Inside the key, not at its ends: neither a Token nor a whole String.
    const std::size_t mid = key.size() / 2;
    return key.substr(0, mid) + "\"" + key.substr(mid);
  }
  if (form == "non_ascii") return key + "-\xc3\xa9";
  return key;  // over_max_length: the caller grew it
}

std::string MalformedKeyOracle(const std::string& form) {
  if (form == "empty") return "empty_key_rejected";
  if (form == "over_max_length") return "long_key_rejected";
  return "key_syntax_rejected";
}

std::string MalformedKeyText(const std::string& form, std::size_t sent_length, std::size_t max_length) {
  if (form == "empty") return "an empty key";
  if (form == "over_max_length")
    return "a key of " + std::to_string(sent_length) + " characters (key_max_length: " + std::to_string(max_length) +
           ")";
  if (form == "comma") return "a key with a comma (a list, not one String)";
  if (form == "quote") return "a key with a double quote inside";
  return "a key with a non-ASCII character";
}

}  // namespace idemproof
