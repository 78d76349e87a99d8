#include "model/template.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include <nlohmann/json.hpp>

namespace idemproof {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  // Dots separate the parts of a service's variables (services.stub.url).
  if (name.back() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The literal token's text: {{'TEXT'}}, '' inside TEXT for one quote.
// `at` is just past the "{{" and blanks; on success `*end` is past "}}".
Status ReadLiteral(std::string_view text, std::size_t at, std::string* literal, std::size_t* end) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] != '\'') {
      *literal += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\'') {
      *literal += '\'';
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (text.substr(j, 2) != "}}") break;
    *end = j + 2;
    return Status::Ok();
  }
  return Status::InvalidArgument("unclosed literal {{'...'}} at offset " + std::to_string(at) + " in '" +
                                 std::string(text) + "'");
}

// Walks `text`, calling on_text for literal runs, on_literal for each
// {{'...'}} token's text, and on_var for each name.
Status Walk(std::string_view text, const std::function<void(std::string_view)>& on_text,
            const std::function<Status(const std::string&)>& on_var,
            const std::function<void(std::string_view)>& on_literal = nullptr) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      on_text(text.substr(pos));
      break;
    }
    on_text(text.substr(pos, open - pos));
    std::size_t inner = open + 2;
    while (inner < text.size() && std::isspace(static_cast<unsigned char>(text[inner]))) ++inner;
    if (inner < text.size() && text[inner] == '\'') {
      std::string literal;
      if (Status s = ReadLiteral(text, inner, &literal, &pos); !s.ok()) return s;
      (on_literal ? on_literal : on_text)(literal);
      continue;
    }
    std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("unclosed '{{' at offset " + std::to_string(open) + " in '" +
                                     std::string(text) + "'");
    }
    std::string_view name = Trim(text.substr(open + 2, close - open - 2));
    if (!ValidName(name)) {
      return Status::InvalidArgument("bad template variable name '" + std::string(name) + "' in '" +
                                     std::string(text) + "'");
    }
    Status s = on_var(std::string(name));
    if (!s.ok()) return s;
    pos = close + 2;
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& BuiltinTemplateVariables() {
  static const std::vector<std::string> kNames = {"key",     "biz",       "run",        "uuid", "port",
                                                  "run_dir", "build_dir", "source_dir", "flaw",
                                                  "target_pid"};
  return kNames;
}

std::string EscapeTemplateLiteral(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    // A '{' opens a token only with another '{' after it; one at the end
    // could meet a "{{" written after this text.
    if (text[i] == '{' && (i + 1 == text.size() || text[i + 1] == '{')) {
      out += "{{'{'}}";
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string SlowMsFor(std::chrono::nanoseconds lease) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(lease * 3 / 2).count());
}

Result<std::string> ExpandTemplate(std::string_view text, const TemplateVars& vars) {
  std::string out;
  out.reserve(text.size());
  Status s = Walk(
      text, [&](std::string_view lit) { out.append(lit); },
      [&](const std::string& name) {
        auto it = vars.find(name);
        if (it == vars.end()) {
          std::string known;
          for (const auto& [k, v] : vars) known += (known.empty() ? "" : ", ") + k;
          return Status::InvalidArgument("unknown template variable '{{" + name + "}}' in '" +
                                         std::string(text) + "' (known: " +
                                         (known.empty() ? "none" : known) + ")");
        }
        out += it->second;
        return Status::Ok();
      });
  if (!s.ok()) return s;
  return out;
}

Result<nlohmann::json> ExpandTemplateJson(const nlohmann::json& doc, const TemplateVars& vars) {
  if (doc.is_string()) {
    auto r = ExpandTemplate(doc.get_ref<const std::string&>(), vars);
    if (!r.ok()) return r.status();
    return nlohmann::json(std::move(r).value());
  }
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : doc) {
      auto r = ExpandTemplateJson(item, vars);
      if (!r.ok()) return r.status();
      out.push_back(std::move(r).value());
    }
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      auto r = ExpandTemplateJson(it.value(), vars);
      if (!r.ok()) return r.status();
      out[it.key()] = std::move(r).value();
    }
    return out;
  }
  return doc;
}

Result<std::string> ExpandSome(std::string_view text, const PartialResolver& resolve) {
  std::string out;
  out.reserve(text.size());
  Status s = Walk(
      text, [&](std::string_view lit) { out.append(lit); },
      [&](const std::string& name) {
        auto value = resolve(name);
        if (!value.ok()) return value.status();
        out += *value ? **value : "{{" + name + "}}";
        return Status::Ok();
      },
      // Kept a literal for the later expansion.
      [&](std::string_view lit) { out += EscapeTemplateLiteral(lit); });
  if (!s.ok()) return s;
  return out;
}

Result<std::vector<std::string>> TemplateVariables(std::string_view text) {
  std::vector<std::string> names;
  Status s = Walk(
      text, [](std::string_view) {},
      [&](const std::string& name) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        return Status::Ok();
      });
  if (!s.ok()) return s;
  return names;
}

}  // namespace idemproof
