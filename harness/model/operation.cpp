#include "model/operation.h"
#include "model/history_events.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <nlohmann/json.hpp>

namespace idemproof {

std::optional<std::string> HttpAnswer::Header(const std::string& name) const {
  return find_header(headers, name);
}

std::vector<std::string> HttpAnswer::HeaderValues(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers)
    if (equals_ignoring_case(k, name)) out.push_back(v);
  return out;
}

std::optional<nlohmann::json> HttpAnswer::JsonBody() const {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::optional<HttpAnswer> AnswerFromJson(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("status") || !doc["status"].is_number_integer()) return std::nullopt;
  HttpAnswer a;
  a.status = doc["status"].get<int>();
  if (doc.contains("headers")) a.headers = HeadersFromJson(doc["headers"]);
  if (doc.contains("body") && doc["body"].is_string()) a.body = doc["body"].get<std::string>();
  if (doc.contains("truncated") && doc["truncated"].is_object()) {
    const auto& t = doc["truncated"];
    a.truncated = true;
    a.size = t.value("size", std::uint64_t{0});
    a.size_exact = t.value("exact", false);
    a.cut_by_kept = t.contains("by") && t["by"] == "max_kept";
  }
  return a;
}

nlohmann::json AnswerToJson(const HttpAnswer& a) {
  nlohmann::json out = {{"status", a.status}, {"headers", HeadersJson(a.headers)}, {"body", a.body}};
  if (a.truncated) {
    out["truncated"] = {{"kept", a.body.size()}, {"size", a.size}, {"exact", a.size_exact}};
    if (a.cut_by_kept) out["truncated"]["by"] = "max_kept";
  }
  return out;
}

nlohmann::json AnswerEvidenceJson(const HttpAnswer& a, std::size_t max_quote) {
  if (a.body.size() <= max_quote) return AnswerToJson(a);
  std::size_t cut = max_quote;
  while (cut > 0 && (static_cast<unsigned char>(a.body[cut]) & 0xC0) == 0x80) --cut;
  HttpAnswer quoted;  // not a copy of the whole body
  quoted.status = a.status;
  quoted.headers = a.headers;
  quoted.truncated = a.truncated;
  quoted.size = a.size;
  quoted.size_exact = a.size_exact;
  quoted.cut_by_kept = a.cut_by_kept;
  quoted.body = a.body.substr(0, cut) + "\u2026 " + std::to_string(a.body.size() - cut) + " bytes cut";
  nlohmann::json out = AnswerToJson(quoted);
  if (a.truncated) out["truncated"]["kept"] = a.body.size();  // what the history kept, not the quote
  return out;
}

std::string HttpAnswer::CutBy() const { return cut_by_kept ? "the run's max_kept" : "max_body"; }

std::string HttpAnswer::TruncationNote() const {
  return std::to_string(body.size()) + " of " + (size_exact ? "" : "more than ") + std::to_string(size) +
         " bytes kept";
}

bool Operation::completed_ok() const { return completion != nullptr && completion->type == EventType::kOk; }

bool Operation::never_sent() const { return completion != nullptr && completion->type == EventType::kFail; }

std::optional<HttpAnswer> Operation::answer() const {
  if (!completed_ok() || !completion->value.is_object() || !completion->value.contains("response")) return std::nullopt;
  return AnswerFromJson(completion->value["response"]);
}

std::int64_t Operation::complete_ns() const { return completion ? completion->time_ns : invoke->time_ns; }

std::vector<Operation> PairOperations(const History& history) {
  std::vector<Operation> ops;
  std::map<std::string, std::size_t> open;  // process -> index into ops
  for (const auto& e : history.events()) {
    if (e.type == EventType::kInvoke) {
      open[e.process] = ops.size();
      ops.push_back(Operation{&e, nullptr});
    } else {
      auto it = open.find(e.process);
      if (it != open.end()) {
        ops[it->second].completion = &e;
        open.erase(it);
      }
    }
  }
  return ops;
}

bool RanAlone(const History& history, const std::vector<Operation>& ops, const Operation& op) {
  const std::int64_t from = op.invoke_ns(), to = op.complete_ns();
  for (const auto& other : ops) {
    if (other.invoke == op.invoke || other.invoke->action != op.invoke->action || other.invoke->key != op.invoke->key)
      continue;
    if (other.invoke_ns() <= to && from <= other.complete_ns()) return false;
  }
  for (const auto& e : history.events())
    if (e.process == "proxy" && e.f == "fault" && e.time_ns >= from && e.time_ns <= to) return false;
  return true;
}

std::vector<Operation> RequestOperations(const History& history) {
  std::vector<Operation> out;
  for (const auto& op : PairOperations(history))
    if (op.invoke->is_request()) out.push_back(op);
  return out;
}

bool IsReplayMarked(const HttpAnswer& answer, const IdempotencyContract& contract) {
  if (!contract.replay) return false;
  const ReplayMarker& marker = *contract.replay;
  if (marker.body) {
    const auto doc = answer.JsonBody();
    if (!doc) return false;
    return marker.body->FindText(*doc) == marker.value;
  }
  auto v = answer.Header(marker.header);
  return v && *v == marker.value;
}

std::optional<std::int64_t> RecordCount(const History& history, const std::string& action, const std::string& biz) {
  std::optional<std::int64_t> count;
  for (const auto& e : history.events()) {
    if (e.f != event_f::kProbe || e.type != EventType::kOk || e.action != action || e.biz != biz) continue;
    if (!e.value.is_object() || e.value.value("probe", "") != "records") continue;
    if (e.value.contains("count") && e.value["count"].is_number_integer()) count = e.value["count"].get<std::int64_t>();
  }
  return count;
}

std::optional<nlohmann::json> ProbeValue(const History& history, const std::string& label) {
  std::optional<nlohmann::json> v;
  for (const auto& e : history.events()) {
    if (e.f != event_f::kProbe || e.type != EventType::kOk || !e.value.is_object()) continue;
    if (e.value.value("label", "") == label && e.value.contains("value")) v = e.value["value"];
  }
  return v;
}

}  // namespace idemproof
