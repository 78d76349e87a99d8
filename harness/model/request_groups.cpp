#include "model/request_groups.h"

#include "model/payload.h"
#include "model/target/description.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "base/header_list.h"
#include "base/http_message.h"

namespace idemproof {

const char* AnswerClassName(AnswerClass c) {
  switch (c) {
    case AnswerClass::kNoAnswer: return "no answer";
    case AnswerClass::kSuccess: return "success";
    case AnswerClass::kInProgress: return "in progress";
    case AnswerClass::kMismatch: return "mismatch";
    case AnswerClass::kMissingKey: return "missing key";
    case AnswerClass::kRetryable: return "retryable";
    case AnswerClass::kOtherFinal: return "final";
  }
  return "?";
}

AnswerClass Classify(const Operation& op, const IdempotencyContract& contract) {
  auto a = op.answer();
  if (!a) return AnswerClass::kNoAnswer;
  if (a->is_2xx()) return AnswerClass::kSuccess;
  if (contract.IsInProgress(a->status)) return AnswerClass::kInProgress;
  if (contract.IsMismatch(a->status)) return AnswerClass::kMismatch;
  if (!contract.key_optional && a->status == contract.missing_key) return AnswerClass::kMissingKey;
  if (contract.IsRetryable(a->status)) return AnswerClass::kRetryable;
  return AnswerClass::kOtherFinal;
}

bool IsTerminal(AnswerClass c) { return c == AnswerClass::kSuccess || c == AnswerClass::kOtherFinal; }

const Operation* FirstTerminal(const RequestGroup& group, const IdempotencyContract& contract) {
  // With a marker, the unmarked answer is the execution, even when a replay
  // (e.g. an empty success) completed before it.
  const Operation* first = nullptr;
  const Operation* first_marked = nullptr;
  for (const auto& op : group.ops) {
    if (!IsTerminal(Classify(op, contract))) continue;
    const Operation*& slot = IsReplayMarked(*op.answer(), contract) ? first_marked : first;
    if (slot == nullptr || op.complete_ns() < slot->complete_ns()) slot = &op;
  }
  return first != nullptr ? first : first_marked;
}

const Operation* EarliestTerminal(const RequestGroup& group, const IdempotencyContract& contract) {
  const Operation* first = nullptr;
  for (const auto& op : group.ops) {
    if (IsTerminal(Classify(op, contract)) && (first == nullptr || op.complete_ns() < first->complete_ns()))
      first = &op;
  }
  return first;
}

std::vector<const Operation*> RetriesAfter(const RequestGroup& group, const Operation& first,
                                           std::optional<Duration> window) {
  std::vector<const Operation*> out;
  for (const auto& op : group.ops) {
    if (op.invoke == first.invoke || op.invoke_ns() < first.complete_ns()) continue;
    if (window && op.invoke_ns() - first.complete_ns() > window->count()) continue;
    out.push_back(&op);
  }
  return out;
}

std::string CallerOf(const HistoryEvent& invoke) {
  if (!invoke.value.is_object()) return "";
  auto it = invoke.value.find("caller");
  return it != invoke.value.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<RequestGroup> GroupRequestsByKey(const History& history, const std::vector<std::string>& actions) {
  std::vector<RequestGroup> groups;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> where;
  for (const auto& op : RequestOperations(history)) {
    const HistoryEvent& e = *op.invoke;
    if (e.key.empty()) continue;
    if (!actions.empty() && std::find(actions.begin(), actions.end(), e.action) == actions.end()) continue;
    // An equal form of the default request is that request; a changed form another.
    std::string payload = PayloadClass(e.payload);
    const std::string caller = CallerOf(e);
    auto id = std::make_tuple(e.action, e.key, payload, caller);
    auto it = where.find(id);
    if (it == where.end()) {
      it = where.emplace(id, groups.size()).first;
      groups.push_back(RequestGroup{e.action, e.key, payload, e.biz, {}, caller});
    }
    groups[it->second].ops.push_back(op);
  }
  return groups;
}

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A JSON document's leaves as "$.a.b[0]" -> their JSON text; an empty
// object or array is a leaf too.
void Leaves(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) Leaves(it.value(), path + "." + it.key(), out);
  } else if (j.is_array() && !j.empty()) {
    for (std::size_t i = 0; i < j.size(); ++i) Leaves(j[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out[path] = j.dump();
  }
}

bool Fresh(const std::string& templ) { return templ.find("{{uuid}}") != std::string::npos; }

// What the target file declares fresh per request or irrelevant to the key,
// for one action: header names (lower case) and JSON leaf paths (prefixes).
struct Unjudged {
  std::set<std::string> headers;
  std::vector<std::string> leaves;

  bool Leaf(const std::string& path) const {
    for (const auto& p : leaves) {
      if (path == p || (path.rfind(p, 0) == 0 && (path[p.size()] == '.' || path[p.size()] == '['))) return true;
    }
    return false;
  }
};

void FreshHeaders(const HeaderList& headers, std::set<std::string>& out) {
  for (const auto& [name, value] : headers)
    if (Fresh(value)) out.insert(Lower(name));
}

void FreshLeaves(const std::optional<nlohmann::json>& json, std::vector<std::string>& out) {
  if (!json) return;
  std::map<std::string, std::string> leaves;
  Leaves(*json, "$", leaves);
  for (const auto& [path, text] : leaves)
    if (Fresh(text)) out.push_back(path);
}

Unjudged UnjudgedFor(const std::string& action_name, const TargetDescription& target) {
  Unjudged u;
  // traceparent: the harness's own span per request (clients/trace_context.h).
  u.headers = {"content-length", "traceparent", Lower(target.idempotency.key_header)};
  FreshHeaders(target.headers, u.headers);
  for (const auto& c : target.callers) FreshHeaders(c.headers, u.headers);
  const ActionDescription* action = target.FindAction(action_name);
  if (action == nullptr) return u;
  FreshHeaders(action->request.headers, u.headers);
  FreshLeaves(action->request.json, u.leaves);
  if (action->other_payload) FreshLeaves(action->other_payload->json, u.leaves);
  for (const auto& [name, v] : action->variants) {
    FreshHeaders(v.headers, u.headers);
    FreshLeaves(v.json, u.leaves);
  }
  for (const auto& p : action->fingerprint_ignores) u.leaves.push_back(p.text());
  return u;
}

// One request as its parts: "method", "path", "query NAME", "header name",
// "body $.a" (or "body") -> value.
std::map<std::string, std::string> Parts(const HistoryEvent& invoke, const Unjudged& unjudged) {
  std::map<std::string, std::string> out;
  if (!invoke.value.is_object() || !invoke.value.contains("request")) return out;
  const nlohmann::json& r = invoke.value["request"];
  out["method"] = r.value("method", std::string());
  const std::string url = OriginForm(r.value("url", std::string()));
  const auto q = url.find('?');
  out["path"] = url.substr(0, q);
  if (q != std::string::npos) {
    std::map<std::string, std::string> params;
    std::size_t at = q + 1;
    while (at <= url.size()) {
      std::size_t amp = url.find('&', at);
      if (amp == std::string::npos) amp = url.size();
      const std::string pair = url.substr(at, amp - at);
      if (!pair.empty()) {
        const auto eq = pair.find('=');
        std::string& v = params[pair.substr(0, eq)];
        v += (v.empty() ? "" : ",") + (eq == std::string::npos ? std::string() : pair.substr(eq + 1));
      }
      at = amp + 1;
    }
    for (const auto& [name, value] : params) out["query " + name] = value;
  }
  // The header a payload form added on purpose (extra_header) is its rewrite.
  std::set<std::string> added;
  if (invoke.value.contains("rewrites") && invoke.value["rewrites"].is_array())
    for (const auto& w : invoke.value["rewrites"])
      if (w.is_string() && w.get<std::string>().rfind("extra header ", 0) == 0)
        added.insert(Lower(w.get<std::string>().substr(13)));
  if (r.contains("headers") && r["headers"].is_array()) {
    for (const auto& h : r["headers"]) {
      if (!h.is_array() || h.size() != 2 || !h[0].is_string() || !h[1].is_string()) continue;
      const std::string name = Lower(h[0].get<std::string>());
      if (unjudged.headers.count(name) || added.count(name)) continue;
      std::string& v = out["header " + name];
      v += (v.empty() ? "" : ", ") + h[1].get<std::string>();
    }
  }
  const std::string body = r.value("body", std::string());
  if (!body.empty()) {
    const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
    if (doc.is_discarded()) {
      out["body"] = body;
    } else {
      std::map<std::string, std::string> leaves;
      Leaves(doc, "$", leaves);
      for (const auto& [path, text] : leaves)
        if (!unjudged.Leaf(path)) out["body " + path] = text;
    }
  }
  return out;
}

std::string Cut(const std::string& s, std::size_t n = 60) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// "#3", "#3, #5", "#3, #5, #7 and 4 more"
std::string Indices(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < 3; ++i) out += (i ? ", #" : "#") + std::to_string(ids[i]);
  if (ids.size() > 3) out += " and " + std::to_string(ids.size() - 3) + " more";
  return out;
}

// The differing parts of `ops` (one form), one line each.
void Compare(const std::vector<const Operation*>& ops, const Unjudged& unjudged, std::vector<std::string>& out) {
  if (ops.size() < 2) return;
  std::vector<std::map<std::string, std::string>> parts;
  std::set<std::string> names;
  for (const Operation* op : ops) {
    parts.push_back(Parts(*op->invoke, unjudged));
    for (const auto& [name, v] : parts.back()) names.insert(name);
  }
  for (const auto& name : names) {
    // value (nullopt = absent) -> the requests with it, in first-seen order
    std::vector<std::pair<std::optional<std::string>, std::vector<std::int64_t>>> values;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      auto it = parts[i].find(name);
      std::optional<std::string> v;
      if (it != parts[i].end()) v = it->second;
      auto slot = std::find_if(values.begin(), values.end(), [&](const auto& x) { return x.first == v; });
      if (slot == values.end()) slot = values.insert(values.end(), {v, {}});
      slot->second.push_back(ops[i]->invoke->index);
    }
    if (values.size() < 2) continue;
    const bool named = name != "method" && name != "path" && name != "body";
    const std::string sep = name.rfind("body ", 0) == 0 ? "=" : name.rfind("header ", 0) == 0 ? ": " : "=";
    std::string line;
    for (const auto& [v, ids] : values) {
      const bool one = ids.size() == 1;
      std::string what = v ? Cut(*v) : std::string("none");
      if (line.empty() && v) what = name + (named ? sep : " ") + what;
      line += (line.empty() ? "" : ", ") + Indices(ids) + (one ? " has " : " have ") + what;
    }
    if (!values.front().first) line = name + ": " + line;
    out.push_back(line);
  }
}

}  // namespace

std::vector<std::string> RequestDifferences(const RequestGroup& group, const TargetDescription& target) {
  const Unjudged unjudged = UnjudgedFor(group.action, target);
  std::vector<std::string> out;
  if (group.payload == "default") {
    std::vector<const Operation*> ops;
    for (const auto& op : group.ops) ops.push_back(&op);
    Compare(ops, unjudged, out);
    return out;
  }
  // Changed forms differ from each other on purpose: each with its own kind.
  std::map<std::string, std::vector<const Operation*>> by_form;
  for (const auto& op : group.ops) by_form[op.invoke->payload].push_back(&op);
  for (const auto& [form, ops] : by_form) Compare(ops, unjudged, out);
  return out;
}

std::string RequestDifferencesText(const RequestGroup& group, const TargetDescription& target) {
  const auto diffs = RequestDifferences(group, target);
  if (diffs.empty()) return "";
  std::string out = "requests of key " + group.key + " (" + group.action +
                    (group.payload == "default" ? "" : ", payload " + group.payload) + ") differ: ";
  for (std::size_t i = 0; i < diffs.size() && i < 3; ++i) out += (i ? "; " : "") + diffs[i];
  if (diffs.size() > 3) out += "; and " + std::to_string(diffs.size() - 3) + " more difference(s)";
  return out;
}

}  // namespace idemproof
