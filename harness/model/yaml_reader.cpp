#include "model/yaml_reader.h"

#include <algorithm>
#include <limits>

#include "model/template.h"

namespace idemproof::yaml {
namespace {

std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string NodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    default: return "an undefined node";
  }
}

}  // namespace

std::string ClosestWord(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= limit ? best : "";
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string c = ClosestWord(word, candidates);
  return c.empty() ? "" : " (did you mean '" + c + "'?)";
}

SourceMark Reader::MarkOf(const YAML::Node& node) const {
  SourceMark m;
  m.file = file_;
  if (node.IsDefined()) {
    YAML::Mark mk = node.Mark();
    if (!mk.is_null()) {
      m.line = mk.line + 1;
      m.column = mk.column + 1;
    }
  }
  return m;
}

void Reader::Fail(const YAML::Node& node, const std::string& message) const {
  FailAt(MarkOf(node), message);
}

void Reader::FailAt(const SourceMark& mark, const std::string& message) const {
  throw ConfigError{Status::InvalidConfig(message, mark)};
}

YAML::Node Reader::Load(const std::string& text) const {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourceMark m;
    m.file = file_;
    if (!e.mark.is_null()) {
      m.line = e.mark.line + 1;
      m.column = e.mark.column + 1;
    }
    FailAt(m, "YAML syntax error: " + e.msg);
  }
}

void Reader::ExpectMap(const YAML::Node& node, const std::string& what) const {
  if (!node.IsMap()) Fail(node, what + " must be a map, found " + NodeKind(node));
}

void Reader::CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
                       const std::string& what) const {
  ExpectMap(map, what);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) Fail(it->first, what + ": keys must be plain names");
    std::string key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string known;
      for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      Fail(it->first, "unknown key '" + key + "' in " + what + DidYouMean(key, allowed) +
                          "; known keys: " + known);
    }
  }
}

YAML::Node Reader::Required(const YAML::Node& map, const std::string& key, const std::string& what) const {
  YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) Fail(map, what + ": missing required key '" + key + "'");
  return n;
}

std::string Reader::String(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) Fail(node, what + " must be a string, found " + NodeKind(node));
  return node.Scalar();
}

long long Reader::Int(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) Fail(node, what + " must be an integer, found " + NodeKind(node));
  const std::string& s = node.Scalar();
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used, 10);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  Fail(node, what + " must be an integer, found '" + s + "'");
}

bool Reader::Bool(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) Fail(node, what + " must be true or false, found " + NodeKind(node));
  const std::string& s = node.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  Fail(node, what + " must be true or false, found '" + s + "'");
}

Duration Reader::DurationOf(const YAML::Node& node, const std::string& what) const {
  std::string s = String(node, what);
  auto d = ParseDuration(s);
  if (!d.ok()) Fail(node, what + ": " + d.status().message());
  return *d;
}

int Reader::HttpStatus(const YAML::Node& node, const std::string& what) const {
  long long v = Int(node, what);
  if (v < 100 || v > 599) Fail(node, what + " must be an HTTP status (100-599), found " + std::to_string(v));
  return static_cast<int>(v);
}

JsonPath Reader::Path(const YAML::Node& node, const std::string& what) const {
  std::string s = String(node, what);
  auto p = JsonPath::Parse(s);
  if (!p.ok()) Fail(node, what + ": " + p.status().message());
  return *p;
}

std::vector<std::string> Reader::StringList(const YAML::Node& node, const std::string& what) const {
  if (!node.IsSequence()) Fail(node, what + " must be a list, found " + NodeKind(node));
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(String(item, what + " item"));
  return out;
}

std::vector<std::pair<std::string, std::string>> Reader::StringPairs(const YAML::Node& node,
                                                                     const std::string& what) const {
  ExpectMap(node, what);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string k = String(it->first, what + " key");
    out.emplace_back(k, String(it->second, what + " value '" + k + "'"));
  }
  return out;
}

nlohmann::json Reader::Json(const YAML::Node& node) const {
  switch (node.Type()) {
    case YAML::NodeType::Null: return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& item : node) a.push_back(Json(item));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (auto it = node.begin(); it != node.end(); ++it) o[String(it->first, "JSON key")] = Json(it->second);
      return o;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted: always a string
      if (s == "null" || s == "~") return nullptr;
      if (s == "true") return true;
      if (s == "false") return false;
      try {
        std::size_t used = 0;
        long long v = std::stoll(s, &used, 10);
        if (used == s.size()) return v;
      } catch (const std::exception&) {
      }
      try {
        std::size_t used = 0;
        double v = std::stod(s, &used);
        if (used == s.size() && !s.empty() && (std::isdigit(static_cast<unsigned char>(s.back())))) return v;
      } catch (const std::exception&) {
      }
      return s;
    }
    default: Fail(node, "undefined YAML node");
  }
}

void Reader::CheckTemplate(const YAML::Node& node, const std::string& text,
                           const std::vector<std::string>& known) const {
  auto vars = TemplateVariables(text);
  if (!vars.ok()) Fail(node, vars.status().message());
  if (known.empty()) return;
  for (const auto& v : *vars) {
    if (std::find(known.begin(), known.end(), v) == known.end()) {
      Fail(node, "unknown template variable '{{" + v + "}}'" + DidYouMean(v, known));
    }
  }
}

}  // namespace idemproof::yaml
