#include "model/history_events.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace idemproof {

bool IsTargetControl(const HistoryEvent& e) {
  return e.process == event_process::kNemesis &&
         (e.f == event_f::kKill || e.f == event_f::kStop || e.f == event_f::kStart || e.f == event_f::kRestart);
}

bool IsTargetDown(const HistoryEvent& e) {
  return e.process == event_process::kNemesis && (e.f == event_f::kKill || e.f == event_f::kStop);
}

nlohmann::json RequestJson(const RecordedRequest& r) {
  return {{"method", r.method}, {"url", r.url}, {"headers", HeadersJson(r.headers)}, {"body", r.body}};
}

nlohmann::json ResponseJson(const RecordedExchange& x) {
  if (!x.body_truncated) return {{"status", x.status}, {"headers", HeadersJson(x.headers)}, {"body", x.body}};
  // A cut body is never compared (the oracles say unknown for it): its head
  // is all the history keeps, however much of it the client read, so a
  // burst of endless answers writes a few KiB each, not its share of max_kept.
  std::size_t head = std::min(x.body.size(), kTruncatedBodyHead);
  if (head < x.body.size())
    while (head > 0 && (static_cast<unsigned char>(x.body[head]) & 0xC0) == 0x80) --head;  // whole UTF-8 sequences
  const std::uint64_t size = std::max<std::uint64_t>(x.body_size, x.body.size());
  nlohmann::json out = {{"status", x.status}, {"headers", HeadersJson(x.headers)}, {"body", x.body.substr(0, head)}};
  out["truncated"] = {{"kept", head}, {"size", size}, {"exact", x.body_size_exact}};
  if (x.body_cut_by_kept) out["truncated"]["by"] = "max_kept";
  return out;
}

namespace {

HistoryEvent Event(const char* process, const char* f, EventType type, int step, nlohmann::json value) {
  HistoryEvent e;
  e.process = process;
  e.f = f;
  e.type = type;
  e.step = step;
  e.value = std::move(value);
  return e;
}

HistoryEvent About(const RequestSubject& s, const std::string& process, const std::string& f, int step) {
  HistoryEvent e;
  e.process = process;
  e.f = f;
  e.action = s.action;
  e.key = s.key;
  e.key_name = s.key_name;
  e.biz = s.biz;
  e.biz_name = s.biz_name;
  e.payload = s.payload;
  e.step = step;
  return e;
}

}  // namespace

HistoryEvent RequestInvoke(const std::string& process, const std::string& f, const RequestSubject& subject,
                           const RecordedRequest& request, int step, const std::string& variant) {
  HistoryEvent e = About(subject, process, f, step);
  e.value = {{"request", RequestJson(request)}};
  if (!variant.empty()) e.value["variant"] = variant;
  return e;
}

HistoryEvent RequestCompletion(const HistoryEvent& invoke, const RecordedExchange& x) {
  HistoryEvent e = invoke;
  e.type = x.type;
  e.value = {{"connection_reused", x.connection_reused}};
  if (invoke.value.contains("variant")) e.value["variant"] = invoke.value["variant"];
  // libcurl resent it on a new connection: the target may have seen it twice.
  if (x.send_attempts > 1) e.value["send_attempts"] = x.send_attempts;
  if (x.type == EventType::kOk) {
    e.value["response"] = ResponseJson(x);
  } else {
    e.value["error"] = x.error;
  }
  return e;
}

HistoryEvent CompletionOf(const HistoryEvent& invoke, EventType type) {
  HistoryEvent e = invoke;
  e.type = type;
  return e;
}

HistoryEvent ProbeInvoke(const std::string& probe, const std::string& label, int step) {
  return Event(event_process::kProbe, event_f::kProbe, EventType::kInvoke, step,
               {{"probe", probe}, {"label", label}});
}

HistoryEvent RecordsProbeInvoke(const std::string& action, const std::string& biz, const std::string& biz_name) {
  HistoryEvent e = ProbeInvoke("records", "records:" + action + ":" + biz_name, -1);
  e.action = action;
  e.biz = biz;
  e.biz_name = biz_name;
  return e;
}

HistoryEvent HookInvoke(const std::string& hook, int step) {
  return Event(event_process::kNemesis, event_f::kHook, EventType::kInvoke, step, {{"hook", hook}});
}

HistoryEvent FaultInvoke(const std::string& fault, bool start, int step) {
  return Event(event_process::kNemesis, event_f::kFault, EventType::kInvoke, step,
               {{"fault", fault}, {"phase", start ? "start" : "heal"}});
}

HistoryEvent InjectorEvent(nlohmann::json event) {
  return Event(event_process::kProxy, event_f::kFault, EventType::kInfo, -1, std::move(event));
}

HistoryEvent EgressEvent(nlohmann::json entry) {
  return Event(event_process::kEgress, event_f::kEgress, EventType::kInfo, -1, std::move(entry));
}

HistoryEvent ProcessInvoke(const std::string& f, int step, nlohmann::json value) {
  HistoryEvent e = Event(event_process::kNemesis, "", EventType::kInvoke, step, std::move(value));
  e.f = f;
  return e;
}

HistoryEvent Note(int step, const std::string& text) { return NoteWith(step, {{"note", text}}); }

HistoryEvent NoteWith(int step, nlohmann::json value) {
  return Event(event_process::kHarness, event_f::kNote, EventType::kInfo, step, std::move(value));
}

HistoryEvent TargetExited(int step, int pid, const std::string& why) {
  return Event(event_process::kNemesis, event_f::kTargetExited, EventType::kInfo, step,
               {{"pid", pid}, {"why", why}});
}

HistoryEvent WaitEvent(int step, const std::string& duration, bool past_window) {
  nlohmann::json value = {{"duration", duration}};
  if (past_window) value["past_window"] = true;
  return Event(event_process::kHarness, event_f::kWait, EventType::kOk, step, std::move(value));
}

HistoryEvent BatchInvoke(const RecordedRequest& request, const nlohmann::json& batch, int step) {
  return Event(event_process::kBatch, event_f::kBatch, EventType::kInvoke, step,
               {{"request", RequestJson(request)}, {"batch", batch}});
}

HistoryEvent BatchCompletion(const HistoryEvent& invoke, const RecordedExchange& exchange) {
  HistoryEvent e = RequestCompletion(invoke, exchange);
  e.value["batch"] = invoke.value.at("batch");
  return e;
}

HistoryEvent BatchResultInvoke(const std::string& job, const std::string& job_name, std::int64_t after, int step) {
  return Event(event_process::kProbe, event_f::kBatchResult, EventType::kInvoke, step,
               {{"batch", {{"job", job}, {"job_name", job_name}}}, {"after", after}});
}

HistoryEvent DeliverInvoke(const RequestSubject& subject, int copy, const RecordedRequest& request,
                           const nlohmann::json& delivery, int step) {
  HistoryEvent e = About(subject, event_process::Deliverer(copy), event_f::kDeliver, step);
  e.value = {{"request", RequestJson(request)}, {"delivery", delivery}};
  return e;
}

HistoryEvent DeliverCompletion(const HistoryEvent& invoke, const RecordedExchange& exchange, bool ack_lost) {
  HistoryEvent e = RequestCompletion(invoke, exchange);
  e.value["delivery"] = invoke.value.at("delivery");
  if (ack_lost) e.value["ack_lost"] = true;
  return e;
}

HistoryEvent PublishInvoke(const RequestSubject& subject, const nlohmann::json& entry, const std::string& stream,
                           int copy, int step) {
  HistoryEvent e = About(subject, event_process::kPublisher, event_f::kPublish, step);
  e.value = {{"entry", entry}, {"stream", stream}, {"copy", copy}};
  return e;
}

HistoryEvent MessageNote(const RequestSubject& subject, int step, nlohmann::json value) {
  HistoryEvent e = About(subject, event_process::kHarness, event_f::kNote, step);
  e.type = EventType::kInfo;
  e.value = std::move(value);
  return e;
}

namespace {
std::string TextMember(const nlohmann::json& j, const char* member) {
  if (!j.is_object()) return "";
  const auto it = j.find(member);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::optional<double> NumberMember(const nlohmann::json& j, const char* member) {
  const auto it = j.find(member);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
}  // namespace

std::string EventText(const HistoryEvent& e, const char* member) { return TextMember(e.value, member); }

RequestLine RequestLineOf(const HistoryEvent& invoke) {
  if (!invoke.value.is_object()) return {};
  const auto it = invoke.value.find("request");
  if (it == invoke.value.end()) return {};
  return {TextMember(*it, "method"), TextMember(*it, "url")};
}

std::optional<std::string> ProbeCountText(const HistoryEvent& completion) {
  if (!completion.value.is_object()) return std::nullopt;
  const auto it = completion.value.find("count");
  if (it == completion.value.end() || !it->is_number()) return std::nullopt;
  return it->dump();
}

std::optional<BurstSpreadNote> BurstSpreadOf(const HistoryEvent& note) {
  if (note.f != event_f::kNote || !note.value.is_object()) return std::nullopt;
  const auto it = note.value.find("burst");
  if (it == note.value.end() || !it->is_object()) return std::nullopt;
  const nlohmann::json& b = *it;
  BurstSpreadNote out;
  out.step = b.value("step", note.step);
  out.n = b.value("n", 0);
  out.mode = TextMember(b, "mode");
  out.arrival_header = TextMember(b, "arrival_header");
  out.harness_spread_us = NumberMember(b, "harness_spread_us");
  out.target_spread_us = NumberMember(b, "target_spread_us");
  return out;
}

}  // namespace idemproof
