// Internal to idemproof_model: what the target file's section parsers share
// while one file loads. model/target_loader.cpp calls them in order; each is
// declared beside its section's type (model/target/SECTION.h) and defined in
// model/target/parse/SECTION.cpp, a file no header includes, so a parser may
// use what uses the types (role hints, capabilities, profiles) with no cycle.
// Every failure throws yaml::ConfigError at the offending node's
// file:line:column (model/yaml_reader.h); ParseTarget turns it into a Status.
//
// A name may be used before the section declaring it (a probe's `egress:`
// before `egress:`), so uses are collected here and checked once the whole
// file is read (the Check* functions beside each section's parser).
//
// Thread-safety: one context per load, on one thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "base/header_list.h"
#include "model/json_path.h"
#include "model/target/request.h"
#include "model/yaml_reader.h"

namespace idemproof {

// The HTTP methods a request (and an egress probe's match) may name.
inline const std::vector<std::string>& HttpMethods() {
  static const std::vector<std::string> kMethods = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"};
  return kMethods;
}

// A templated string met while loading, checked once every capture name is
// known (a capture may be defined after the action using it).
struct TemplateUse {
  YAML::Node node;
  std::string text;
  std::vector<std::string> extra;  // variables known only where it was declared (batch)
};

class TargetLoadContext {
 public:
  using Uses = std::vector<std::pair<YAML::Node, std::string>>;

  TargetLoadContext(const std::string& file, std::string profile)
      : r(file), profile_override(std::move(profile)) {}

  yaml::Reader r;
  std::string profile_override;  // --profile; "" = the file's profile:
  std::vector<TemplateUse> templates;
  std::vector<std::string> section_variables;  // template variables of the section being read (batch)
  Uses bases;        // request `base:` uses
  Uses egress_uses;  // probe `egress:` uses
  Uses calls_uses;   // action `calls:` names
  Uses caller_uses;  // probe `caller:` names
  Uses role_of;      // `of:` nodes and their owner
  Uses message_of;   // `of:` of applied probes (a message or a callback)
  Uses callback_of;  // `of:` of callback actions

  // A name: letters, digits, _ . - (not starting with a digit, '.' or '-').
  std::string Name(const YAML::Node& node, const std::string& what);
  // A string kept for the template check.
  std::string Templated(const YAML::Node& node, const std::string& what);
  // Every scalar of a JSON body kept for the template check.
  void TemplatedJson(const YAML::Node& node);
  // `http`: HTTP header fields (names are tokens; values carry no CR, LF,
  // NUL or other control byte, which would split or truncate the request).
  HeaderList Headers(const YAML::Node& node, const std::string& what, bool http = true);
  std::string HeaderName(const YAML::Node& node, const std::string& what);
  std::vector<JsonPath> Paths(const YAML::Node& node, const std::string& what);
  std::vector<std::string> Argv(const YAML::Node& node, const std::string& what);
  // One role name at `node`, one of `roles`.
  std::string KnownRole(const YAML::Node& node, const std::string& what, const std::vector<std::string>& roles);
  // `role:` (one of `roles`) and `of:` (an action name, checked once every
  // action is loaded: see CheckRoleOf). `role_read`: the caller read the role.
  void RoleOf(const YAML::Node& node, const std::string& what, const std::vector<std::string>& roles,
              std::string& role, std::string& of, bool role_read = false);

  // Requests, calls and variants (model/target/request.cpp).
  RequestTemplate Request(const YAML::Node& node, const std::string& what, bool body_only = false);
  // `content_type:` of a block with json or body (a header value: no CR/LF).
  std::string ContentType(const YAML::Node& node, const std::string& what);
  // variants: {NAME: {query, headers, patch, json, body, content_type}}; a
  // message's (`entry`) may also give `fields` (its broker entry's).
  std::map<std::string, RequestVariant> Variants(const YAML::Node& node, const std::string& what,
                                                 const RequestTemplate& request,
                                                 const std::optional<RequestTemplate>& other_payload,
                                                 bool entry = false);
  // The patches of `v` (from `node`, in order) applied to a copy of `body`.
  void CheckPatches(const YAML::Node& node, const std::string& vw, const RequestVariant& v, nlohmann::json body,
                    const std::string& whose);
  // {request: ...} | {command: [...]} plus `extra` keys the caller reads.
  TargetCall Call(const YAML::Node& node, const std::string& what, std::vector<std::string> extra);
};

}  // namespace idemproof
