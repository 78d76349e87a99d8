#include "model/answer_diff.h"

namespace idemproof {

bool BodiesEqual(const std::string& a, const std::string& b, const std::vector<JsonPath>& volatile_paths) {
  nlohmann::json ja = nlohmann::json::parse(a, nullptr, false);
  nlohmann::json jb = nlohmann::json::parse(b, nullptr, false);
  if (ja.is_discarded() || jb.is_discarded()) return a == b;
  return WithoutPaths(std::move(ja), volatile_paths) == WithoutPaths(std::move(jb), volatile_paths);
}

std::vector<std::string> AnswerDifferences(const HttpAnswer& first, const HttpAnswer& later,
                                           const std::vector<JsonPath>& volatile_paths,
                                           const std::vector<std::string>& compare_headers) {
  std::vector<std::string> diffs;
  if (first.status != later.status)
    diffs.push_back("status " + std::to_string(later.status) + " != " + std::to_string(first.status));
  // A truncated body cannot be compared; the oracles say unknown for it
  // (OracleSignature::compares_bodies), never "differs" nor "equal".
  if (!first.truncated && !later.truncated && !BodiesEqual(first.body, later.body, volatile_paths))
    diffs.push_back("body differs");
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
  std::string body = answer.body;
  for (char& c : body)
    if (c == '\n' || c == '\r') c = ' ';
  if (body.size() > max_body) body = body.substr(0, max_body) + "...";
  return std::to_string(answer.status) + (body.empty() ? "" : " " + body);
}

}  // namespace idemproof
