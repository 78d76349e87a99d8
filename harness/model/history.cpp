#include "model/history.h"

#include "model/event_names.h"

#include <fstream>

#include <sstream>

namespace idemproof {

const char* EventTypeName(EventType type) {
  switch (type) {
    case EventType::kInvoke: return "invoke";
    case EventType::kOk: return "ok";
    case EventType::kFail: return "fail";
    case EventType::kInfo: return "info";
  }
  return "?";
}

Result<EventType> ParseEventType(const std::string& text) {
  for (auto t : {EventType::kInvoke, EventType::kOk, EventType::kFail, EventType::kInfo}) {
    if (text == EventTypeName(t)) return t;
  }
  return Status::InvalidArgument("unknown event type '" + text + "' (invoke, ok, fail, info)");
}

nlohmann::json HeadersJson(const HeaderList& headers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, value] : headers) out.push_back(nlohmann::json::array({name, value}));
  return out;
}

HeaderList HeadersFromJson(const nlohmann::json& headers) {
  HeaderList out;
  if (headers.is_array()) {
    for (const auto& pair : headers)
      if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string())
        out.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
  } else if (headers.is_object()) {
    for (const auto& [name, value] : headers.items())
      if (value.is_string()) out.emplace_back(name, value.get<std::string>());
  }
  return out;
}

nlohmann::json EventToJson(const HistoryEvent& e) {
  nlohmann::json j = nlohmann::json::object();
  j["index"] = e.index;
  j["process"] = e.process;
  j["type"] = EventTypeName(e.type);
  j["f"] = e.f;
  auto opt = [&](const char* name, const std::string& v) {
    if (!v.empty()) j[name] = v;
  };
  opt("action", e.action);
  opt("key", e.key);
  opt("key_name", e.key_name);
  opt("biz", e.biz);
  opt("biz_name", e.biz_name);
  opt("payload", e.payload);
  if (e.step >= 0) j["step"] = e.step;
  j["time_ns"] = e.time_ns;
  j["value"] = e.value;
  return j;
}

Result<HistoryEvent> EventFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("event: expected a JSON object");
  HistoryEvent e;
  try {
    e.index = doc.at("index").get<std::int64_t>();
    e.process = doc.at("process").get<std::string>();
    auto t = ParseEventType(doc.at("type").get<std::string>());
    if (!t.ok()) return t.status();
    e.type = *t;
    e.f = doc.at("f").get<std::string>();
    e.action = doc.value("action", "");
    e.key = doc.value("key", "");
    e.key_name = doc.value("key_name", "");
    e.biz = doc.value("biz", "");
    e.biz_name = doc.value("biz_name", "");
    e.payload = doc.value("payload", "");
    e.step = doc.value("step", -1);
    e.time_ns = doc.value("time_ns", std::int64_t{0});
    e.value = doc.value("value", nlohmann::json::object());
  } catch (const nlohmann::json::exception& ex) {
    return Status::InvalidArgument(std::string("event: ") + ex.what());
  }
  return e;
}

bool HistoryEvent::is_request() const { return f == event_f::kSend || f == event_f::kBurst; }

std::int64_t History::Append(HistoryEvent event) {
  event.index = static_cast<std::int64_t>(events_.size());
  events_.push_back(std::move(event));
  return events_.back().index;
}

std::string History::ToJsonl() const {
  std::string out;
  for (const auto& e : events_) {
    // Bodies recorded from targets may hold invalid UTF-8: replace, never throw.
    out += EventToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += '\n';
  }
  return out;
}

Status History::WriteJsonl(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError("cannot write history '" + path + "'");
  out << ToJsonl();
  out.flush();
  if (!out) return Status::IoError("write failed for history '" + path + "'");
  return Status::Ok();
}

namespace {

// Format 1 kept a request's and an answer's headers as {name: value}; the
// list of pairs is what every reader of format 2 expects.
void UpgradeHeaders(nlohmann::json& holder) {
  if (!holder.is_object()) return;
  auto headers = holder.find("headers");
  if (headers != holder.end() && headers->is_object()) *headers = HeadersJson(HeadersFromJson(*headers));
}

void UpgradeFromFormat1(HistoryEvent& e) {
  if (!e.value.is_object()) return;
  for (const char* part : {"request", "response"}) {
    auto it = e.value.find(part);
    if (it != e.value.end()) UpgradeHeaders(*it);
  }
}

}  // namespace

Result<History> History::FromJsonl(const std::string& text, const std::string& file, int format) {
  if (format != 1 && format != kHistoryFormat) {
    return Status::InvalidArgument(file + ": history format " + std::to_string(format) +
                                   " (this idemproof reads formats 1 and " + std::to_string(kHistoryFormat) + ")");
  }
  History h;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto where = [&](const std::string& msg) {
      return Status(StatusCode::kInvalidArgument, msg, SourceMark{file, line_no, 1});
    };
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded()) return where("not a JSON object");
    auto e = EventFromJson(doc);
    if (!e.ok()) return where(e.status().message());
    if (format == 1) UpgradeFromFormat1(*e);
    if (e->index != static_cast<std::int64_t>(h.events_.size()))
      return where("event index " + std::to_string(e->index) + " out of order (expected " +
                   std::to_string(h.events_.size()) + ")");
    h.events_.push_back(std::move(e).value());
  }
  return h;
}

Result<History> History::ReadJsonl(const std::string& path, int format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read history '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return FromJsonl(ss.str(), path, format);
}

}  // namespace idemproof
