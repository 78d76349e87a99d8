// Requests of the target file (request.h).
#include <algorithm>

#include <re2/re2.h>

#include "model/target/request.h"
#include "model/template.h"

namespace idemproof {
namespace {

bool TextUsesKey(const std::string& text) {
  auto vars = TemplateVariables(text);
  return vars.ok() && std::find(vars->begin(), vars->end(), "key") != vars->end();
}

bool JsonUsesKey(const nlohmann::json& doc) {
  if (doc.is_string()) return TextUsesKey(doc.get<std::string>());
  if (doc.is_array() || doc.is_object()) {
    for (const auto& item : doc)
      if (JsonUsesKey(item)) return true;
  }
  return false;
}

// The whole value is {{key}} (white space inside the braces allowed).
bool IsKeyPlaceholder(const std::string& text) {
  static const RE2 kPlaceholder(R"(\{\{[ \t\n\v\f\r]*key[ \t\n\v\f\r]*\}\})", RE2::Latin1);
  return RE2::FullMatch(text, kPlaceholder);
}

nlohmann::json DropKeyMembers(const nlohmann::json& doc) {
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it.value().is_string() && IsKeyPlaceholder(it.value().get<std::string>())) continue;
      out[it.key()] = DropKeyMembers(it.value());
    }
    return out;
  }
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : doc) out.push_back(DropKeyMembers(item));
    return out;
  }
  return doc;
}

}  // namespace

// True when the request sends {{key}} somewhere (path, header, body).
bool UsesKey(const RequestTemplate& r) {
  if (TextUsesKey(r.path) || (r.body && TextUsesKey(*r.body)) || (r.json && JsonUsesKey(*r.json))) return true;
  return std::any_of(r.headers.begin(), r.headers.end(), [](const auto& h) { return TextUsesKey(h.second); });
}

RequestTemplate WithoutKeyPlaceholders(const RequestTemplate& request) {
  RequestTemplate out = request;
  std::erase_if(out.headers, [](const auto& h) { return IsKeyPlaceholder(h.second); });
  if (out.json) out.json = DropKeyMembers(*out.json);
  return out;
}

}  // namespace idemproof
