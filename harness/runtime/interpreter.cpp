#include "runtime/interpreter.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "model/json_path.h"
#include "runtime/child_process.h"
#include "runtime/interrupt.h"
#include "runtime/queue_steps.h"
#include "runtime/service_processes.h"
#include "runtime/request_render.h"
#include "runtime/target_process.h"

namespace idemproof::runtime {

namespace {

// Naive concurrency: every request on its own new connection, driven by one
// curl multi handle.
class MultiBurst : public BurstSender {
 public:
  explicit MultiBurst(const std::atomic<bool>* cancel) : cancel_(cancel) {}
  std::vector<HttpExchange> Send(const std::vector<HttpRequest>& requests) override {
    HttpClient client(cancel_);
    return client.send_concurrently(requests);
  }

 private:
  const std::atomic<bool>* cancel_;
};

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex(std::uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = d[v & 0xf];
    v >>= 4;
  }
  return out;
}

// Unique per process run of the tool, so two runs with one seed against a
// long-lived target never share keys.
std::string process_nonce() {
  static const std::string nonce = hex(
      fnv1a(std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "/" +
            std::to_string(::getpid())),
      6);
  return nonce;
}

nlohmann::json headers_json(const HttpHeaders& headers) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : headers) out[name] = value;
  return out;
}

nlohmann::json request_json(const HttpRequest& r) {
  return {{"method", r.method}, {"url", r.url}, {"headers", headers_json(r.headers)}, {"body", r.body}};
}

EventType completion_type(HttpOutcome outcome) {
  switch (outcome) {
    case HttpOutcome::kAnswered: return EventType::kOk;
    case HttpOutcome::kNoAnswer: return EventType::kInfo;
    case HttpOutcome::kNotSent: return EventType::kFail;
  }
  return EventType::kInfo;
}

nlohmann::json completion_json(const HttpExchange& e) {
  nlohmann::json v = {{"connection_reused", e.connection_reused}};
  // libcurl resent it on a new connection: the target may have seen it twice.
  if (e.send_attempts > 1) v["send_attempts"] = e.send_attempts;
  if (e.outcome == HttpOutcome::kAnswered) {
    v["response"] = {{"status", e.status},
                     {"headers", headers_json(e.response_headers)},
                     {"body", e.response_body}};
  } else {
    v["error"] = e.error;
  }
  return v;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

// The state of one scenario run; lives for one Interpreter::Run().
class Interpreter::Execution {
 public:
  Execution(const TargetDescription& target, const InterpreterOptions& options,
            BurstSender* threads_burst, const Scenario& scenario, std::string dir, int ordinal)
      : target_(target),
        options_(options),
        threads_burst_(threads_burst),
        scenario_(scenario),
        dir_(std::move(dir)),
        client_(options.cancel) {
    const std::uint64_t h =
        fnv1a(scenario.name + "#" + std::to_string(ordinal), options.seed ^ 0x9e3779b97f4a7c15ULL);
    ns_ = hex(h, 8) + "-" + process_nonce();
    rng_.seed(h ^ fnv1a(process_nonce()));
    base_vars_ = options.vars;
    base_vars_["run"] = ns_;
    // A scenario run is one "run" of the target ({{run}} is its namespace):
    // {{run_dir}} is that scenario run's folder, so each gets a fresh store.
    base_vars_["run_dir"] = dir_;
    for (const auto& [name, action] : target.actions) {
      for (const auto& [var, path] : action.capture) capture_names_.insert(var);
    }
  }

  ScenarioRun Run() {
    t0_ = monotonic_ns();
    Status started = StartServices();
    proc_ = std::make_unique<TargetProcess>(target_, base_vars_, dir_ + "/target", options_.flaw,
                                            options_.cancel);
    if (started.ok()) started = ControlTarget("start", -1);
    if (!started.ok()) {
      out_.error = started;
    } else {
      for (std::size_t i = 0; i < scenario_.steps.size(); ++i) {
        if (Cancelled()) break;
        const Step& step = scenario_.steps[i];
        if (step.after.count() > 0 && !Sleep(step.after)) break;
        Status s = Execute(step, static_cast<int>(i));
        if (!s.ok()) {
          out_.error = s;
          Note(static_cast<int>(i), "step stopped the scenario: " + s.ToString());
          break;
        }
      }
    }
    Finish();
    out_.interrupted = Cancelled();
    out_.elapsed_ms = (monotonic_ns() - t0_) / 1000000;
    return std::move(out_);
  }

 private:
  bool Cancelled() const { return options_.cancel != nullptr && options_.cancel->load(); }

  bool Sleep(Duration d) {
    if (options_.cancel == &InterruptFlag()) return SleepUnlessInterrupted(d);
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
      if (Cancelled()) return false;
      std::this_thread::sleep_for(std::min<Duration>(until - std::chrono::steady_clock::now(),
                                                     std::chrono::milliseconds(20)));
    }
    return !Cancelled();
  }

  std::int64_t Append(HistoryEvent e, std::int64_t at_ns) {
    std::lock_guard<std::mutex> lock(mu_);
    e.time_ns = at_ns - t0_;
    return out_.history.Append(std::move(e));
  }

  void Note(int step, const std::string& text) {
    HistoryEvent e;
    e.process = "harness";
    e.type = EventType::kInfo;
    e.f = "note";
    e.step = step;
    e.value = {{"note", text}};
    Append(std::move(e), monotonic_ns());
  }

  std::string KeyFor(const std::string& name) {
    if (name == kNoKey) return "";
    if (name == kFreshKey) {
      std::lock_guard<std::mutex> lock(mu_);
      return "idem-" + ns_ + "-fresh-" + std::to_string(++fresh_counter_);
    }
    return "idem-" + ns_ + "-" + name;
  }
  std::string BizFor(const std::string& name) const { return "biz-" + ns_ + "-" + name; }

  std::string BaseUrl() {
    std::lock_guard<std::mutex> lock(mu_);
    return base_url_;
  }

  // Where action requests go: through an active fault's proxy, else the target.
  std::string ClientBaseUrl() {
    std::lock_guard<std::mutex> lock(mu_);
    return client_base_url_.empty() ? base_url_ : client_base_url_;
  }
  bool Routed() {
    std::lock_guard<std::mutex> lock(mu_);
    return !client_base_url_.empty();
  }

  std::string Uuid() {
    std::lock_guard<std::mutex> lock(mu_);
    std::uint64_t a = rng_(), b = rng_();
    std::string h = hex(a, 16) + hex(b, 16);
    h[12] = '4';
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20, 12);
  }

  TemplateVars VarsFor(const std::string& key, const std::string& biz_name) {
    const std::string uuid = Uuid();
    std::lock_guard<std::mutex> lock(mu_);
    TemplateVars vars = target_vars_;
    vars["key"] = key;
    vars["biz"] = BizFor(biz_name);
    vars["uuid"] = uuid;
    auto it = captured_.find(biz_name);
    if (it != captured_.end()) {
      for (const auto& [k, v] : it->second) vars[k] = v;
    }
    return vars;
  }

  // A render error that names a variable some action captures means "that
  // answer never came": data, noted in the history. Any other is a tool error.
  bool IsMissingCapture(const Status& s) const {
    for (const auto& name : capture_names_) {
      if (s.message().find("'{{" + name + "}}'") != std::string::npos) return true;
    }
    return false;
  }

  HistoryEvent RequestEvent(const std::string& process, const std::string& f,
                            const std::string& action, const std::string& key,
                            const std::string& key_name, const std::string& biz_name,
                            PayloadVariant payload, int step) const {
    HistoryEvent e;
    e.process = process;
    e.f = f;
    e.action = action;
    e.key = key;
    e.key_name = key_name;
    e.biz = BizFor(biz_name);
    e.biz_name = biz_name;
    e.payload = payload == PayloadVariant::kOther ? "other" : "default";
    e.step = step;
    return e;
  }

  Result<HttpRequest> RenderAction(const ActionDescription& action, const std::string& key,
                                   const std::string& biz_name, PayloadVariant payload,
                                   std::optional<Duration> timeout, const std::string& base = "") {
    HeaderList extra;
    if (!key.empty() && !target_.idempotency.key_header.empty())
      extra.emplace_back(target_.idempotency.key_header, key);
    TemplateVars vars = VarsFor(key, biz_name);
    const Duration deadline = timeout.value_or(target_.request_timeout);
    // Without a key, a body member or header that is just {{key}} is left out.
    const RequestTemplate request = key.empty() ? WithoutKeyPlaceholders(action.request) : action.request;
    if (payload == PayloadVariant::kOther) {
      if (!action.other_payload) {
        return Status(StatusCode::kUnsupported,
                      "action " + action.name + " declares no other_payload");
      }
      const RequestTemplate other =
          key.empty() ? WithoutKeyPlaceholders(*action.other_payload) : *action.other_payload;
      return RenderRequestWithBody(request, other, base.empty() ? ClientBaseUrl() : base, vars, target_.headers,
                                   extra, deadline);
    }
    return RenderRequest(request, base.empty() ? ClientBaseUrl() : base, vars, target_.headers, extra, deadline);
  }

  void Capture(const ActionDescription& action, const std::string& biz_name, const HttpExchange& e) {
    if (action.capture.empty() || e.outcome != HttpOutcome::kAnswered || e.status < 200 ||
        e.status >= 300) {
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    TemplateVars& vars = captured_[biz_name];
    for (const auto& [var, rule] : action.capture) {
      if (vars.count(var)) continue;  // the first 2xx answer wins
      if (auto v = rule.From(e.response_headers, e.response_body)) vars[var] = *v;
    }
  }

  void MarkSent(const std::string& action, const std::string& biz_name) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& s : sent_) {
      if (s.first == action && s.second == biz_name) return;
    }
    sent_.emplace_back(action, biz_name);
  }

  // One request of a send step, on `client`, recorded as `process`.
  Status SendOne(HttpClient& client, const std::string& process, const Step& step, int index) {
    const ActionDescription* action = target_.FindAction(step.action);
    if (action == nullptr) return Status(StatusCode::kUnsupported, "unknown action " + step.action);
    const std::string key = KeyFor(step.key);
    std::string base;
    if (step.instance != "main") {
      auto url = InstanceUrl(step.instance);
      if (!url.ok()) return url.status();
      base = *url;
    }
    auto request = RenderAction(*action, key, step.biz, step.payload, step.timeout, base);
    if (!request.ok()) {
      if (IsMissingCapture(request.status())) {
        Note(index, "not sent: " + request.status().message());
        return Status::Ok();
      }
      return request.status();
    }
    MarkSent(step.action, step.biz);
    HistoryEvent invoke = RequestEvent(process, "send", step.action, key, step.key, step.biz,
                                       step.payload, index);
    invoke.value = {{"request", request_json(*request)}};
    // The invoke goes in before the request leaves, so concurrent sends
    // interleave in the history as they did on the wire.
    HistoryEvent done = invoke;
    Append(std::move(invoke), monotonic_ns());
    HttpExchange e;
    if (Routed()) {
      // A fault may close the connection before any answer byte; on a reused
      // connection libcurl would then resend silently (an unasked duplicate).
      HttpClient fresh(options_.cancel);
      e = fresh.send(*request);
    } else {
      e = client.send(*request);
    }
    done.type = completion_type(e.outcome);
    done.value = completion_json(e);
    Append(std::move(done), e.end_ns);
    Capture(*action, step.biz, e);
    return Status::Ok();
  }

  Status Send(const Step& step, int index) {
    if (step.background) {
      const std::string process = "client-" + std::to_string(next_process_++);
      background_.emplace_back([this, step, index, process] {
        HttpClient client(options_.cancel);
        for (int r = 0; r < step.repeat; ++r) {
          if (r > 0 && !Sleep(step.every)) break;
          Status s = SendOne(client, process, step, index);
          if (!s.ok()) {
            Note(index, "background send failed: " + s.ToString());
            break;
          }
        }
      });
      return Status::Ok();
    }
    for (int r = 0; r < step.repeat; ++r) {
      if (r > 0 && !Sleep(step.every)) return Status::Ok();
      if (Cancelled()) return Status::Ok();
      Status s = SendOne(client_, "client-0", step, index);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status Burst(const Step& step, int index) {
    const ActionDescription* action = target_.FindAction(step.action);
    if (action == nullptr) return Status(StatusCode::kUnsupported, "unknown action " + step.action);
    BurstSender* sender =
        step.mode == BurstMode::kLastByte ? options_.last_byte_burst : threads_burst_;
    if (sender == nullptr) {
      return Status(StatusCode::kUnsupported, "no sender for a last-byte burst in this build");
    }
    std::vector<HttpRequest> requests;
    std::vector<HistoryEvent> invokes;
    for (int i = 0; i < step.n; ++i) {
      const std::string key = KeyFor(step.key);
      auto request = RenderAction(*action, key, step.biz, step.payload, step.timeout);
      if (!request.ok()) {
        if (IsMissingCapture(request.status())) {
          Note(index, "burst not sent: " + request.status().message());
          return Status::Ok();
        }
        return request.status();
      }
      HistoryEvent invoke = RequestEvent("burst-" + std::to_string(i), "burst", step.action, key,
                                         step.key, step.biz, step.payload, index);
      invoke.value = {{"request", request_json(*request)}};
      invokes.push_back(std::move(invoke));
      requests.push_back(std::move(request).value());
    }
    MarkSent(step.action, step.biz);
    const std::int64_t released = monotonic_ns();
    for (const auto& invoke : invokes) Append(invoke, released);
    std::vector<HttpExchange> exchanges = sender->Send(requests);
    std::vector<std::size_t> order(exchanges.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return exchanges[a].end_ns < exchanges[b].end_ns;
    });
    for (std::size_t i : order) {
      HistoryEvent done = invokes[i];
      done.type = completion_type(exchanges[i].outcome);
      done.value = completion_json(exchanges[i]);
      Append(std::move(done), exchanges[i].end_ns);
      Capture(*action, step.biz, exchanges[i]);
    }
    NoteBurstSpread(step, index, exchanges, sender->LastHarnessSpreadNs());
    return Status::Ok();
  }

  // The spread the burst achieved: harness side as the sender measured it,
  // target side from the declared arrival header of the answers.
  void NoteBurstSpread(const Step& step, int index, const std::vector<HttpExchange>& exchanges,
                       std::optional<std::int64_t> harness_ns) {
    std::vector<std::int64_t> arrivals;
    if (!target_.arrival_header.empty()) {
      for (const auto& e : exchanges) {
        if (e.outcome != HttpOutcome::kAnswered) continue;
        auto v = e.response_header(target_.arrival_header);
        if (!v) continue;
        try {
          std::size_t used = 0;
          const long long t = std::stoll(*v, &used);
          if (used == v->size()) arrivals.push_back(t);
        } catch (const std::exception&) {
          // not a number: the target's data, not ours to fix
        }
      }
    }
    nlohmann::json burst = {{"step", index},
                            {"n", step.n},
                            {"mode", step.mode == BurstMode::kLastByte ? "last_byte" : "threads"},
                            {"harness_spread_us", nullptr},
                            {"target_spread_us", nullptr},
                            {"arrivals_reported", arrivals.size()}};
    if (harness_ns) burst["harness_spread_us"] = static_cast<double>(*harness_ns) / 1000.0;
    if (arrivals.size() >= 2) {
      auto [lo, hi] = std::minmax_element(arrivals.begin(), arrivals.end());
      burst["target_spread_us"] = static_cast<double>(*hi - *lo) / 1000.0;
    }
    if (!target_.arrival_header.empty()) burst["arrival_header"] = target_.arrival_header;
    HistoryEvent e;
    e.process = "harness";
    e.type = EventType::kInfo;
    e.f = "note";
    e.step = index;
    e.value = {{"note", "burst spread"}, {"burst", burst}};
    Append(std::move(e), monotonic_ns());
  }

  // A proxy event as a history event on the "proxy" lane; times of the
  // swallowed answers also relative to the run's start (at_ns).
  void RecordInjectorEvent(nlohmann::json event, std::int64_t steady_ns) {
    if (event.contains("upstream") && event["upstream"].is_array()) {
      for (auto& a : event["upstream"]) {
        if (a.contains("time_ns") && a["time_ns"].is_number_integer())
          a["at_ns"] = a["time_ns"].get<std::int64_t>() - t0_;
      }
    }
    HistoryEvent e;
    e.process = "proxy";
    e.type = EventType::kInfo;
    e.f = "fault";
    e.value = std::move(event);
    Append(std::move(e), steady_ns);
  }

  void UpdateClientRoute() {
    std::optional<std::string> url = options_.faults ? options_.faults->ClientBaseUrl() : std::nullopt;
    std::lock_guard<std::mutex> lock(mu_);
    client_base_url_ = url.value_or("");
  }

  // Runs a request-or-command call; returns (type, value-or-error, raw answer).
  struct CallOutcome {
    EventType type = EventType::kOk;
    nlohmann::json value;  // parsed JSON body / stdout
    nlohmann::json response;  // the HTTP answer, when a request
    std::string error;
    std::int64_t start_ns = 0, end_ns = 0;
  };

  Result<CallOutcome> Call(const TargetCall& call, const TemplateVars& vars) {
    CallOutcome out;
    if (call.request) {
      auto request = RenderRequest(*call.request, BaseFor(*call.request), vars,
                                   call.request->base.empty() ? target_.headers : HeaderList{}, {},
                                   target_.request_timeout);
      if (!request.ok()) return request.status();
      HttpExchange e = client_.send(*request);
      out.start_ns = e.start_ns;
      out.end_ns = e.end_ns;
      out.type = completion_type(e.outcome);
      if (e.outcome == HttpOutcome::kAnswered) {
        out.response = completion_json(e)["response"];
        out.value = nlohmann::json::parse(e.response_body, nullptr, false);
        if (out.value.is_discarded()) out.value = e.response_body;
      } else {
        out.error = e.error;
      }
      return out;
    }
    if (!call.command) return Status::Internal("a call with neither request nor command");
    ProcessSpec spec;
    for (const auto& arg : *call.command) {
      auto a = ExpandTemplate(arg, vars);
      if (!a.ok()) return a.status();
      spec.argv.push_back(*a);
    }
    spec.cwd = dir_;
    spec.stdout_path = dir_ + "/command-" + std::to_string(command_counter_++) + ".stdout";
    spec.stderr_path = dir_ + "/commands.stderr";
    out.start_ns = monotonic_ns();
    auto child = ChildProcess::Spawn(spec);
    if (!child.ok()) {
      out.end_ns = monotonic_ns();
      out.type = EventType::kFail;
      out.error = child.status().message();
      return out;
    }
    auto exit = child->WaitFor(std::chrono::duration_cast<std::chrono::milliseconds>(
        target_.request_timeout));
    if (!exit) exit = child->Kill();
    out.end_ns = monotonic_ns();
    std::ifstream in(spec.stdout_path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::remove(spec.stdout_path.c_str());
    std::string text = trim(ss.str());
    if (exit->signalled || exit->code != 0) {
      out.type = EventType::kFail;
      out.error = "command ended with " + exit->ToString();
      return out;
    }
    out.value = nlohmann::json::parse(text, nullptr, false);
    if (out.value.is_discarded()) out.value = text;
    return out;
  }

  Status Probe(const ProbeDescription& probe, const std::string& label, int index) {
    HistoryEvent invoke;
    invoke.process = "probe";
    invoke.f = "probe";
    invoke.step = index;
    invoke.value = {{"probe", probe.name}, {"label", label}};
    auto outcome = Call(probe.call, VarsFor("", "b1"));
    if (!outcome.ok()) {
      if (IsMissingCapture(outcome.status())) {
        Note(index, "probe " + probe.name + " not run: " + outcome.status().message());
        return Status::Ok();
      }
      return outcome.status();
    }
    HistoryEvent done = invoke;
    Append(std::move(invoke), outcome->start_ns);
    done.type = outcome->type;
    if (outcome->type == EventType::kOk) {
      nlohmann::json value = outcome->value;
      if (probe.value) {
        auto v = probe.value->Find(outcome->value);
        if (v.ok()) {
          value = *v;
        } else {
          done.type = EventType::kFail;
          done.value["error"] = "no " + probe.value->text() + " in the answer";
        }
      }
      if (done.type == EventType::kOk) done.value["value"] = value;
      if (!outcome->response.is_null()) done.value["response"] = outcome->response;
    } else {
      done.value["error"] = outcome->error;
    }
    Append(std::move(done), outcome->end_ns);
    return Status::Ok();
  }

  void RecordsProbes() {
    std::vector<std::pair<std::string, std::string>> sent;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sent = sent_;
    }
    for (const auto& [action_name, biz_name] : sent) {
      const ActionDescription* action = target_.FindAction(action_name);
      if (action == nullptr || !action->records) continue;
      HistoryEvent invoke;
      invoke.process = "probe";
      invoke.f = "probe";
      invoke.action = action_name;
      invoke.biz = BizFor(biz_name);
      invoke.biz_name = biz_name;
      const std::string label = "records:" + action_name + ":" + biz_name;
      invoke.value = {{"probe", "records"}, {"label", label}};
      auto outcome = Call(action->records->call, VarsFor("", biz_name));
      HistoryEvent done = invoke;
      if (!outcome.ok()) {
        Append(std::move(invoke), monotonic_ns());
        done.type = EventType::kFail;
        done.value["error"] = outcome.status().message();
        Append(std::move(done), monotonic_ns());
        continue;
      }
      Append(std::move(invoke), outcome->start_ns);
      done.type = outcome->type;
      if (outcome->type == EventType::kOk) {
        auto count = action->records->CountIn(outcome->value);
        if (count.ok()) {
          done.value["value"] = outcome->value;
          done.value["count"] = *count;
        } else {
          done.type = EventType::kFail;
          done.value["error"] = count.status().message();
          done.value["response"] = outcome->response;
        }
      } else {
        done.value["error"] = outcome->error;
      }
      Append(std::move(done), outcome->end_ns);
    }
  }

  Status Hook(const std::string& name, int index, bool cancellable) {
    auto it = target_.hooks.find(name);
    if (it == target_.hooks.end()) {
      return Status(StatusCode::kUnsupported, "the target declares no hook " + name);
    }
    HistoryEvent invoke;
    invoke.process = "nemesis";
    invoke.f = "hook";
    invoke.step = index;
    invoke.value = {{"hook", name}};
    // The final heal must reach the target even after an interrupt.
    Result<CallOutcome> outcome =
        cancellable ? Call(it->second.call, VarsFor("", "b1")) : CallUncancelled(it->second.call);
    if (!outcome.ok()) return outcome.status();
    HistoryEvent done = invoke;
    Append(std::move(invoke), outcome->start_ns);
    done.type = outcome->type;
    if (outcome->type == EventType::kOk) {
      done.value["response"] = outcome->response;
    } else {
      done.value["error"] = outcome->error;
    }
    Append(std::move(done), outcome->end_ns);
    return Status::Ok();
  }

  Result<CallOutcome> CallUncancelled(const TargetCall& call) {
    if (!call.request) return Call(call, VarsFor("", "b1"));
    CallOutcome out;
    auto request = RenderRequest(*call.request, BaseFor(*call.request), VarsFor("", "b1"),
                                 call.request->base.empty() ? target_.headers : HeaderList{}, {},
                                 std::chrono::seconds(2));
    if (!request.ok()) return request.status();
    HttpClient client;
    HttpExchange e = client.send(*request);
    out.start_ns = e.start_ns;
    out.end_ns = e.end_ns;
    out.type = completion_type(e.outcome);
    if (e.outcome == HttpOutcome::kAnswered) {
      out.response = completion_json(e)["response"];
    } else {
      out.error = e.error;
    }
    return out;
  }

  // start / stop / kill / restart of the target, recorded as nemesis events.
  Status ControlTarget(const std::string& what, int index) {
    HistoryEvent invoke;
    invoke.process = "nemesis";
    invoke.f = what;
    invoke.step = index;
    const pid_t invoke_pid = proc_->pid();
    invoke.value = {{"pid", invoke_pid}};
    const std::int64_t start = monotonic_ns();
    Status status;
    nlohmann::json result;
    if (what == "start") {
      status = proc_->Start();
    } else if (what == "restart") {
      status = proc_->Restart();
    } else {
      auto exit = what == "kill" ? proc_->Kill() : proc_->Stop();
      if (exit.ok()) {
        result["exit"] = exit->ToString();
      } else {
        status = exit.status();
      }
    }
    {
      // Background sends read the target's variables (the port) concurrently.
      std::lock_guard<std::mutex> lock(mu_);
      target_vars_ = base_vars_;
      for (const auto& [k, v] : proc_->vars()) target_vars_[k] = v;
      base_url_ = proc_->base_url();
      if (proc_->pid() > 0) target_vars_["target_pid"] = std::to_string(proc_->pid());
    }
    if (!proc_->Managed() && what == "start") {
      // Nothing was started: no event, only the reachability check.
      return status;
    }
    HistoryEvent done = invoke;
    Append(std::move(invoke), start);
    done.type = status.ok() ? EventType::kOk : EventType::kFail;
    done.value = result;
    // The pid acted on: the old one for stop/kill, the new one for (re)start.
    done.value["pid"] = (what == "stop" || what == "kill") ? invoke_pid : proc_->pid();
    if (proc_->vars().count("port")) done.value["port"] = proc_->vars().at("port");
    if (!status.ok()) done.value["error"] = status.message();
    Append(std::move(done), monotonic_ns());
    if (status.ok() && proc_->pid() > 0 && (what == "start" || what == "restart")) {
      out_.target_pids.push_back(proc_->pid());
    }
    return status;
  }

  Status Execute(const Step& step, int index) {
    switch (step.kind) {
      case StepKind::kSend: return Send(step, index);
      case StepKind::kBurst: return Burst(step, index);
      case StepKind::kWait: {
        HistoryEvent e;
        e.process = "harness";
        e.type = EventType::kOk;
        e.f = "wait";
        e.step = index;
        e.value = {{"duration", FormatDuration(step.duration)}};
        Append(std::move(e), monotonic_ns());
        Sleep(step.duration);
        return Status::Ok();
      }
      case StepKind::kHook: return Hook(step.name, index, true);
      case StepKind::kProbe: {
        auto it = target_.probes.find(step.name);
        if (it == target_.probes.end()) {
          return Status(StatusCode::kUnsupported, "the target declares no probe " + step.name);
        }
        return Probe(it->second, step.label.empty() ? step.name : step.label, index);
      }
      case StepKind::kJoin: JoinBackground(); return Status::Ok();
      case StepKind::kStart: return ControlTarget("start", index);
      case StepKind::kStop: return ControlTarget("stop", index);
      case StepKind::kKill: return ControlTarget("kill", index);
      case StepKind::kRestart: return ControlTarget("restart", index);
      case StepKind::kFault:
      case StepKind::kHeal: return Fault(step, index);
      case StepKind::kPause:
      case StepKind::kResume: return PauseOrResume(step.kind == StepKind::kPause, step.instance, index);
      case StepKind::kSpawn: return Spawn(step.name, index);
      case StepKind::kDeliver: {
        QueueStepContext ctx = QueueContext();
        return DeliverStep(target_, step, index, ctx);
      }
      case StepKind::kPublish: {
        QueueStepContext ctx = QueueContext();
        return PublishStep(target_, step, index, ctx);
      }
      case StepKind::kRunBatch:
      case StepKind::kRerun:
      case StepKind::kCleanRun: return Batch(step, index);
    }
    return Status::Internal("unhandled step kind");
  }

  std::string JobFor(const std::string& name) const { return "job-" + ns_ + "-" + name; }

  // One batch step: `repeat` runs (reruns) of the job, each followed by a
  // read of its result (history.h: f "batch" and f "batch_result").
  Status Batch(const Step& step, int index) {
    if (!target_.batch) return Status(StatusCode::kUnsupported, "the target declares no batch section");
    const BatchDescription& batch = *target_.batch;
    if (step.fail_after && !batch.failing_run) {
      return Status(StatusCode::kUnsupported, "the target declares no batch.failing_run");
    }
    const char* role = step.kind == StepKind::kRerun ? "rerun" : step.kind == StepKind::kCleanRun ? "clean" : "run";
    const int times = step.kind == StepKind::kRerun ? step.repeat : 1;
    for (int attempt = 1; attempt <= times; ++attempt) {
      if (Cancelled()) break;
      TemplateVars vars = VarsFor("", "b1");
      vars["job"] = JobFor(step.job);
      vars["from"] = std::to_string(step.from);
      vars["to"] = std::to_string(step.to);
      if (step.fail_after) vars["fail_after"] = std::to_string(*step.fail_after);
      const RequestTemplate& tmpl = step.fail_after ? *batch.failing_run : batch.run;
      auto request = RenderRequest(tmpl, BaseUrl(), vars, target_.headers, {},
                                   step.timeout.value_or(target_.request_timeout));
      if (!request.ok()) return request.status();
      nlohmann::json info = {{"job", vars["job"]}, {"job_name", step.job}, {"role", role},
                             {"from", step.from}, {"to", step.to}, {"attempt", attempt}};
      if (step.fail_after) info["fail_after"] = *step.fail_after;
      if (!step.of.empty()) info["of"] = step.of;
      HistoryEvent invoke;
      invoke.process = "batch";
      invoke.f = "batch";
      invoke.step = index;
      invoke.value = {{"request", request_json(*request)}, {"batch", info}};
      HistoryEvent done = invoke;
      const std::int64_t at = Append(std::move(invoke), monotonic_ns());
      HttpExchange e = client_.send(*request);
      done.type = completion_type(e.outcome);
      done.value = completion_json(e);
      done.value["batch"] = info;
      Append(std::move(done), e.end_ns);
      Status s = BatchResult(step, vars, at, index);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status BatchResult(const Step& step, const TemplateVars& vars, std::int64_t after, int index) {
    const BatchDescription& batch = *target_.batch;
    HistoryEvent invoke;
    invoke.process = "probe";
    invoke.f = "batch_result";
    invoke.step = index;
    invoke.value = {{"batch", {{"job", vars.at("job")}, {"job_name", step.job}}}, {"after", after}};
    auto result = Call(batch.result, vars);
    if (!result.ok()) return result.status();
    HistoryEvent done = invoke;
    Append(std::move(invoke), result->start_ns);
    done.type = result->type;
    std::int64_t end = result->end_ns;
    if (result->type != EventType::kOk) {
      done.value["error"] = result->error.empty() ? "the result call failed" : result->error;
    } else if (!result->response.is_null() && result->response.value("status", 0) / 100 != 2) {
      done.type = EventType::kFail;
      done.value["error"] = "the result call answered " + std::to_string(result->response.value("status", 0));
    } else {
      done.value["result"] = result->value;
      if (batch.markers_call) {
        auto markers = Call(*batch.markers_call, vars);
        if (!markers.ok()) return markers.status();
        end = markers->end_ns;
        if (markers->type == EventType::kOk) {
          done.value["markers"] = markers->value;
        } else {
          done.type = markers->type;
          done.value.erase("result");
          done.value["error"] = "the markers call failed: " + markers->error;
        }
      }
    }
    Append(std::move(done), end);
    return Status::Ok();
  }

  Status Fault(const Step& step, int index) {
    auto it = scenario_.faults.find(step.name);
    if (it == scenario_.faults.end()) {
      return Status(StatusCode::kInvalidConfig, "no fault named " + step.name);
    }
    if (options_.faults == nullptr || !options_.faults->Supports(it->second.kind)) {
      return Status(StatusCode::kUnsupported, "no injector for fault kind " + it->second.kind);
    }
    HistoryEvent e;
    e.process = "nemesis";
    e.f = "fault";
    e.step = index;
    const bool start = step.kind == StepKind::kFault;
    e.value = {{"fault", step.name}, {"phase", start ? "start" : "heal"}};
    HistoryEvent done = e;
    Append(std::move(e), monotonic_ns());
    if (start) {
      FaultScope scope;
      scope.target_base_url = BaseUrl();
      scope.on_event = [this](const nlohmann::json& event, std::int64_t steady_ns) {
        RecordInjectorEvent(event, steady_ns);
      };
      auto r = options_.faults->Start(it->second, scope);
      UpdateClientRoute();
      started_faults_.insert(step.name);
      done.type = r.ok() ? EventType::kOk : EventType::kFail;
      if (r.ok()) {
        done.value["injector"] = *r;
      } else {
        done.value["error"] = r.status().message();
      }
    } else {
      auto r = options_.faults->Heal(it->second);
      UpdateClientRoute();
      started_faults_.erase(step.name);
      done.type = r.ok() ? EventType::kOk : EventType::kFail;
      if (r.ok()) {
        done.value["injected"] = *r;
        out_.fault_counts[step.name] += *r;
      } else {
        done.value["error"] = r.status().message();
      }
    }
    Append(std::move(done), monotonic_ns());
    return Status::Ok();
  }

  void JoinBackground() {
    for (auto& t : background_) t.join();
    background_.clear();
  }

  // Runs whatever happened before: background sends joined, records probed,
  // faults healed, the heal hook fired, the target stopped and reaped.
  void Finish() {
    // A paused instance would hold background sends (and the stop) up.
    for (const auto& name : std::set<std::string>(paused_)) PauseOrResume(false, name, -1);
    JoinBackground();
    for (const auto& name : std::set<std::string>(started_faults_)) {
      Step heal;
      heal.kind = StepKind::kHeal;
      heal.name = name;
      Fault(heal, -1);
    }
    if (options_.faults != nullptr) {
      options_.faults->HealAll();
      UpdateClientRoute();
    }
    auto alive = [this] {
      return proc_->Managed() ? proc_->Running() : out_.error.code() != StatusCode::kUnavailable;
    };
    if (!Cancelled()) {
      if (proc_->Managed() && !proc_->Running() && !out_.target_pids.empty() &&
          out_.error.code() != StatusCode::kUnavailable) {
        // The scenario ended with the target down (kill/stop): bring it back
        // on the same store to read the records.
        ControlTarget("start", -1);
      }
      if (alive()) RecordsProbes();
    }
    if (target_.hooks.count("heal") && alive() && !(Cancelled() && proc_->Managed())) {
      Status s = Hook("heal", -1, /*cancellable=*/false);
      if (!s.ok()) Note(-1, "heal hook failed: " + s.ToString());
    }
    if (proc_->Managed() && proc_->Running()) ControlTarget("stop", -1);
    proc_.reset();
    for (auto& [name, instance] : instances_) {
      if (instance->Running()) instance->Stop();
    }
    instances_.clear();
    if (services_) services_->Stop();
  }

  // ---- services, instances, pause / resume, queue steps (issue 5) ----

  // Starts the target file's services; their variables join every template's.
  Status StartServices() {
    services_ = std::make_unique<ServiceProcesses>(target_.services, base_vars_, dir_, options_.cancel);
    if (target_.services.empty()) return Status::Ok();
    HistoryEvent invoke;
    invoke.process = "nemesis";
    invoke.f = "services";
    invoke.value = nlohmann::json::object();
    HistoryEvent done = invoke;
    Append(std::move(invoke), monotonic_ns());
    Status s = services_->Start();
    done.type = s.ok() ? EventType::kOk : EventType::kFail;
    done.value = {{"services", services_->Vars()}};
    if (!s.ok()) done.value["error"] = s.message();
    Append(std::move(done), monotonic_ns());
    for (const auto& [k, v] : services_->Vars()) base_vars_[k] = v;
    if (!s.ok()) return Status(StatusCode::kUnavailable, s.message());
    return s;
  }

  // Where a request goes: a service (`base:`) or the target.
  std::string BaseFor(const RequestTemplate& request) {
    if (request.base.empty()) return BaseUrl();
    return services_ ? services_->Url(request.base) : "";
  }

  Result<std::string> InstanceUrl(const std::string& name) {
    if (name == "main") return BaseUrl();
    auto it = instances_.find(name);
    if (it == instances_.end() || !it->second->Running())
      return Status(StatusCode::kUnsupported, "no running target instance '" + name + "'");
    return it->second->base_url();
  }

  TargetProcess* Instance(const std::string& name) {
    if (name == "main") return proc_.get();
    auto it = instances_.find(name);
    return it == instances_.end() ? nullptr : it->second.get();
  }

  // Another instance of the target: the same command and variables, hence the
  // same store ({{run_dir}}), its own port and logs.
  Status Spawn(const std::string& name, int index) {
    HistoryEvent invoke;
    invoke.process = "nemesis";
    invoke.f = "spawn";
    invoke.step = index;
    invoke.value = {{"instance", name}};
    HistoryEvent done = invoke;
    Append(std::move(invoke), monotonic_ns());
    TemplateVars vars;
    {
      std::lock_guard<std::mutex> lock(mu_);
      vars = base_vars_;
    }
    auto proc = std::make_unique<TargetProcess>(target_, vars, dir_ + "/target-" + name, options_.flaw,
                                                options_.cancel);
    Status s = proc->Start();
    done.type = s.ok() ? EventType::kOk : EventType::kFail;
    done.value["pid"] = proc->pid();
    if (!s.ok()) done.value["error"] = s.message();
    if (s.ok()) out_.target_pids.push_back(proc->pid());
    instances_[name] = std::move(proc);
    Append(std::move(done), monotonic_ns());
    return s;
  }

  // SIGSTOP / SIGCONT of a target instance, as nemesis events "pause" /
  // "resume" (the lease_recovery oracle lines retries up against a pause).
  Status PauseOrResume(bool pause, const std::string& name, int index) {
    TargetProcess* proc = Instance(name);
    if (proc == nullptr || !proc->Managed())
      return Status(StatusCode::kUnsupported, "no target instance '" + name + "' to " + (pause ? "pause" : "resume"));
    HistoryEvent invoke;
    invoke.process = "nemesis";
    invoke.f = pause ? "pause" : "resume";
    invoke.step = index;
    invoke.value = {{"instance", name}, {"pid", proc->pid()}};
    HistoryEvent done = invoke;
    Append(std::move(invoke), monotonic_ns());
    const bool sent = proc->Signal(pause ? SIGSTOP : SIGCONT);
    if (pause && sent) paused_.insert(name);
    if (!pause) paused_.erase(name);
    done.type = sent ? EventType::kOk : EventType::kFail;
    if (!sent) done.value["error"] = "the instance is not running";
    Append(std::move(done), monotonic_ns());
    return Status::Ok();
  }

  QueueStepContext QueueContext() {
    QueueStepContext ctx;
    ctx.append = [this](HistoryEvent e, std::int64_t at) { return Append(std::move(e), at); };
    ctx.vars_for = [this](const std::string& key, const std::string& biz) { return VarsFor(key, biz); };
    ctx.biz_for = [this](const std::string& biz) { return BizFor(biz); };
    ctx.message_id = [this](const std::string& symbolic) { return "msg-" + ns_ + "-" + symbolic; };
    ctx.instance_url = [this](const std::string& name) { return InstanceUrl(name); };
    ctx.service_url = [this](const std::string& name) -> Result<std::string> {
      const std::string url = services_ ? services_->Url(name) : "";
      if (url.empty()) return Status(StatusCode::kUnsupported, "no running service '" + name + "'");
      return url;
    };
    ctx.cancel = options_.cancel;
    return ctx;
  }

  const TargetDescription& target_;
  const InterpreterOptions& options_;
  BurstSender* threads_burst_;
  const Scenario& scenario_;
  std::string dir_;
  std::string ns_;
  TemplateVars base_vars_;
  TemplateVars target_vars_;  // base_vars_ + the target's (port); guarded by mu_
  std::string base_url_;      // guarded by mu_
  std::string client_base_url_;  // guarded by mu_; "" = base_url_ (no active fault)
  std::set<std::string> capture_names_;
  std::mt19937_64 rng_;
  std::mutex mu_;
  ScenarioRun out_;
  std::int64_t t0_ = 0;
  std::unique_ptr<TargetProcess> proc_;
  std::unique_ptr<ServiceProcesses> services_;
  std::map<std::string, std::unique_ptr<TargetProcess>> instances_;  // spawned, besides proc_
  std::set<std::string> paused_;  // instances stopped by a pause step
  HttpClient client_;
  std::map<std::string, TemplateVars> captured_;
  std::vector<std::pair<std::string, std::string>> sent_;
  std::vector<std::thread> background_;
  std::set<std::string> started_faults_;
  int next_process_ = 1;
  int fresh_counter_ = 0;
  int command_counter_ = 0;
};

Interpreter::Interpreter(const TargetDescription& target, InterpreterOptions options)
    : target_(target),
      options_(std::move(options)),
      threads_burst_(std::make_unique<MultiBurst>(options_.cancel)) {}

Interpreter::~Interpreter() = default;

std::vector<std::string> Interpreter::NeedsOf(const Scenario& scenario) const {
  std::vector<std::string> needs;
  for (const Step& step : scenario.steps) {
    if (step.kind == StepKind::kBurst && step.mode == BurstMode::kLastByte &&
        options_.last_byte_burst == nullptr) {
      needs.push_back("a last-byte synchronised burst sender (step at " + step.mark.ToString() + ")");
    }
    if (step.kind == StepKind::kFault || step.kind == StepKind::kHeal) {
      auto it = scenario.faults.find(step.name);
      const std::string kind = it == scenario.faults.end() ? step.name : it->second.kind;
      if (options_.faults == nullptr || !options_.faults->Supports(kind)) {
        needs.push_back("an injector for fault kind " + kind);
      }
    }
  }
  std::sort(needs.begin(), needs.end());
  needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
  return needs;
}

ScenarioRun Interpreter::Run(const Scenario& scenario, const std::string& scenario_dir, int ordinal) {
  Execution execution(target_, options_, threads_burst_.get(), scenario, scenario_dir, ordinal);
  return execution.Run();
}

}  // namespace idemproof::runtime
