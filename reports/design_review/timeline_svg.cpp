#include "reports/design_review/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "model/operation.h"
#include "reports/design_review/run_review.h"
#include "reports/markup_escape.h"
#include "model/history_events.h"

namespace idemproof {
namespace {

constexpr int kLabelWidth = 96;
constexpr int kLaneHeight = 24;
constexpr int kBarHeight = 14;
constexpr int kLegendHeight = 26;
constexpr int kBandLabelHeight = 16;
constexpr int kAxisHeight = 30;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Attr(const std::string& text) { return XmlEscape(text, true); }
std::string Text(const std::string& text) { return XmlEscape(text, false); }

// Lane order: clients, bursts, then the fixed processes, then anything else.
int LaneRank(const std::string& process) {
  static const char* kFixed[] = {event_process::kProxy, "target", "stub", "external", "deliverer",
                                 event_process::kNemesis, event_process::kProbe};
  if (process.rfind("client-", 0) == 0) return 0;
  if (process.rfind("burst-", 0) == 0) return 1;
  for (int i = 0; i < 7; ++i)
    if (process == kFixed[i]) return 2 + i;
  return 20;
}

bool LaneLess(const std::string& a, const std::string& b) {
  int ra = LaneRank(a), rb = LaneRank(b);
  if (ra != rb) return ra < rb;
  // client-2 before client-10.
  auto num = [](const std::string& s) {
    auto dash = s.rfind('-');
    if (dash == std::string::npos) return -1L;
    try {
      return std::stol(s.substr(dash + 1));
    } catch (...) {
      return -1L;
    }
  };
  long na = num(a), nb = num(b);
  if (na != nb) return na < nb;
  return a < b;
}

struct Style {
  const char* fill;
  const char* stroke;
  bool dashed = false;
};

// Colours chosen to stay distinct in greyscale print too (lightness differs).
Style RequestStyle(const Operation& op, const IdempotencyContract& contract, std::string& label) {
  if (op.completion == nullptr) {
    label = "open";
    return {"#ffffff", "#757575", true};
  }
  if (op.completion->type == EventType::kInfo) {
    label = "? lost";
    return {"#ffffff", "#424242", true};
  }
  if (op.completion->type == EventType::kFail) {
    label = "not sent";
    return {"#bdbdbd", "#616161"};
  }
  auto a = op.answer();
  if (!a) {
    label = "?";
    return {"#ffffff", "#424242", true};
  }
  label = std::to_string(a->status);
  if (contract.IsInProgress(a->status)) return {"#f9a825", "#8d6e00"};
  if (a->is_2xx() && IsReplayMarked(*a, contract)) {
    label += " replay";
    return {"#1e88e5", "#0d47a1"};
  }
  if (a->is_2xx()) return {"#43a047", "#1b5e20"};
  if (a->status >= 500) return {"#e53935", "#8e0000"};
  return {"#fb8c00", "#a04000"};
}

std::string RequestTitle(const Operation& op, const std::string& label) {
  const HistoryEvent& e = *op.invoke;
  std::string t = "#" + std::to_string(e.index) + " " + e.process + " " + e.f;
  const RequestLine line = RequestLineOf(e);
  if (!line.method.empty()) t += " " + line.method;
  if (!line.url.empty()) t += " " + line.url;
  if (const std::string instance = EventText(e, "instance"); !instance.empty()) t += "\ninstance " + instance;
  if (!e.action.empty()) t += "\naction " + e.action;
  t += "\nkey " + (e.key.empty() ? std::string("(none)") : e.key);
  if (!e.biz.empty()) t += "\nbiz " + e.biz;
  t += "\n-> " + label;
  if (op.completion != nullptr && op.completion->value.contains("error") && op.completion->value["error"].is_string())
    t += " (" + op.completion->value["error"].get<std::string>() + ")";  // an empty error still shows "()"
  return t;
}

// A round step (1, 2, 5 x 10^k ns) giving at most ~8 ticks over `span`.
std::int64_t TickStep(std::int64_t span) {
  std::int64_t step = 1;
  while (true) {
    for (std::int64_t m : {1, 2, 5}) {
      if (span / (step * m) <= 8) return step * m;
    }
    step *= 10;
  }
}


}  // namespace

std::string RenderTimelineSvg(const History& history, const TimelineOptions& options) {
  const int width = std::max(options.width, 480);
  const std::string aria = options.title.empty() ? "timeline" : options.title;
  std::vector<Operation> ops = PairOperations(history);
  std::set<std::int64_t> paired;
  for (const auto& op : ops)
    if (op.completion) paired.insert(op.completion->index);

  // Lanes, and the time range over every drawn event.
  std::set<std::string, decltype(&LaneLess)> lanes(&LaneLess);
  std::optional<std::int64_t> t0, t1;
  bool target_lane = false;
  for (const auto& e : history.events()) {
    if (e.process == event_process::kHarness) continue;  // notes and waits: not part of the interleaving
    const bool control = IsTargetControl(e);
    if (control) target_lane = true;
    else lanes.insert(e.process);
    t0 = t0 ? std::min(*t0, e.time_ns) : e.time_ns;
    t1 = t1 ? std::max(*t1, e.time_ns) : e.time_ns;
  }
  bool any_request = std::any_of(ops.begin(), ops.end(), [](const Operation& o) { return o.invoke->is_request(); });
  if (any_request || target_lane) lanes.insert("target");
  if (!t0) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" + Attr(aria) +
           "\" width=\"" + std::to_string(width) + "\" height=\"40\" viewBox=\"0 0 " + std::to_string(width) +
           " 40\"><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/><text x=\"8\" y=\"24\" "
           "font-family=\"sans-serif\" font-size=\"12\">empty history: nothing to draw</text></svg>";
  }
  const std::int64_t span = std::max<std::int64_t>(*t1 - *t0, 1000000);
  const double plot_left = kLabelWidth, plot_right = width - 70;  // room for the last label
  auto X = [&](std::int64_t t) {
    return plot_left + (plot_right - plot_left) * static_cast<double>(t - *t0) / static_cast<double>(span);
  };
  std::map<std::string, int> lane_index;
  for (const auto& l : lanes) lane_index.emplace(l, static_cast<int>(lane_index.size()));
  const int lanes_top = kLegendHeight + kBandLabelHeight;
  const int lanes_bottom = lanes_top + static_cast<int>(lanes.size()) * kLaneHeight;
  const int height = lanes_bottom + kAxisHeight;
  auto LaneY = [&](const std::string& lane) { return lanes_top + lane_index.at(lane) * kLaneHeight; };

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" role=\"img\" aria-label=\"" + Attr(aria) +
       "\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
       std::to_string(width) + " " + std::to_string(height) +
       "\" font-family=\"-apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif\" font-size=\"11\">\n";
  s += "<title>" + Text(aria) + "</title>\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

  // Legend.
  {
    struct Key { const char* fill; const char* stroke; bool dashed; const char* text; };
    const Key keys[] = {{"#43a047", "#1b5e20", false, "2xx"},        {"#1e88e5", "#0d47a1", false, "2xx replay"},
                        {"#f9a825", "#8d6e00", false, "in progress"}, {"#fb8c00", "#a04000", false, "other 4xx"},
                        {"#e53935", "#8e0000", false, "5xx"},        {"#ffffff", "#424242", true, "lost (info)"},
                        {"#ffe0b2", "#ffb74d", false, "fault"},      {"#ffffff", "#000000", false, "evidence"}};
    double x = 8;
    for (const auto& k : keys) {
      const bool evidence = std::string(k.text) == "evidence";
      s += "<rect x=\"" + Num(x) + "\" y=\"8\" width=\"16\" height=\"10\" fill=\"" + k.fill + "\" stroke=\"" +
           k.stroke + "\" stroke-width=\"" + (evidence ? "2.5" : "1") + "\"" +
           (k.dashed ? " stroke-dasharray=\"3 2\"" : "") + "/>";
      s += "<text x=\"" + Num(x + 20) + "\" y=\"17\" fill=\"#333\">" + k.text + "</text>\n";
      x += 28 + 6.5 * static_cast<double>(std::string(k.text).size()) + 10;
    }
  }

  // Lane backgrounds and labels.
  for (const auto& lane : lanes) {
    const int y = LaneY(lane);
    if (lane_index.at(lane) % 2 == 1)
      s += "<rect x=\"0\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(width) + "\" height=\"" +
           std::to_string(kLaneHeight) + "\" fill=\"#f5f5f5\"/>\n";
    s += "<text x=\"8\" y=\"" + std::to_string(y + 16) + "\" fill=\"#212121\" font-weight=\"600\">" + Text(lane) +
         "</text>\n";
  }

  // Fault bands: a fault's start to its heal (or the end), across every lane.
  {
    std::map<std::string, std::int64_t> open;
    std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> bands;
    for (const auto& e : history.events()) {
      if (e.process != event_process::kNemesis || e.f != event_f::kFault || e.type != EventType::kInvoke) continue;
      const std::string name = EventText(e, "fault");
      const std::string phase = EventText(e, "phase");
      if (phase == "start") {
        open.emplace(name, e.time_ns);
      } else if (phase == "heal" && open.count(name)) {
        bands.emplace_back(name, open[name], e.time_ns);
        open.erase(name);
      }
    }
    for (const auto& [name, start] : open) bands.emplace_back(name, start, *t1);
    int row = 0;
    for (const auto& [name, a, b] : bands) {
      const double xa = X(a), xb = std::max(X(b), xa + 2);
      s += "<g class=\"fault-band\"><title>" + Text("fault " + name + ": " + FormatNanos(a - *t0) + " to " +
                                                     FormatNanos(b - *t0)) + "</title>";
      s += "<rect x=\"" + Num(xa) + "\" y=\"" + std::to_string(lanes_top - 2) + "\" width=\"" + Num(xb - xa) +
           "\" height=\"" + std::to_string(lanes_bottom - lanes_top + 4) +
           "\" fill=\"#ff9800\" fill-opacity=\"0.16\" stroke=\"#ffb74d\" stroke-dasharray=\"4 3\"/>";
      s += "<text x=\"" + Num(xa + 3) + "\" y=\"" + std::to_string(kLegendHeight + 11 - (row % 2) * 0) +
           "\" fill=\"#e65100\" font-size=\"10\">fault " + Text(name) + "</text></g>\n";
      ++row;
    }
  }

  // Target lane: up line, down stretches after a kill/stop, marks.
  if (lanes.count("target")) {
    const int y = LaneY("target") + kLaneHeight / 2;
    std::vector<std::pair<std::int64_t, std::int64_t>> down;
    // (A plain flag, not std::optional: GCC 12 warns maybe-uninitialized on it.)
    bool is_down = false;
    std::int64_t down_since = 0;
    for (const auto& op : ops) {
      const HistoryEvent& e = *op.invoke;
      if (e.process != event_process::kNemesis) continue;
      if (e.f == event_f::kKill || e.f == event_f::kStop) {
        if (!is_down) down_since = op.complete_ns();
        is_down = true;
      } else if ((e.f == event_f::kStart || e.f == event_f::kRestart) && is_down) {
        down.emplace_back(down_since, op.complete_ns());
        is_down = false;
      } else if (e.f == event_f::kRestart) {
        down.emplace_back(e.time_ns, op.complete_ns());  // stopping and starting again
      }
    }
    if (is_down) down.emplace_back(down_since, *t1);
    s += "<line x1=\"" + Num(plot_left) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" + Num(plot_right) + "\" y2=\"" +
         std::to_string(y) + "\" stroke=\"#66bb6a\" stroke-width=\"3\"/>\n";
    for (const auto& [a, b] : down)
      s += "<line x1=\"" + Num(X(a)) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" + Num(X(b)) + "\" y2=\"" +
           std::to_string(y) + "\" stroke=\"#ffffff\" stroke-width=\"5\"/><line x1=\"" + Num(X(a)) + "\" y1=\"" +
           std::to_string(y) + "\" x2=\"" + Num(X(b)) + "\" y2=\"" + std::to_string(y) +
           "\" stroke=\"#c62828\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/>\n";
    for (const auto& op : ops) {
      const HistoryEvent& e = *op.invoke;
      if (!IsTargetControl(e)) continue;
      const double x = X(e.time_ns);
      const std::string what = e.f == event_f::kKill ? "SIGKILL" : e.f;
      const char* colour = IsTargetDown(e) ? "#c62828" : "#2e7d32";
      s += "<g class=\"process-control\"><title>" + Text("#" + std::to_string(e.index) + " " + what) + "</title>";
      s += "<line x1=\"" + Num(x) + "\" y1=\"" + std::to_string(lanes_top) + "\" x2=\"" + Num(x) + "\" y2=\"" +
           std::to_string(lanes_bottom) + "\" stroke=\"" + colour + "\" stroke-width=\"1.5\" stroke-dasharray=\"2 2\"/>";
      s += "<rect x=\"" + Num(x - 4) + "\" y=\"" + std::to_string(y - 5) + "\" width=\"8\" height=\"10\" fill=\"" +
           colour + "\"/>";
      s += "<text x=\"" + Num(x + 6) + "\" y=\"" + std::to_string(y - 3) + "\" fill=\"" + colour +
           "\" font-weight=\"600\">" + Text(what) + "</text></g>\n";
    }
  }

  // Operations: bars from invoke to completion.
  for (const auto& op : ops) {
    const HistoryEvent& e = *op.invoke;
    if (e.process == event_process::kHarness) continue;
    if (IsTargetControl(e)) continue;
    if (!lane_index.count(e.process)) continue;
    const int y = LaneY(e.process) + (kLaneHeight - kBarHeight) / 2;
    const double xa = X(e.time_ns);
    const double xb = std::max(X(op.completion ? op.completion->time_ns : *t1), xa + 3);
    std::string label, title;
    Style style{"#9575cd", "#4527a0"};
    if (e.is_request()) {
      style = RequestStyle(op, options.contract, label);
      title = RequestTitle(op, label);
      label = (e.key_name.empty() ? std::string() : e.key_name + " ") + label;
    } else if (e.f == event_f::kProbe) {
      style = {"#b0bec5", "#455a64"};
      label = EventText(e, "label");
      if (label.empty()) label = EventText(e, "probe");
      if (op.completion)
        if (const auto count = ProbeCountText(*op.completion)) label += " = " + *count;
      title = "#" + std::to_string(e.index) + " probe " + label;
      if (op.completion && op.completion->type != EventType::kOk) style.dashed = true;
    } else if (e.f == event_f::kHook) {
      label = "hook " + EventText(e, "hook");
      if (!EventText(e, "cause").empty()) label = "cause " + EventText(e, "cause") + " (" + label + ")";
      title = "#" + std::to_string(e.index) + " " + label;
      // A hook that failed may not have caused anything: drawn dashed.
      if (op.completion && (op.completion->type != EventType::kOk || op.completion->value.value("failed", false))) {
        style.dashed = true;
        title += " failed";
      }
    } else if (e.f == event_f::kFault) {
      style = {"#ffcc80", "#e65100"};
      label = EventText(e, "fault") + " " + EventText(e, "phase");
      title = "#" + std::to_string(e.index) + " fault " + label;
    } else {
      label = e.f;
      title = "#" + std::to_string(e.index) + " " + e.process + " " + e.f;
    }
    const bool evidence = options.highlighted.count(e.index) > 0 ||
                          (op.completion != nullptr && options.highlighted.count(op.completion->index) > 0);
    s += std::string("<g class=\"op") + (evidence ? " evidence" : "") + "\" data-index=\"" + std::to_string(e.index) +
         "\"><title>" + Text(title) + "</title>";
    s += "<rect x=\"" + Num(xa) + "\" y=\"" + std::to_string(y) + "\" width=\"" + Num(xb - xa) + "\" height=\"" +
         std::to_string(kBarHeight) + "\" rx=\"2\" fill=\"" + style.fill + "\" stroke=\"" +
         (evidence ? "#000000" : style.stroke) + "\" stroke-width=\"" + (evidence ? "2.5" : "1") + "\"" +
         (style.dashed ? " stroke-dasharray=\"3 2\"" : "") + "/>";
    if (op.completion && op.completion->type == EventType::kInfo)
      s += "<text x=\"" + Num(xb - 8) + "\" y=\"" + std::to_string(y + 11) +
           "\" fill=\"#000\" font-weight=\"700\">?</text>";
    std::string text = "#" + std::to_string(e.index) + " " + label;
    // Roughly 6.5 px a character at 11 px: labels that would leave the
    // picture go to the left of their bar instead.
    const bool left = xb + 5 + 6.5 * static_cast<double>(text.size()) > width - 4 && xa > plot_left + 40;
    if (evidence) text = left ? text + " \u25b6" : "\u25c0 " + text;  // the arrow points at the bar
    s += "<text x=\"" + Num(left ? xa - 3 : xb + 3) + "\" y=\"" + std::to_string(y + 11) + "\" fill=\"#212121\"" +
         (left ? " text-anchor=\"end\"" : "") + (evidence ? " font-weight=\"700\"" : "") + ">" + Text(text) +
         "</text></g>\n";
  }

  // Single events nothing pairs with: proxy faults firing, stray completions.
  for (const auto& e : history.events()) {
    if (e.type == EventType::kInvoke || paired.count(e.index) || e.process == event_process::kHarness) continue;
    if (!lane_index.count(e.process)) continue;
    const int y = LaneY(e.process);
    const double x = X(e.time_ns);
    std::string label = e.f;
    if (e.f == event_f::kFault) {
      label = EventText(e, "fault");
      if (label.empty()) label = "fault";
      const std::string detail = EventText(e, "detail");
      if (!detail.empty()) label += ": " + detail;
    }
    const bool evidence = options.highlighted.count(e.index) > 0;
    s += "<g class=\"mark\"><title>" + Text("#" + std::to_string(e.index) + " " + e.process + " " + label) + "</title>";
    s += "<path d=\"M" + Num(x) + " " + std::to_string(y + 4) + " l5 8 l-5 8 l-5 -8 z\" fill=\"#e65100\" stroke=\"" +
         (evidence ? "#000" : "#bf360c") + "\"/>";
    s += "<text x=\"" + Num(x + 7) + "\" y=\"" + std::to_string(y + 16) + "\" fill=\"#bf360c\">" +
         Text(label.size() > 40 ? label.substr(0, 40) + "\u2026" : label) + "</text></g>\n";
  }

  // Time axis.
  {
    const int y = lanes_bottom + 4;
    s += "<line x1=\"" + Num(plot_left) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" + Num(plot_right) + "\" y2=\"" +
         std::to_string(y) + "\" stroke=\"#616161\"/>\n";
    const std::int64_t step = TickStep(span);
    for (std::int64_t t = 0; t <= span; t += step) {
      const double x = X(*t0 + t);
      s += "<line x1=\"" + Num(x) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" + Num(x) + "\" y2=\"" +
           std::to_string(y + 5) + "\" stroke=\"#616161\"/><text x=\"" + Num(x) + "\" y=\"" + std::to_string(y + 17) +
           "\" text-anchor=\"middle\" fill=\"#424242\" font-size=\"10\">" + Text(t == 0 ? "0" : FormatNanos(t)) +
           "</text>\n";
    }
  }
  s += "</svg>\n";
  return s;
}

std::string RenderScenarioTimeline(const RunDirectoryContents& contents, const ScenarioReview& scenario) {
  const History* history = contents.HistoryOf(scenario.index);
  if (history == nullptr) return "";
  TimelineOptions options;
  options.highlighted = scenario.highlighted;
  if (contents.target) options.contract = contents.target->idempotency;
  options.title = "Timeline of " + scenario.result->name;
  return RenderTimelineSvg(*history, options);
}

}  // namespace idemproof
