#include "oracles/swallowed_answers.h"
#include "model/history_events.h"

#include <algorithm>

#include "base/header_list.h"

namespace idemproof::oracles {

namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return !tail.empty() && s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string UrlOf(const HistoryEvent& e) {
  auto r = e.value.find("request");
  if (r == e.value.end() || !r->is_object()) return "";
  return r->value("url", "");
}

// A target without a key header reads its key where the templates put it
// (body, path, a header of its own): the client key found in the proxied
// request's text. Keys are unique per run; the longest match wins, as one
// key may be a prefix of another ("...-k1", "...-k10").
std::string KeyCarriedBy(const nlohmann::json& request, const std::vector<Operation>& ops) {
  std::string text = request.value("target", "") + "\n" + request.value("body", "");
  for (const auto& [name, value] : HeadersFromJson(request.value("headers", nlohmann::json()))) text += "\n" + value;
  std::string key;
  for (const auto& op : ops) {
    const std::string& k = op.invoke->key;
    if (k.size() > key.size() && text.find(k) != std::string::npos) key = k;
  }
  return key;
}

}  // namespace

std::vector<SwallowedAnswer> SwallowedAnswers(const History& history, const IdempotencyContract& contract) {
  std::vector<SwallowedAnswer> out;
  const auto ops = RequestOperations(history);
  for (const auto& e : history.events()) {
    if (e.process != event_process::kProxy || e.f != event_f::kFault || !e.value.is_object()) continue;
    if (e.value.value("phase", "") != "injected") continue;
    const auto upstream = e.value.find("upstream");
    if (upstream == e.value.end() || !upstream->is_array() || upstream->empty()) continue;
    const auto request = e.value.find("request");
    if (request == e.value.end() || !request->is_object()) continue;
    std::string key;
    if (!contract.key_header.empty()) {
      for (const auto& [name, value] : HeadersFromJson(request->value("headers", nlohmann::json()))) {
        if (equals_ignoring_case(name, contract.key_header)) key = value;
      }
    } else {
      key = KeyCarriedBy(*request, ops);
    }
    if (key.empty()) continue;  // nothing to attribute it to
    const std::string target = request->value("target", "");
    const HistoryEvent* owner = nullptr;
    for (const auto& op : ops) {
      if (op.invoke->key != key) continue;
      if (owner == nullptr || (EndsWith(UrlOf(*op.invoke), target) && !EndsWith(UrlOf(*owner), target)))
        owner = op.invoke;
    }
    for (const auto& a : *upstream) {
      if (!a.is_object() || !a.contains("status") || !a["status"].is_number_integer()) continue;
      SwallowedAnswer s;
      s.key = key;
      if (owner != nullptr) {
        s.action = owner->action;
        s.biz = owner->biz;
      }
      s.answer.status = a["status"].get<int>();
      s.answer.headers = HeadersFromJson(a.value("headers", nlohmann::json()));
      s.answer.body = a.value("body", "");
      s.at_ns = a.contains("at_ns") && a["at_ns"].is_number_integer() ? a["at_ns"].get<std::int64_t>() : e.time_ns;
      s.event_index = e.index;
      s.fault = e.value.value("fault", "");
      out.push_back(std::move(s));
    }
  }
  return out;
}

nlohmann::json SwallowedJson(const SwallowedAnswer& s) {
  nlohmann::json j = AnswerEvidenceJson(s.answer);
  j["swallowed_by"] = s.fault;
  j["proxy_event"] = s.event_index;
  j["at_ns"] = s.at_ns;
  j["key"] = s.key;
  return j;
}

}  // namespace idemproof::oracles
