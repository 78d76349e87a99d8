// `callers:` (callers.h).
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "model/target/callers.h"
#include "model/target/description.h"
#include "model/target/parse/load_context.h"

namespace idemproof {
namespace {

// Two callers' headers are one credential when they are the same set (names
// case-insensitive, values as written), unless a value differs per request
// ({{uuid}}). One credential in two callers' hands makes the service see one
// caller, and every "one caller got another's answer" a false violation.
bool SameCredential(const HeaderList& a, const HeaderList& b) {
  static const RE2 kPerRequest(R"(\{\{[ \t\n\v\f\r]*uuid[ \t\n\v\f\r]*\}\})", RE2::Latin1);
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  auto canonical = [&](const HeaderList& h) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, value] : h) out.emplace_back(lower(name), value);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const auto& [name, value] : a)
    if (RE2::PartialMatch(value, kPerRequest)) return false;
  return canonical(a) == canonical(b);
}

}  // namespace

void ParseCallers(TargetLoadContext& cx, const YAML::Node& callers, TargetDescription& t) {
  cx.r.ExpectMap(callers, "callers");
  for (auto it = callers.begin(); it != callers.end(); ++it) {
    CallerDescription c;
    c.name = cx.Name(it->first, "callers");
    c.mark = cx.r.MarkOf(it->first);
    const std::string what = "callers." + c.name;
    cx.r.CheckKeys(it->second, {"headers"}, what);
    c.headers = cx.Headers(cx.r.Required(it->second, "headers", what), what + ".headers");
    if (c.headers.empty()) cx.r.Fail(it->second, what + ": headers must name at least one header");
    for (const CallerDescription& earlier : t.callers) {
      if (!SameCredential(earlier.headers, c.headers)) continue;
      std::string shown;
      for (const auto& [name, value] : c.headers) shown += (shown.empty() ? "" : ", ") + name + ": " + value;
      cx.r.Fail(it->first, what + ": the same headers as callers." + earlier.name + " (" + shown +
                               "): the service cannot tell the two callers apart; give each its own credential");
    }
    t.callers.push_back(std::move(c));
  }
}

// Every probe's `caller:` names a declared caller.
void CheckCallerUses(TargetLoadContext& cx, const TargetDescription& t) {
  for (const auto& [node, name] : cx.caller_uses) {
    std::vector<std::string> declared;
    for (const auto& c : t.callers) declared.push_back(c.name);
    if (std::find(declared.begin(), declared.end(), name) == declared.end())
      cx.r.Fail(node, "caller: '" + name + "' is not a caller declared under 'callers'" +
                          yaml::DidYouMean(name, declared));
  }
}

}  // namespace idemproof
