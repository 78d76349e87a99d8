#include "model/answer_diff.h"

#include <algorithm>

namespace idemproof {
namespace {

constexpr std::size_t kValueChars = 60;  // a differing value, as evidence quotes it

std::string ValueText(const nlohmann::json* v) {
  if (v == nullptr) return "<absent>";
  std::string text = v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > kValueChars ? text.substr(0, kValueChars) + "..." : text;
}

// The first place `a` and `b` differ, depth first (members in name order,
// then elements in index order): its path segments and both values (null
// pointer: absent on that side). False when equal.
bool FirstDifference(const nlohmann::json& a, const nlohmann::json& b, std::vector<JsonPath::Segment>& path,
                     const nlohmann::json*& at_a, const nlohmann::json*& at_b) {
  if (a == b) return false;
  using Segment = JsonPath::Segment;
  if (a.is_object() && b.is_object()) {
    // Both maps iterate in name order: a merge walk over the union of names.
    auto i = a.begin(), j = b.begin();
    while (i != a.end() || j != b.end()) {
      if (j == b.end() || (i != a.end() && i.key() < j.key())) {
        path.push_back({Segment::Kind::kName, i.key(), 0});
        at_a = &i.value();
        at_b = nullptr;
        return true;
      }
      if (i == a.end() || j.key() < i.key()) {
        path.push_back({Segment::Kind::kName, j.key(), 0});
        at_a = nullptr;
        at_b = &j.value();
        return true;
      }
      path.push_back({Segment::Kind::kName, i.key(), 0});
      if (FirstDifference(i.value(), j.value(), path, at_a, at_b)) return true;
      path.pop_back();
      ++i;
      ++j;
    }
    return false;
  }
  if (a.is_array() && b.is_array()) {
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t k = 0; k < common; ++k) {
      path.push_back({Segment::Kind::kIndex, "", k});
      if (FirstDifference(a[k], b[k], path, at_a, at_b)) return true;
      path.pop_back();
    }
    path.push_back({Segment::Kind::kIndex, "", common});
    at_a = common < a.size() ? &a[common] : nullptr;
    at_b = common < b.size() ? &b[common] : nullptr;
    return true;
  }
  at_a = &a;
  at_b = &b;
  return true;
}

// Where the value at `path` begins in `raw` (a JSON text), found member name
// by member name from the outside in; an index or a name not found leaves
// the place where the search stood. An approximation for cutting evidence.
std::size_t OffsetOf(const std::string& raw, const std::vector<JsonPath::Segment>& path) {
  std::size_t pos = 0;
  for (const auto& s : path) {
    if (s.kind != JsonPath::Segment::Kind::kName) continue;
    const std::string quoted = nlohmann::json(s.name).dump();
    std::size_t from = pos;
    bool found = false;
    while (!found) {
      const std::size_t hit = raw.find(quoted, from);
      if (hit == std::string::npos) break;
      std::size_t k = hit + quoted.size();
      while (k < raw.size() && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\n' || raw[k] == '\r')) ++k;
      if (k < raw.size() && raw[k] == ':') {
        pos = hit;
        found = true;
      } else {
        from = hit + 1;
      }
    }
    if (!found) break;
  }
  return pos;
}

// Never start or end a cut inside a UTF-8 character.
std::size_t CharStart(const std::string& s, std::size_t i) {
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

bool BodiesEqual(const std::string& a, const std::string& b, const std::vector<JsonPath>& volatile_paths) {
  nlohmann::json ja = nlohmann::json::parse(a, nullptr, false);
  nlohmann::json jb = nlohmann::json::parse(b, nullptr, false);
  if (ja.is_discarded() || jb.is_discarded()) return a == b;
  return WithoutPaths(std::move(ja), volatile_paths) == WithoutPaths(std::move(jb), volatile_paths);
}

std::string BodyDifference::Text() const {
  if (path.empty()) return "byte " + std::to_string(later_at);
  return path + ": " + first + " → " + later;
}

std::optional<BodyDifference> FirstBodyDifference(const std::string& first, const std::string& later,
                                                  const std::vector<JsonPath>& volatile_paths) {
  nlohmann::json ja = nlohmann::json::parse(first, nullptr, false);
  nlohmann::json jb = nlohmann::json::parse(later, nullptr, false);
  BodyDifference d;
  if (ja.is_discarded() || jb.is_discarded()) {
    if (first == later) return std::nullopt;
    const auto mismatch = std::mismatch(first.begin(), first.end(), later.begin(), later.end());
    d.first_at = d.later_at = static_cast<std::size_t>(mismatch.first - first.begin());
    return d;
  }
  ja = WithoutPaths(std::move(ja), volatile_paths);
  jb = WithoutPaths(std::move(jb), volatile_paths);
  std::vector<JsonPath::Segment> path;
  const nlohmann::json* at_a = nullptr;
  const nlohmann::json* at_b = nullptr;
  if (!FirstDifference(ja, jb, path, at_a, at_b)) return std::nullopt;
  d.path = "$";
  for (const auto& s : path) d.path += SegmentText(s);
  d.first = ValueText(at_a);
  d.later = ValueText(at_b);
  d.first_at = OffsetOf(first, path);
  d.later_at = OffsetOf(later, path);
  return d;
}

std::vector<std::string> AnswerDifferences(const HttpAnswer& first, const HttpAnswer& later,
                                           const std::vector<JsonPath>& volatile_paths,
                                           const std::vector<std::string>& compare_headers) {
  std::vector<std::string> diffs;
  if (first.status != later.status)
    diffs.push_back("status " + std::to_string(later.status) + " != " + std::to_string(first.status));
  // A truncated body cannot be compared; the oracles say unknown for it
  // (OracleSignature::compares_bodies), never "differs" nor "equal".
  if (!first.truncated && !later.truncated) {
    if (auto d = FirstBodyDifference(first.body, later.body, volatile_paths)) diffs.push_back("body differs at " + d->Text());
  }
  // Every value of a repeated header (two Set-Cookie), in order.
  auto text = [](const std::vector<std::string>& values) {
    if (values.empty()) return std::string("<absent>");
    std::string out;
    for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
    return out;
  };
  for (const auto& name : compare_headers) {
    auto a = first.HeaderValues(name);
    auto b = later.HeaderValues(name);
    if (a != b) diffs.push_back("header " + name + " '" + text(b) + "' != '" + text(a) + "'");
  }
  return diffs;
}

std::string AnswerSummary(const HttpAnswer& answer, std::size_t max_body) {
  return AnswerSummaryAround(answer, 0, max_body);
}

std::string AnswerSummaryAround(const HttpAnswer& answer, std::size_t at, std::size_t max_body) {
  std::string body = answer.body;
  for (char& c : body)
    if (c == '\n' || c == '\r') c = ' ';
  if (body.size() > max_body) {
    // A third of the window before the difference, the rest after it.
    std::size_t start = at > max_body / 3 ? at - max_body / 3 : 0;
    start = CharStart(body, std::min(start, body.size() - max_body));
    const std::size_t end = CharStart(body, start + max_body);
    body = (start > 0 ? "..." : "") + body.substr(start, end - start) + (end < body.size() ? "..." : "");
  }
  return std::to_string(answer.status) + (body.empty() ? "" : " " + body);
}

ComparedSummaries SummariesAroundDifference(const HttpAnswer& first, const HttpAnswer& later,
                                            const std::vector<JsonPath>& volatile_paths, std::size_t max_body) {
  std::optional<BodyDifference> d;
  if (!first.truncated && !later.truncated) d = FirstBodyDifference(first.body, later.body, volatile_paths);
  if (!d) return {AnswerSummary(first, max_body), AnswerSummary(later, max_body)};
  return {AnswerSummaryAround(first, d->first_at, max_body), AnswerSummaryAround(later, d->later_at, max_body)};
}

}  // namespace idemproof
