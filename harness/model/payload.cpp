#include "model/payload.h"

#include <array>
#include <utility>

namespace idemproof {

namespace {
constexpr std::array<std::pair<PayloadVariant, const char*>, 16> kNames{{
    {PayloadVariant::kDefault, "default"},
    {PayloadVariant::kOther, "other"},
    {PayloadVariant::kReordered, "reordered"},
    {PayloadVariant::kRespaced, "respaced"},
    {PayloadVariant::kHeaderCase, "header_case"},
    {PayloadVariant::kExtraHeader, "extra_header"},
    {PayloadVariant::kQueryReordered, "query_reordered"},
    {PayloadVariant::kIgnoredChanged, "ignored_changed"},
    {PayloadVariant::kEquivalent, "equivalent"},
    {PayloadVariant::kValueChanged, "value_changed"},
    {PayloadVariant::kFieldRemoved, "field_removed"},
    {PayloadVariant::kLarge, "large"},
    {PayloadVariant::kSpelling, "spelling"},
    {PayloadVariant::kSpellingTrailingSlash, "spelling_trailing_slash"},
    {PayloadVariant::kSpellingCase, "spelling_case"},
    {PayloadVariant::kSpellingQueryOrder, "spelling_query_order"},
}};
}  // namespace

const char* PayloadName(PayloadVariant payload) {
  for (const auto& [p, name] : kNames)
    if (p == payload) return name;
  return "default";
}

std::optional<PayloadVariant> ParsePayloadName(const std::string& name) {
  for (const auto& [p, n] : kNames)
    if (name == n) return p;
  return std::nullopt;
}

const std::vector<std::string>& PayloadNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : kNames) out.emplace_back(entry.second);
    return out;
  }();
  return names;
}

bool IsEqualForm(PayloadVariant payload) {
  switch (payload) {
    case PayloadVariant::kReordered:
    case PayloadVariant::kRespaced:
    case PayloadVariant::kHeaderCase:
    case PayloadVariant::kExtraHeader:
    case PayloadVariant::kQueryReordered:
    case PayloadVariant::kIgnoredChanged:
    case PayloadVariant::kEquivalent:
      return true;
    default:
      return false;
  }
}

bool IsChangedForm(PayloadVariant payload) {
  return payload == PayloadVariant::kValueChanged || payload == PayloadVariant::kFieldRemoved;
}

bool IsSpellingForm(PayloadVariant payload) {
  return payload == PayloadVariant::kSpelling || payload == PayloadVariant::kSpellingTrailingSlash ||
         payload == PayloadVariant::kSpellingCase || payload == PayloadVariant::kSpellingQueryOrder;
}

bool NeedsJsonBody(PayloadVariant payload) {
  return IsChangedForm(payload) || payload == PayloadVariant::kIgnoredChanged;
}

std::string PayloadClass(const std::string& name) {
  if (name.empty()) return "default";
  auto p = ParsePayloadName(name);
  if (!p) return name;
  if (*p == PayloadVariant::kDefault || IsEqualForm(*p)) return "default";
  if (*p == PayloadVariant::kLarge) return "large";
  if (IsSpellingForm(*p)) return name;
  // A changed form is a request of its own, neither the default nor `other`.
  if (IsChangedForm(*p)) return name;
  return "other";
}

bool IsOtherRequestClass(const std::string& payload_class) {
  return payload_class == "other" || IsChangedFormName(payload_class);
}

bool IsChangedFormName(const std::string& name) {
  auto p = ParsePayloadName(name);
  return p && IsChangedForm(*p);
}

}  // namespace idemproof
