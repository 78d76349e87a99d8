// The readers every section of the target file shares (load_context.h).
#include <algorithm>
#include <cstdio>

#include <re2/re2.h>

#include "model/roles.h"
#include "model/target/parse/load_context.h"

namespace idemproof {

std::string TargetLoadContext::Name(const YAML::Node& node, const std::string& what) {
  std::string s = r.String(node, what + " name");
  static const RE2 kName("[A-Za-z_][A-Za-z0-9_.-]*", RE2::Latin1);
  if (!RE2::FullMatch(s, kName)) r.Fail(node, "bad " + what + " name '" + s + "' (letters, digits, _ . -)");
  return s;
}

std::string TargetLoadContext::Templated(const YAML::Node& node, const std::string& what) {
  std::string s = r.String(node, what);
  templates.push_back({node, s, section_variables});
  return s;
}

void TargetLoadContext::TemplatedJson(const YAML::Node& node) {
  if (node.IsScalar()) {
    templates.push_back({node, node.Scalar(), section_variables});
  } else if (node.IsSequence()) {
    for (const auto& item : node) TemplatedJson(item);
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) TemplatedJson(it->second);
  }
}

// `http`: HTTP header fields (names are tokens; values carry no CR, LF,
// NUL or other control byte, which would split or truncate the request).
HeaderList TargetLoadContext::Headers(const YAML::Node& node, const std::string& what, bool http) {
  HeaderList h = r.StringPairs(node, what);
  for (auto it = node.begin(); it != node.end(); ++it) {
    templates.push_back({it->second, it->second.Scalar(), section_variables});
    if (!http) continue;
    HeaderName(it->first, what + " name");
    const std::string& v = it->second.Scalar();
    for (unsigned char c : v) {
      if ((c < 0x20 && c != '\t') || c == 0x7F) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02X", c);
        r.Fail(it->second, what + " '" + it->first.Scalar() + "': the value holds the control byte " + code +
                                " (CR, LF and NUL would split or cut the request)");
      }
    }
  }
  return h;
}

std::string TargetLoadContext::HeaderName(const YAML::Node& node, const std::string& what) {
  std::string s = r.String(node, what);
  static const RE2 kToken("[!#$%&'*+.^_`|~0-9A-Za-z-]+", RE2::Latin1);
  if (!RE2::FullMatch(s, kToken)) r.Fail(node, what + ": '" + s + "' is not a valid header name");
  return s;
}

std::vector<JsonPath> TargetLoadContext::Paths(const YAML::Node& node, const std::string& what) {
  if (!node.IsSequence()) r.Fail(node, what + " must be a list of JSON paths");
  std::vector<JsonPath> out;
  for (const auto& item : node) out.push_back(r.Path(item, what + " item"));
  return out;
}

std::vector<std::string> TargetLoadContext::Argv(const YAML::Node& node, const std::string& what) {
  std::vector<std::string> argv = r.StringList(node, what);
  if (argv.empty()) r.Fail(node, what + " must not be empty");
  for (const auto& item : node) templates.push_back({item, item.Scalar(), section_variables});
  return argv;
}

// One role name at `node`, one of `roles`.
std::string TargetLoadContext::KnownRole(const YAML::Node& node, const std::string& what,
                                         const std::vector<std::string>& roles) {
  const std::string role = r.String(node, what + ".role");
  if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
    std::string known;
    for (const auto& k : roles) known += (known.empty() ? "" : ", ") + k;
    r.Fail(node, what + ": unknown role '" + role + "'" + yaml::DidYouMean(role, roles) + "; known: " + known);
  }
  return role;
}

// `role:` (one of `roles`) and `of:` (an action name, checked once every
// action is loaded: see CheckRoleOf). `role_read`: the caller read the role.
void TargetLoadContext::RoleOf(const YAML::Node& node, const std::string& what,
                               const std::vector<std::string>& roles, std::string& role, std::string& of,
                               bool role_read) {
  if (node["role"] && !role_read) role = KnownRole(node["role"], what, roles);
  if (node["of"]) {
    of = Name(node["of"], what + ".of");
    if (role.empty()) r.Fail(node["of"], what + ": 'of' needs a 'role'");
    if (role == "create") r.Fail(node["of"], what + ": a create action is not 'of' another action");
    if (role == kAppliedRole) message_of.emplace_back(node["of"], what);  // of a message or a callback
    else if (role == "callback") callback_of.emplace_back(node["of"], what);
    else role_of.emplace_back(node["of"], what);
  }
}

}  // namespace idemproof
