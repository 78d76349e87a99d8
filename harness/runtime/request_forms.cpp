#include "runtime/request_forms.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

namespace idemproof::runtime {

namespace {

using ojson = nlohmann::ordered_json;
using Segment = JsonPath::Segment;

// The JSON body, member order kept; nullopt when the body is not JSON.
std::optional<ojson> JsonBody(const HttpRequest& request) {
  if (request.body.empty()) return std::nullopt;
  auto type = find_header(request.headers, "Content-Type");
  if (type && type->find("json") == std::string::npos) return std::nullopt;
  ojson doc = ojson::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_structured()) return std::nullopt;
  return doc;
}

ojson Reversed(const ojson& v, bool& changed) {
  if (v.is_object()) {
    ojson out = ojson::object();
    if (v.size() >= 2) changed = true;
    std::vector<std::pair<std::string, const ojson*>> members;
    for (auto it = v.begin(); it != v.end(); ++it) members.emplace_back(it.key(), &it.value());
    for (auto m = members.rbegin(); m != members.rend(); ++m) out[m->first] = Reversed(*m->second, changed);
    return out;
  }
  if (v.is_array()) {
    ojson out = ojson::array();
    for (const auto& item : v) out.push_back(Reversed(item, changed));
    return out;
  }
  return v;
}

std::string PathText(const std::vector<Segment>& path) {
  std::string out = "$";
  for (const auto& s : path) {
    if (s.kind == Segment::Kind::kIndex) {
      out += "[" + std::to_string(s.index) + "]";
    } else {
      const bool plain = !s.name.empty() && std::all_of(s.name.begin(), s.name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_';
      });
      out += plain ? "." + s.name : "['" + s.name + "']";
    }
  }
  return out;
}

ojson::json_pointer PointerOf(const std::vector<Segment>& path) {
  ojson::json_pointer p;
  for (const auto& s : path) p /= s.kind == Segment::Kind::kIndex ? std::to_string(s.index) : s.name;
  return p;
}

// `prefix` (an ignored path, [*] matching any member or element) covers `path`.
bool Covers(const std::vector<Segment>& prefix, const std::vector<Segment>& path) {
  if (prefix.size() > path.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (prefix[i].kind == Segment::Kind::kWildcard) continue;
    if (!(prefix[i] == path[i])) return false;
  }
  return true;
}

bool Ignored(const std::vector<JsonPath>& ignored, const std::vector<Segment>& path) {
  return std::any_of(ignored.begin(), ignored.end(), [&](const JsonPath& p) { return Covers(p.segments(), path); });
}

struct Place {
  std::vector<Segment> path;
  const ojson* value = nullptr;
};

// Every leaf (scalar) and every object member, in document order.
void Walk(const ojson& v, std::vector<Segment>& path, std::vector<Place>& leaves, std::vector<Place>& members) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      path.push_back(Segment{Segment::Kind::kName, it.key(), 0});
      members.push_back({path, &it.value()});
      Walk(it.value(), path, leaves, members);
      path.pop_back();
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      path.push_back(Segment{Segment::Kind::kIndex, "", i});
      Walk(v[i], path, leaves, members);
      path.pop_back();
    }
  } else {
    leaves.push_back({path, &v});
  }
}

// The deepest place `fits`, the last in document order at that depth.
const Place* Deepest(const std::vector<Place>& places, const std::function<bool(const Place&)>& fits) {
  const Place* best = nullptr;
  for (const auto& p : places)
    if (fits(p) && (best == nullptr || p.path.size() >= best->path.size())) best = &p;
  return best;
}

// The changed value of a leaf.
ojson Changed(const ojson& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() + 1;
  if (v.is_number_integer()) return v.get<std::int64_t>() + 1;
  if (v.is_number_float()) return v.get<double>() + 1.0;
  if (v.is_boolean()) return !v.get<bool>();
  return v.get<std::string>() + "-changed";
}

Result<std::vector<std::string>> ChangeLeaf(ojson& doc, const std::vector<JsonPath>& ignored, const std::string& key,
                                            bool only_ignored) {
  std::vector<Place> leaves, members;
  std::vector<Segment> path;
  Walk(doc, path, leaves, members);
  auto changeable = [&](const Place& p) {
    if (p.value->is_null() || (p.value->is_string() && p.value->get<std::string>() == key)) return false;
    return Ignored(ignored, p.path) == only_ignored;
  };
  const Place* pick = nullptr;
  for (auto kind : {0, 1, 2}) {
    pick = Deepest(leaves, [&](const Place& p) {
      const bool of_kind = kind == 0 ? p.value->is_number() : kind == 1 ? p.value->is_boolean() : p.value->is_string();
      return of_kind && changeable(p);
    });
    if (pick != nullptr) break;
  }
  if (pick == nullptr)
    return Status(StatusCode::kUnsupported, only_ignored ? "the JSON body has no fingerprint_ignores value to change"
                                                         : "the JSON body has no value the fingerprint covers");
  const ojson before = *pick->value;
  const ojson after = Changed(before);
  const std::string where = PathText(pick->path);
  doc[PointerOf(pick->path)] = after;
  return std::vector<std::string>{where + ": " + before.dump() + " -> " + after.dump()};
}

Result<std::vector<std::string>> RemoveField(ojson& doc, const std::vector<JsonPath>& ignored, const std::string& key) {
  std::vector<Place> leaves, members;
  std::vector<Segment> path;
  Walk(doc, path, leaves, members);
  const Place* pick = Deepest(members, [&](const Place& p) {
    if (Ignored(ignored, p.path)) return false;
    return !(p.value->is_string() && p.value->get<std::string>() == key);
  });
  if (pick == nullptr) return Status(StatusCode::kUnsupported, "the JSON body has no member the fingerprint covers");
  const std::string where = PathText(pick->path);
  std::vector<Segment> parent(pick->path.begin(), pick->path.end() - 1);
  doc[PointerOf(parent)].erase(pick->path.back().name);
  return std::vector<std::string>{where + " removed"};
}

// The first array of `v` in document order (depth first), with its path.
ojson* FirstArray(ojson& v, std::vector<Segment>& path) {
  if (v.is_array()) return &v;
  if (!v.is_object()) return nullptr;
  for (auto it = v.begin(); it != v.end(); ++it) {
    path.push_back(Segment{Segment::Kind::kName, it.key(), 0});
    if (ojson* found = FirstArray(it.value(), path)) return found;
    path.pop_back();
  }
  return nullptr;
}

// payload large: the first array grown by copies of its last element until
// the body holds at least kLargeBodyBytes.
Result<std::vector<std::string>> Grow(HttpRequest& request, ojson& doc) {
  std::vector<Segment> path;
  ojson* array = FirstArray(doc, path);
  if (array == nullptr)
    return Status(StatusCode::kUnsupported, "the JSON body holds no array to grow (declare a 'large' variant)");
  if (array->empty()) return Status(StatusCode::kUnsupported, "the JSON body's first array is empty: nothing to repeat");
  const std::size_t before = array->size();
  const std::size_t size = doc.dump().size();
  const std::size_t element = array->back().dump().size() + 1;  // and its comma
  if (size < kLargeBodyBytes) {
    const ojson last = array->back();
    for (std::size_t n = (kLargeBodyBytes - size + element - 1) / element; n > 0; --n) array->push_back(last);
  }
  request.body = doc.dump();
  return std::vector<std::string>{PathText(path) + ": " + std::to_string(before) + " -> " +
                                  std::to_string(array->size()) + " elements (body " +
                                  std::to_string(request.body.size()) + " bytes)"};
}

void HeaderCase(HttpRequest& request, std::vector<std::string>& changes) {
  for (auto& [name, value] : request.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name) {
      for (char& c : lower) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    name = lower;
  }
  if (!request.headers.empty()) changes.push_back("header names in another case");
}

void QueryReordered(HttpRequest& request, std::vector<std::string>& changes) {
  const auto q = request.target.find('?');
  if (q == std::string::npos) return;
  std::vector<std::string> params;
  std::size_t start = q + 1;
  while (start <= request.target.size()) {
    const auto amp = request.target.find('&', start);
    params.push_back(request.target.substr(start, amp == std::string::npos ? std::string::npos : amp - start));
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  if (params.size() < 2) return;
  std::reverse(params.begin(), params.end());
  std::string query;
  for (const auto& p : params) query += (query.empty() ? "" : "&") + p;
  request.target = request.target.substr(0, q + 1) + query;
  changes.push_back("query parameters in reverse order");
}

// The route spellings: the path (origin-form, before any query) respelled.
Result<std::vector<std::string>> Respelled(HttpRequest& request, PayloadVariant payload) {
  std::vector<std::string> changes;
  const auto q = request.target.find('?');
  std::string path = request.target.substr(0, q);
  const std::string rest = q == std::string::npos ? "" : request.target.substr(q);
  const std::string before = path;
  if (payload == PayloadVariant::kSpellingTrailingSlash) {
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    else path += '/';
  } else if (payload == PayloadVariant::kSpellingCase) {
    const bool lower = std::any_of(path.begin(), path.end(), [](unsigned char c) { return std::islower(c); });
    for (char& c : path)
      c = static_cast<char>(lower ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
    if (path == before) return Status(StatusCode::kUnsupported, "the path " + before + " has no letter to change");
  } else if (payload == PayloadVariant::kSpellingQueryOrder) {
    QueryReordered(request, changes);
    if (changes.empty())
      return Status(StatusCode::kUnsupported, "the request has fewer than two query parameters to reorder "
                                              "(declare idempotency.path_equivalence.query)");
    return changes;
  }
  if (path == before) return changes;  // spelling: the first request itself
  request.target = path + rest;
  changes.push_back("path " + before + " spelled " + path);
  return changes;
}

}  // namespace

Result<std::vector<std::string>> ApplyPayloadForm(HttpRequest& request, PayloadVariant payload,
                                                  const std::vector<JsonPath>& ignored, const std::string& key,
                                                  const std::string& fresh) {
  std::vector<std::string> changes;
  std::optional<ojson> doc = JsonBody(request);
  const bool all = payload == PayloadVariant::kEquivalent;
  if ((NeedsJsonBody(payload) || payload == PayloadVariant::kLarge) && !doc)
    return Status(StatusCode::kUnsupported, std::string("payload ") + PayloadName(payload) + " needs a JSON body");
  switch (payload) {
    case PayloadVariant::kValueChanged:
    case PayloadVariant::kIgnoredChanged: {
      auto c = ChangeLeaf(*doc, ignored, key, payload == PayloadVariant::kIgnoredChanged);
      if (!c.ok()) return c.status();
      request.body = doc->dump();
      return c;
    }
    case PayloadVariant::kFieldRemoved: {
      auto c = RemoveField(*doc, ignored, key);
      if (!c.ok()) return c.status();
      request.body = doc->dump();
      return c;
    }
    case PayloadVariant::kLarge:
      return Grow(request, *doc);
    case PayloadVariant::kSpelling:
    case PayloadVariant::kSpellingTrailingSlash:
    case PayloadVariant::kSpellingCase:
    case PayloadVariant::kSpellingQueryOrder:
      return Respelled(request, payload);
    default:
      break;
  }
  if (doc && (all || payload == PayloadVariant::kReordered || payload == PayloadVariant::kRespaced)) {
    bool reordered = false;
    ojson out = *doc;
    if (all || payload == PayloadVariant::kReordered) {
      out = Reversed(*doc, reordered);
      if (reordered) changes.push_back("JSON members in reverse order");
    }
    if (all || payload == PayloadVariant::kRespaced) {
      request.body = out.dump(2) + "\n";
      changes.push_back("JSON indented, final newline");
    } else if (reordered) {
      request.body = out.dump();
    }
  }
  if (all || payload == PayloadVariant::kHeaderCase) HeaderCase(request, changes);
  if (all || payload == PayloadVariant::kExtraHeader) {
    request.headers.emplace_back("X-Idemproof-Trace", fresh);
    changes.push_back("extra header X-Idemproof-Trace");
  }
  if (all || payload == PayloadVariant::kQueryReordered) QueryReordered(request, changes);
  return changes;
}

}  // namespace idemproof::runtime
