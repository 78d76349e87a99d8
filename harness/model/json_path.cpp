#include "model/json_path.h"

#include <cctype>

#include <nlohmann/json.hpp>

namespace idemproof {
namespace {

Status PathError(std::string_view text, std::size_t pos, const std::string& why) {
  return Status::InvalidArgument("bad JSON path '" + std::string(text) + "' at offset " +
                                 std::to_string(pos) + ": " + why +
                                 " (supported: $, .name, ['name'], [N], [*])");
}

void Collect(const nlohmann::json& node, const std::vector<JsonPath::Segment>& segs, std::size_t i,
             nlohmann::json& out) {
  if (i == segs.size()) {
    out.push_back(node);
    return;
  }
  const auto& seg = segs[i];
  if (seg.kind == JsonPath::Segment::Kind::kWildcard) {
    if (node.is_array() || node.is_object()) {
      for (const auto& child : node) Collect(child, segs, i + 1, out);
    }
  } else if (seg.kind == JsonPath::Segment::Kind::kName) {
    if (node.is_object()) {
      auto it = node.find(seg.name);
      if (it != node.end()) Collect(*it, segs, i + 1, out);
    }
  } else {
    std::size_t idx = seg.index;
    if (node.is_array() && idx < node.size()) Collect(node[idx], segs, i + 1, out);
  }
}

void Erase(nlohmann::json& node, const std::vector<JsonPath::Segment>& segs, std::size_t i) {
  const auto& seg = segs[i];
  bool last = i + 1 == segs.size();
  if (seg.kind == JsonPath::Segment::Kind::kWildcard) {
    if (last) {
      if (node.is_array()) node = nlohmann::json::array();
      else if (node.is_object()) node = nlohmann::json::object();
      return;
    }
    if (node.is_array() || node.is_object()) {
      for (auto& child : node) Erase(child, segs, i + 1);
    }
  } else if (seg.kind == JsonPath::Segment::Kind::kName) {
    if (!node.is_object()) return;
    auto it = node.find(seg.name);
    if (it == node.end()) return;
    if (last) node.erase(it);
    else Erase(*it, segs, i + 1);
  } else {
    std::size_t idx = seg.index;
    if (!node.is_array() || idx >= node.size()) return;
    if (last) node.erase(idx);
    else Erase(node[idx], segs, i + 1);
  }
}

}  // namespace

Result<JsonPath> JsonPath::Parse(std::string_view text) {
  JsonPath path;
  path.text_ = std::string(text);
  if (text.empty() || text[0] != '$') return PathError(text, 0, "must start with '$'");
  std::size_t i = 1;
  while (i < text.size()) {
    char c = text[i];
    if (c == '.') {
      std::size_t start = ++i;
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' ||
                                 text[i] == '-'))
        ++i;
      if (i == start) {
        if (i < text.size() && text[i] == '*') {
          path.segments_.push_back(Segment{Segment::Kind::kWildcard, {}, 0});
          ++i;
          continue;
        }
        return PathError(text, start, "expected a member name after '.'");
      }
      path.segments_.push_back(Segment{Segment::Kind::kName, std::string(text.substr(start, i - start)), 0});
    } else if (c == '[') {
      ++i;
      if (i >= text.size()) return PathError(text, i, "unclosed '['");
      if (text[i] == '*') {
        ++i;
        path.segments_.push_back(Segment{Segment::Kind::kWildcard, {}, 0});
      } else if (text[i] == '\'' || text[i] == '"') {
        char quote = text[i++];
        std::size_t end = text.find(quote, i);
        if (end == std::string_view::npos) return PathError(text, i, "unclosed quote");
        path.segments_.push_back(Segment{Segment::Kind::kName, std::string(text.substr(i, end - i)), 0});
        i = end + 1;
      } else if (std::isdigit(static_cast<unsigned char>(text[i]))) {
        std::size_t n = 0;
        std::size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
          if (i - start > 9) return PathError(text, start, "index too large");
          n = n * 10 + static_cast<std::size_t>(text[i] - '0');
          ++i;
        }
        path.segments_.push_back(Segment{Segment::Kind::kIndex, {}, n});
      } else {
        return PathError(text, i, "expected N, *, or a quoted name inside []");
      }
      if (i >= text.size() || text[i] != ']') return PathError(text, i, "expected ']'");
      ++i;
    } else {
      return PathError(text, i, std::string("unexpected '") + c + "'");
    }
  }
  return path;
}

bool JsonPath::has_wildcard() const {
  for (const auto& s : segments_)
    if (s.kind == Segment::Kind::kWildcard) return true;
  return false;
}

nlohmann::json::json_pointer JsonPath::pointer() const {
  nlohmann::json::json_pointer ptr;
  for (const auto& s : segments_) {
    if (s.kind == Segment::Kind::kName) ptr /= s.name;
    else if (s.kind == Segment::Kind::kIndex) ptr /= s.index;
  }
  return ptr;
}

std::optional<std::string> JsonPath::FindText(const nlohmann::json& doc) const {
  auto v = Find(doc);
  if (!v.ok()) return std::nullopt;
  return v->is_string() ? v->get<std::string>() : v->dump();
}

Result<nlohmann::json> JsonPath::Find(const nlohmann::json& doc) const {
  nlohmann::json matches = nlohmann::json::array();
  Collect(doc, segments_, 0, matches);
  if (has_wildcard()) return matches;
  if (matches.empty()) return Status::NotFound("JSON path " + text_ + " not found");
  return matches[0];
}

namespace {

// "a number", "an object": what a patch met where it needed a container.
std::string WithArticle(const nlohmann::json& node) {
  const std::string type = node.type_name();
  return (type == "object" || type == "array" ? "an " : "a ") + type;
}

}  // namespace

std::string DescribeJsonValue(const nlohmann::json& v) {
  const std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 40);
  switch (v.type()) {
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "text " + text;
    case nlohmann::json::value_t::boolean: return "the boolean " + text;
    case nlohmann::json::value_t::null: return "null";
    default: return "the number " + text;
  }
}

std::string SegmentText(const JsonPath::Segment& s) {
  if (s.kind == JsonPath::Segment::Kind::kIndex) return "[" + std::to_string(s.index) + "]";
  bool plain = !s.name.empty() && !std::isdigit(static_cast<unsigned char>(s.name[0]));
  for (char c : s.name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  return plain ? "." + s.name : "['" + s.name + "']";
}

Status JsonPath::SetIn(nlohmann::json& doc, nlohmann::json value) const {
  if (segments_.empty() || has_wildcard())
    return Status::InvalidArgument("'" + text_ + "' must name one member or element (no [*], not $)");
  // A read-only walk first, so that an error leaves `doc` as it was.
  const nlohmann::json* node = &doc;  // nullptr: created from here on
  std::string at = "$";
  for (const Segment& s : segments_) {
    const bool index = s.kind == Segment::Kind::kIndex;
    const std::size_t size = node != nullptr && node->is_array() ? node->size() : 0;
    if (node != nullptr && !node->is_null() && (index ? !node->is_array() : !node->is_object()))
      return Status::InvalidArgument(at + " is " + WithArticle(*node) + ", not " + (index ? "an array" : "an object"));
    if (index && s.index > size + kMaxPatchPadding)
      return Status::InvalidArgument(at + " has " + std::to_string(size) + " element(s): setting [" +
                                     std::to_string(s.index) + "] would add more than " +
                                     std::to_string(kMaxPatchPadding) + " nulls before it");
    if (node != nullptr && !node->is_null()) {
      if (index) {
        node = s.index < size ? &(*node)[s.index] : nullptr;
      } else {
        auto it = node->find(s.name);
        node = it == node->end() ? nullptr : &*it;
      }
    } else {
      node = nullptr;
    }
    at += SegmentText(s);
  }
  // The write, which can no longer fail.
  nlohmann::json* out = &doc;
  for (const Segment& s : segments_) {
    if (s.kind == Segment::Kind::kIndex) {
      if (out->is_null()) *out = nlohmann::json::array();
      while (out->size() <= s.index) out->push_back(nullptr);
      out = &(*out)[s.index];
    } else {
      if (out->is_null()) *out = nlohmann::json::object();
      out = &(*out)[s.name];
    }
  }
  *out = std::move(value);
  return Status::Ok();
}

void JsonPath::EraseFrom(nlohmann::json& doc) const {
  if (segments_.empty()) {
    doc = nullptr;
    return;
  }
  Erase(doc, segments_, 0);
}

nlohmann::json WithoutPaths(nlohmann::json doc, const std::vector<JsonPath>& paths) {
  for (const auto& p : paths) p.EraseFrom(doc);
  return doc;
}

}  // namespace idemproof
