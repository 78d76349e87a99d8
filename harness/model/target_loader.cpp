// Target file -> TargetDescription, strictly (see target.h).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <re2/re2.h>

#include "model/capabilities.h"
#include "model/role_hints.h"
#include "model/pattern.h"
#include "model/profile.h"
#include "model/target.h"
#include "model/template.h"
#include "model/tls_settings.h"
#include "model/yaml_reader.h"

namespace idemproof {
namespace {

using yaml::Reader;

const std::vector<std::string> kMethods = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"};

// Each route spelling: its respelling payload form (model/payload.h), its
// key under idempotency.path_equivalence, and the field holding it.
struct SpellingEntry {
  const char* form;
  const char* key;
  PathEquivalence::Spelling PathEquivalence::*field;
};
constexpr SpellingEntry kSpellings[] = {
    {"spelling_trailing_slash", "trailing_slash", &PathEquivalence::trailing_slash},
    {"spelling_case", "case", &PathEquivalence::letter_case},
    {"spelling_query_order", "query_order", &PathEquivalence::query_order},
};

// Collects templated strings while loading; checked once every capture name
// is known (a capture may be defined after the action using it).
struct TemplateUse {
  YAML::Node node;
  std::string text;
  std::vector<std::string> extra;  // variables known only where it was declared (batch)
};

const std::vector<std::string> kBatchRunVars = {"job", "from", "to"};
const std::vector<std::string> kBatchFailVars = {"job", "from", "to", "fail_after"};
const std::vector<std::string> kBatchResultVars = {"job"};

bool TextUsesKey(const std::string& text) {
  auto vars = TemplateVariables(text);
  return vars.ok() && std::find(vars->begin(), vars->end(), "key") != vars->end();
}

bool JsonUsesKey(const nlohmann::json& doc) {
  if (doc.is_string()) return TextUsesKey(doc.get<std::string>());
  if (doc.is_array() || doc.is_object()) {
    for (const auto& item : doc)
      if (JsonUsesKey(item)) return true;
  }
  return false;
}

// True when the request sends {{key}} somewhere (path, header, body).
bool UsesKey(const RequestTemplate& r) {
  if (TextUsesKey(r.path) || (r.body && TextUsesKey(*r.body)) || (r.json && JsonUsesKey(*r.json))) return true;
  return std::any_of(r.headers.begin(), r.headers.end(), [](const auto& h) { return TextUsesKey(h.second); });
}

// The whole value is {{key}} (white space inside the braces allowed).
bool IsKeyPlaceholder(const std::string& text) {
  static const RE2 kPlaceholder(R"(\{\{[ \t\n\v\f\r]*key[ \t\n\v\f\r]*\}\})", RE2::Latin1);
  return RE2::FullMatch(text, kPlaceholder);
}

nlohmann::json DropKeyMembers(const nlohmann::json& doc) {
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it.value().is_string() && IsKeyPlaceholder(it.value().get<std::string>())) continue;
      out[it.key()] = DropKeyMembers(it.value());
    }
    return out;
  }
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : doc) out.push_back(DropKeyMembers(item));
    return out;
  }
  return doc;
}

// The server a listed instance URL names, as "host, port N" with the host
// lower-cased, every loopback spelling (localhost, 127.0.0.1, [::1]) as
// localhost and the scheme's default port filled in; "" when templated or
// not parsed (then only the text is compared).
std::string ServerOf(const std::string& url) {
  if (url.find("{{") != std::string::npos) return "";
  const bool https = url.rfind("https://", 0) == 0;
  std::string authority = url.substr(url.find("://") + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  authority = authority.substr(authority.find('@') == std::string::npos ? 0 : authority.find('@') + 1);
  std::string host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    const auto end = authority.find(']');
    if (end == std::string::npos) return "";
    host = authority.substr(1, end - 1);
    if (end + 1 < authority.size() && authority[end + 1] == ':') port = authority.substr(end + 2);
  } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  while (!host.empty() && host.back() == '.') host.pop_back();  // "localhost." is localhost
  if (host.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) return "";
  if (host == "localhost" || host == "127.0.0.1" || host == "::1") host = "localhost";
  if (port.empty()) port = https ? "443" : "80";
  return "host " + host + ", port " + std::to_string(std::stoi(port));
}

// Two callers' headers are one credential when they are the same set (names
// case-insensitive, values as written), unless a value differs per request
// ({{uuid}}). One credential in two callers' hands makes the service see one
// caller, and every "one caller got another's answer" a false violation.
bool SameCredential(const HeaderList& a, const HeaderList& b) {
  static const RE2 kPerRequest(R"(\{\{[ \t\n\v\f\r]*uuid[ \t\n\v\f\r]*\}\})", RE2::Latin1);
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  auto canonical = [&](const HeaderList& h) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, value] : h) out.emplace_back(lower(name), value);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const auto& [name, value] : a)
    if (RE2::PartialMatch(value, kPerRequest)) return false;
  return canonical(a) == canonical(b);
}

class TargetLoader {
 public:
  TargetLoader(const std::string& file, std::string profile) : r_(file), profile_override_(std::move(profile)) {}

  // `instances: N` (started, N >= 1, needs `start`) or `instances: [URL, ...]`
  // (already running, no `start`).
  void Instances(const YAML::Node& node, TargetDescription& t) {
    if (node.IsSequence()) {
      if (t.start)
        r_.Fail(node, "instances: a list of URLs describes a target already running behind them; it takes no "
                      "'start' (give 'instances: N' to start N processes)");
      if (node.size() == 0) r_.Fail(node, "instances: list at least one base URL");
      std::vector<std::string> seen, servers;
      for (const auto& item : node) {
        std::string url = Templated(item, "instances[]");
        if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
          r_.Fail(item, "instances: '" + url + "' must start with http:// or https://");
        while (!url.empty() && url.back() == '/') url.pop_back();
        if (std::find(seen.begin(), seen.end(), url) != seen.end())
          r_.Fail(item, "instances: '" + url + "' is listed twice (one instance, one URL)");
        // The same server spelt otherwise would be balanced to as two.
        const std::string server = ServerOf(url);
        if (auto same = std::find(servers.begin(), servers.end(), server); !server.empty() && same != servers.end())
          r_.Fail(item, "instances: '" + url + "' names the same server as '" + seen[same - servers.begin()] +
                            "' (" + server + "): one instance, one server");
        seen.push_back(url);
        servers.push_back(server);
      }
      t.instance_urls = std::move(seen);
      t.instance_count = static_cast<int>(t.instance_urls.size());
      return;
    }
    const long long n = r_.Int(node, "instances");
    if (n < 1 || n > kMostInstances)
      r_.Fail(node, "instances must be between 1 and " + std::to_string(kMostInstances) + ", found " +
                        std::to_string(n));
    if (n > 1 && !t.start)
      r_.Fail(node, "instances: " + std::to_string(n) + " starts " + std::to_string(n) +
                        " processes and needs 'start' (for a target already running, list its URLs: "
                        "instances: [URL, ...])");
    t.instance_count = static_cast<int>(n);
  }

  BalancePolicy Balance(const YAML::Node& node) {
    const std::string text = r_.String(node, "balance");
    for (BalancePolicy p : {BalancePolicy::kRoundRobin, BalancePolicy::kByKey, BalancePolicy::kRandom}) {
      if (text == BalancePolicyName(p)) return p;
    }
    r_.Fail(node, "balance must be round_robin, by_key or random, found '" + text + "'" +
                      yaml::DidYouMean(text, {"round_robin", "by_key", "random"}));
    return BalancePolicy::kRoundRobin;
  }

  // 4194304, "512KiB", "4MiB", "1GiB": at least 1 KiB, at most 1 GiB.
  std::uint64_t ByteSize(const YAML::Node& node, const std::string& what) {
    const std::string text = r_.String(node, what);
    std::size_t digits = 0;
    while (digits < text.size() && digits < 12 && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    const std::string unit = text.substr(digits);
    std::uint64_t scale = unit.empty() || unit == "B" ? 1 : unit == "KiB" ? 1 << 10 : unit == "MiB" ? 1 << 20
                        : unit == "GiB" ? 1 << 30 : 0;
    if (digits == 0 || scale == 0) r_.Fail(node, what + ": expected bytes, or a number with B, KiB, MiB or GiB");
    const std::uint64_t n = std::stoull(text.substr(0, digits)) * scale;
    if (n < 1024 || n > (std::uint64_t{1} << 30)) r_.Fail(node, what + ": must be between 1KiB and 1GiB");
    return n;
  }

  TargetDescription Load(const std::string& text) {
    const YAML::Node root = r_.Load(text);
    if (!root.IsDefined() || root.IsNull()) r_.Fail(root, "target file is empty");
    ExpandFileVariables(root);
    r_.CheckKeys(root,
                 {"name", "base_url", "start", "reset", "idempotency", "request_timeout", "headers",
                  "compare_headers", "volatile", "actions", "probes", "hooks", "batch", "arrival_header",
                  "services", "messages", "broker", "max_body", "max_kept", "egress", "profile", "callers", "isolation",
                  "instances", "balance", "shared_store", "http", "trace", "tls"},
                 "target");
    TargetDescription t;
    t.file = r_.file();
    t.name = r_.String(r_.Required(root, "name", "target"), "name");
    if (root["start"]) t.start = Start(root["start"]);
    if (root["instances"]) Instances(root["instances"], t);
    if (root["balance"]) t.balance = Balance(root["balance"]);
    if (root["shared_store"]) {
      t.shared_store = r_.Bool(root["shared_store"], "shared_store");
      // Instances that share nothing must each see all of a key's requests.
      if (!t.shared_store && t.instance_count > 1 && t.balance != BalancePolicy::kByKey)
        r_.Fail(root["shared_store"], "shared_store: false with " + std::to_string(t.instance_count) +
                                          " instances needs balance: by_key (instances that share no store must "
                                          "each get every request of a key)");
    }
    if (t.instance_urls.empty()) {
      YAML::Node base = r_.Required(root, "base_url", "target");
      t.base_url = Templated(base, "base_url");
      if (t.base_url.rfind("http://", 0) != 0 && t.base_url.rfind("https://", 0) != 0)
        r_.Fail(base, "base_url must start with http:// or https://");
    } else {
      if (root["base_url"])
        r_.Fail(root["base_url"], "base_url: give base_url or a list of instance URLs (instances: [URL, ...]), "
                                  "not both; the first URL is the main instance's");
      t.base_url = t.instance_urls.front();
    }
    if (root["reset"]) t.reset = Call(root["reset"], "reset", {});
    if (root["isolation"]) {
      const std::string isolation = r_.String(root["isolation"], "isolation");
      if (isolation != "namespace" && isolation != "process")
        r_.Fail(root["isolation"], "isolation: '" + isolation + "' is not one of namespace, process");
      t.process_isolation = isolation == "process";
    }
    t.idempotency = Profile(root["profile"]).defaults;
    if (root["idempotency"]) t.idempotency = Contract(root["idempotency"], t.idempotency);
    if (root["request_timeout"]) t.request_timeout = r_.Timeout(root["request_timeout"], "request_timeout");
    if (root["max_body"]) t.max_body = ByteSize(root["max_body"], "max_body");
    if (root["max_kept"]) t.max_kept = ByteSize(root["max_kept"], "max_kept");
    if (root["headers"]) t.headers = Headers(root["headers"], "headers");
    if (root["compare_headers"]) t.compare_headers = r_.StringList(root["compare_headers"], "compare_headers");
    if (root["arrival_header"]) t.arrival_header = HeaderName(root["arrival_header"], "arrival_header");
    ParseHttpSettings(r_, root, t.http);
    ParseTlsSettings(r_, root, t.file, t.tls);
    if (root["volatile"]) t.volatile_paths = Paths(root["volatile"], "volatile");
    YAML::Node actions = r_.Required(root, "actions", "target");
    r_.ExpectMap(actions, "actions");
    if (actions.size() == 0) r_.Fail(actions, "actions: declare at least one action");
    for (auto it = actions.begin(); it != actions.end(); ++it) {
      std::string name = Name(it->first, "action");
      t.actions[name] = Action(name, it->second);
    }
    if (root["probes"]) {
      r_.ExpectMap(root["probes"], "probes");
      for (auto it = root["probes"].begin(); it != root["probes"].end(); ++it) {
        std::string name = Name(it->first, "probe");
        if (name == "records") r_.Fail(it->first, "probe name 'records' is reserved for records probes");
        t.probes[name] = Probe(name, it->second);
      }
    }
    if (root["hooks"]) {
      r_.ExpectMap(root["hooks"], "hooks");
      for (auto it = root["hooks"].begin(); it != root["hooks"].end(); ++it) {
        std::string name = Name(it->first, "hook");
        HookDescription h;
        h.name = name;
        h.call = Call(it->second, "hook '" + name + "'", {"role"});
        h.role = HookRole(name, it->second);
        h.mark = r_.MarkOf(it->first);
        for (const auto& [other, earlier] : t.hooks)
          if (!h.role.empty() && earlier.role == h.role)
            r_.Fail(it->second["role"] ? it->second["role"] : it->first,
                    "hook '" + name + "': hook '" + other + "' already has role " + h.role + "; one hook per role");
        t.hooks[name] = h;
      }
    }
    if (root["batch"]) t.batch = Batch(root["batch"]);
    if (root["services"]) {
      r_.ExpectMap(root["services"], "services");
      for (auto it = root["services"].begin(); it != root["services"].end(); ++it) {
        std::string name = Name(it->first, "service");
        t.services[name] = Service(name, it->second);
      }
    }
    if (root["messages"]) {
      r_.ExpectMap(root["messages"], "messages");
      for (auto it = root["messages"].begin(); it != root["messages"].end(); ++it) {
        std::string name = Name(it->first, "message");
        t.messages[name] = Message(name, it->second);
      }
    }
    if (root["broker"]) t.broker = Broker(root["broker"]);
    if (root["egress"]) {
      r_.ExpectMap(root["egress"], "egress");
      for (auto it = root["egress"].begin(); it != root["egress"].end(); ++it) {
        std::string name = Name(it->first, "egress");
        t.egress[name] = Egress(name, it->second, t.services);
      }
    }
    if (root["callers"]) {
      r_.ExpectMap(root["callers"], "callers");
      for (auto it = root["callers"].begin(); it != root["callers"].end(); ++it) {
        CallerDescription c;
        c.name = Name(it->first, "callers");
        c.mark = r_.MarkOf(it->first);
        const std::string what = "callers." + c.name;
        r_.CheckKeys(it->second, {"headers"}, what);
        c.headers = Headers(r_.Required(it->second, "headers", what), what + ".headers");
        if (c.headers.empty()) r_.Fail(it->second, what + ": headers must name at least one header");
        for (const CallerDescription& earlier : t.callers) {
          if (!SameCredential(earlier.headers, c.headers)) continue;
          std::string shown;
          for (const auto& [name, value] : c.headers) shown += (shown.empty() ? "" : ", ") + name + ": " + value;
          r_.Fail(it->first, what + ": the same headers as callers." + earlier.name + " (" + shown +
                                 "): the service cannot tell the two callers apart; give each its own credential");
        }
        t.callers.push_back(std::move(c));
      }
    }
    for (const auto& [node, name] : egress_uses_) {
      if (t.egress.count(name) == 0) {
        std::vector<std::string> declared;
        for (const auto& [n, e] : t.egress) declared.push_back(n);
        r_.Fail(node, "egress: '" + name + "' is not a downstream declared under 'egress'" +
                          yaml::DidYouMean(name, declared));
      } else if (t.egress.at(name).tcp) {
        r_.Fail(node, "egress: '" + name + "' is a tcp egress (protocol: tcp): it keeps no record of requests to probe");
      }
    }
    // An action's `calls:` name http egress downstreams (a store is no call to kill after).
    for (const auto& [node, name] : calls_uses_) {
      std::vector<std::string> http;
      for (const auto& [n, e] : t.egress)
        if (!e.tcp) http.push_back(n);
      if (t.egress.count(name) == 0)
        r_.Fail(node, "calls: '" + name + "' is not a downstream declared under 'egress'" + yaml::DidYouMean(name, http));
      else if (t.egress.at(name).tcp)
        r_.Fail(node, "calls: '" + name + "' is a tcp egress (protocol: tcp, the service's store): calls names http downstreams");
    }
    CheckRoleOf(t);
    AddFromAnswerCaptures(t);
    for (const auto& [node, name] : caller_uses_) {
      std::vector<std::string> declared;
      for (const auto& c : t.callers) declared.push_back(c.name);
      if (std::find(declared.begin(), declared.end(), name) == declared.end())
        r_.Fail(node, "caller: '" + name + "' is not a caller declared under 'callers'" +
                          yaml::DidYouMean(name, declared));
    }
    if (t.idempotency.key_header.empty()) {
      for (auto it = actions.begin(); it != actions.end(); ++it) {
        const ActionDescription& a = t.actions[it->first.Scalar()];
        if (!UsesKey(a.request))
          r_.Fail(it->first, "action '" + a.name +
                                 "' never sends {{key}}, and idempotency.key_header is none: put {{key}} where "
                                 "the target reads its idempotency key (a body member, a query parameter)");
      }
    }
    for (const auto& [node, base] : bases_) {
      if (t.services.count(base) == 0) {
        std::vector<std::string> declared;
        for (const auto& [n, svc] : t.services) declared.push_back(n);
        r_.Fail(node, "base: '" + base + "' is not a service declared under 'services'" +
                          yaml::DidYouMean(base, declared));
      }
    }
    std::vector<std::string> known = BuiltinTemplateVariables();
    for (const auto& [name, svc] : t.services)
      for (const char* part : {".url", ".port", ".pid"}) known.push_back("services." + name + part);
    for (const auto& [name, e] : t.egress)
      for (const char* part : {".url", ".port", ".address"})
        if (std::string(part) != (e.tcp ? ".url" : ".address")) known.push_back("egress." + name + part);
    for (const auto& [name, a] : t.actions)
      for (const auto& [var, path] : a.capture) known.push_back(var);
    // {{slow_ms}}: the declared lease x 1.5 in ms (a request slower than its lease).
    if (t.idempotency.lease) known.push_back(kSlowMsVariable);
    for (const auto& use : templates_) {
      if (!t.idempotency.lease) {
        auto vars = TemplateVariables(use.text);
        if (vars.ok() && std::find(vars->begin(), vars->end(), kSlowMsVariable) != vars->end())
          r_.Fail(use.node, std::string("'{{") + kSlowMsVariable +
                                "}}' is the declared lease x 1.5 in ms: declare idempotency.lease");
      }
      std::vector<std::string> k = known;
      k.insert(k.end(), use.extra.begin(), use.extra.end());
      r_.CheckTemplate(use.node, use.text, k);
    }
    CheckActionRoles(actions, t);
    return t;
  }

 private:
  std::string Name(const YAML::Node& node, const std::string& what) {
    std::string s = r_.String(node, what + " name");
    static const RE2 kName("[A-Za-z_][A-Za-z0-9_.-]*", RE2::Latin1);
    if (!RE2::FullMatch(s, kName)) r_.Fail(node, "bad " + what + " name '" + s + "' (letters, digits, _ . -)");
    return s;
  }

  std::string Templated(const YAML::Node& node, const std::string& what) {
    std::string s = r_.String(node, what);
    templates_.push_back({node, s, extra_});
    return s;
  }

  void TemplatedJson(const YAML::Node& node) {
    if (node.IsScalar()) {
      templates_.push_back({node, node.Scalar(), extra_});
    } else if (node.IsSequence()) {
      for (const auto& item : node) TemplatedJson(item);
    } else if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) TemplatedJson(it->second);
    }
  }

  // `http`: HTTP header fields (names are tokens; values carry no CR, LF,
  // NUL or other control byte, which would split or truncate the request).
  HeaderList Headers(const YAML::Node& node, const std::string& what, bool http = true) {
    HeaderList h = r_.StringPairs(node, what);
    for (auto it = node.begin(); it != node.end(); ++it) {
      templates_.push_back({it->second, it->second.Scalar(), extra_});
      if (!http) continue;
      HeaderName(it->first, what + " name");
      const std::string& v = it->second.Scalar();
      for (unsigned char c : v) {
        if ((c < 0x20 && c != '\t') || c == 0x7F) {
          char code[8];
          std::snprintf(code, sizeof code, "0x%02X", c);
          r_.Fail(it->second, what + " '" + it->first.Scalar() + "': the value holds the control byte " + code +
                                  " (CR, LF and NUL would split or cut the request)");
        }
      }
    }
    return h;
  }

  std::vector<JsonPath> Paths(const YAML::Node& node, const std::string& what) {
    if (!node.IsSequence()) r_.Fail(node, what + " must be a list of JSON paths");
    std::vector<JsonPath> out;
    for (const auto& item : node) out.push_back(r_.Path(item, what + " item"));
    return out;
  }

  std::vector<std::string> Argv(const YAML::Node& node, const std::string& what) {
    std::vector<std::string> argv = r_.StringList(node, what);
    if (argv.empty()) r_.Fail(node, what + " must not be empty");
    for (const auto& item : node) templates_.push_back({item, item.Scalar(), extra_});
    return argv;
  }

  RequestTemplate Request(const YAML::Node& node, const std::string& what, bool body_only = false) {
    RequestTemplate rq;
    rq.mark = r_.MarkOf(node);
    if (body_only) {
      r_.CheckKeys(node, {"json", "body", "content_type"}, what);
    } else {
      r_.CheckKeys(node, {"method", "path", "headers", "json", "body", "content_type", "base"}, what);
      if (node["base"]) {
        rq.base = r_.String(node["base"], what + ".base");
        bases_.emplace_back(node["base"], rq.base);
      }
      if (node["method"]) {
        rq.method = r_.String(node["method"], what + ".method");
        if (std::find(kMethods.begin(), kMethods.end(), rq.method) == kMethods.end())
          r_.Fail(node["method"], what + ".method: unknown HTTP method '" + rq.method + "'" +
                                      yaml::DidYouMean(rq.method, kMethods));
      }
      rq.path = Templated(r_.Required(node, "path", what), what + ".path");
      if (rq.path.empty() || rq.path[0] != '/') r_.Fail(node["path"], what + ".path must start with '/'");
      if (node["headers"]) rq.headers = Headers(node["headers"], what + ".headers");
    }
    if (node["json"] && node["body"]) r_.Fail(node["body"], what + ": give json or body, not both");
    if (node["json"]) {
      rq.json = r_.Json(node["json"]);
      TemplatedJson(node["json"]);
    }
    if (node["body"]) rq.body = Templated(node["body"], what + ".body");
    if (node["content_type"]) rq.content_type = ContentType(node, what);
    if (body_only && !rq.json && !rq.body) r_.Fail(node, what + ": give json or body");
    return rq;
  }

  // `content_type:` of a block with json or body (a header value: no CR/LF).
  std::string ContentType(const YAML::Node& node, const std::string& what) {
    const YAML::Node ct = node["content_type"];
    std::string s = r_.String(ct, what + ".content_type");
    if (!node["json"] && !node["body"]) r_.Fail(ct, what + ".content_type: there is no body (json or body) to type");
    if (s.empty() || s.find_first_of("\r\n") != std::string::npos)
      r_.Fail(ct, what + ".content_type: '" + s + "' is not a header value");
    return s;
  }

  // variants: {NAME: {query, headers, patch, json, body, content_type}}; a
  // message's (`entry`) may also give `fields` (its broker entry's).
  std::map<std::string, RequestVariant> Variants(const YAML::Node& node, const std::string& what,
                                                 const RequestTemplate& request,
                                                 const std::optional<RequestTemplate>& other_payload,
                                                 bool entry = false) {
    r_.ExpectMap(node, what + ".variants");
    std::map<std::string, RequestVariant> out;
    for (auto it = node.begin(); it != node.end(); ++it) {
      RequestVariant v;
      v.name = Name(it->first, "variant");
      v.mark = r_.MarkOf(it->first);
      const std::string vw = what + " variant '" + v.name + "'";
      const YAML::Node b = it->second;
      r_.ExpectMap(b, vw);
      std::vector<std::string> keys = {"query", "headers", "patch", "json", "body", "content_type"};
      if (entry) keys.push_back("fields");
      r_.CheckKeys(b, keys, vw);
      if (b.size() == 0) r_.Fail(b, vw + " changes nothing: give query, headers, patch, json or body");
      if (b["fields"]) v.fields = Headers(b["fields"], vw + ".fields", false);
      if (b["query"]) v.query = Headers(b["query"], vw + ".query", /*http=*/false);
      if (b["headers"]) {
        v.headers = Headers(b["headers"], vw + ".headers");
        for (auto h = b["headers"].begin(); h != b["headers"].end(); ++h) HeaderName(h->first, vw + ".headers name");
      }
      if (b["json"] && b["body"]) r_.Fail(b["body"], vw + ": give json or body, not both");
      if (b["patch"] && (b["json"] || b["body"]))
        r_.Fail(b["patch"], vw + ": give patch (changes to the action's json body) or a whole body, not both");
      if (b["json"]) {
        v.json = r_.Json(b["json"]);
        TemplatedJson(b["json"]);
      }
      if (b["body"]) v.body = Templated(b["body"], vw + ".body");
      if (b["content_type"]) v.content_type = ContentType(b, vw);
      if (b["patch"]) {
        r_.ExpectMap(b["patch"], vw + ".patch");
        if (!request.json)
          r_.Fail(b["patch"], vw + ".patch: the action's request has no json body to patch (give json or body instead)");
        for (auto p = b["patch"].begin(); p != b["patch"].end(); ++p) {
          JsonPath path = r_.Path(p->first, vw + ".patch path");
          if (path.has_wildcard() || path.segments().empty())
            r_.Fail(p->first, vw + ".patch: '" + path.text() + "' must name one member or element (no [*], not $)");
          v.patch.emplace_back(path, r_.Json(p->second));
          TemplatedJson(p->second);
        }
        // Applied now to each body the variant may patch: a template's shape
        // is its rendered request's, so what cannot apply here never will.
        CheckPatches(b["patch"], vw, v, *request.json, "the action's json body");
        if (other_payload && other_payload->json)
          CheckPatches(b["patch"], vw, v, *other_payload->json, "the other_payload's json body");
      }
      out[v.name] = v;
    }
    return out;
  }

  // The patches of `v` (from `node`, in order) applied to a copy of `body`.
  void CheckPatches(const YAML::Node& node, const std::string& vw, const RequestVariant& v, nlohmann::json body,
                    const std::string& whose) {
    auto p = node.begin();
    for (const auto& [path, value] : v.patch) {
      Status s = path.SetIn(body, value);
      if (!s.ok())
        r_.Fail(p->first, vw + ".patch: '" + path.text() + "' cannot apply to " + whose + ": " + s.message());
      ++p;
    }
  }

  // {request: ...} | {command: [...]} plus `extra` keys the caller reads.
  TargetCall Call(const YAML::Node& node, const std::string& what, std::vector<std::string> extra) {
    std::vector<std::string> allowed = {"request", "command"};
    allowed.insert(allowed.end(), extra.begin(), extra.end());
    r_.CheckKeys(node, allowed, what);
    TargetCall c;
    c.mark = r_.MarkOf(node);
    bool has_req = static_cast<bool>(node["request"]);
    bool has_cmd = static_cast<bool>(node["command"]);
    if (has_req == has_cmd) r_.Fail(node, what + ": give exactly one of 'request' or 'command'");
    if (has_req) c.request = Request(node["request"], what + ".request");
    if (has_cmd) c.command = Argv(node["command"], what + ".command");
    return c;
  }

  StartCommand Start(const YAML::Node& node) {
    StartCommand s;
    s.mark = r_.MarkOf(node);
    if (node.IsSequence()) {  // shorthand: start: [argv...]
      s.argv = Argv(node, "start");
      return s;
    }
    r_.CheckKeys(node,
                 {"argv", "env", "cwd", "port_from_stdout", "free_port", "flaw_args", "ready", "start_timeout",
                  "stop_timeout"},
                 "start");
    s.argv = Argv(r_.Required(node, "argv", "start"), "start.argv");
    if (node["env"]) {
      for (const auto& [k, v] : r_.StringPairs(node["env"], "start.env")) s.env[k] = v;
      for (auto it = node["env"].begin(); it != node["env"].end(); ++it)
        templates_.push_back({it->second, it->second.Scalar(), extra_});
    }
    if (node["cwd"]) s.cwd = Templated(node["cwd"], "start.cwd");
    if (node["port_from_stdout"]) {
      s.port_from_stdout = r_.String(node["port_from_stdout"], "start.port_from_stdout");
      auto re = Pattern::Compile(s.port_from_stdout);
      if (!re.ok()) r_.Fail(node["port_from_stdout"], "start.port_from_stdout: " + re.status().message());
      if (re->groups() < 1) r_.Fail(node["port_from_stdout"], "start.port_from_stdout needs a capture group for the port");
    }
    if (node["free_port"]) s.free_port = r_.Bool(node["free_port"], "start.free_port");
    if (s.free_port && !s.port_from_stdout.empty())
      r_.Fail(node["free_port"], "start: give free_port or port_from_stdout, not both");
    if (node["flaw_args"]) s.flaw_args = Argv(node["flaw_args"], "start.flaw_args");
    if (node["ready"]) {
      YAML::Node rn = node["ready"];
      r_.CheckKeys(rn, {"request", "status", "timeout"}, "start.ready");
      ReadinessCheck rc;
      rc.request.mark = r_.MarkOf(rn);
      // No default path: which request says "ready" is the target's to declare.
      if (rn["request"]) {
        rc.request = Request(rn["request"], "start.ready.request");
      } else {
        r_.Fail(rn, "start.ready needs a request (the target's own readiness check)");
      }
      if (rn["status"]) rc.status = r_.HttpStatus(rn["status"], "start.ready.status");
      if (rn["timeout"]) rc.timeout = r_.Timeout(rn["timeout"], "start.ready.timeout");
      s.ready = rc;
    }
    if (node["start_timeout"]) s.start_timeout = r_.Timeout(node["start_timeout"], "start.start_timeout");
    if (node["stop_timeout"]) s.stop_timeout = r_.DurationOf(node["stop_timeout"], "start.stop_timeout");
    return s;
  }

  // The semantics profile: --profile, else the file's `profile:`, else ietf.
  const SemanticsProfile& Profile(const YAML::Node& node) {
    if (!profile_override_.empty()) {
      if (const SemanticsProfile* p = FindProfile(profile_override_)) return *p;
      throw yaml::ConfigError{Status::InvalidArgument("--profile: unknown profile '" + profile_override_ +
                                                     "' (known: " + ProfileNames() + ")")};
    }
    if (!node) return *FindProfile("ietf");
    const std::string name = r_.String(node, "profile");
    if (const SemanticsProfile* p = FindProfile(name)) return *p;
    std::vector<std::string> known;
    for (const auto& p : Profiles()) known.push_back(p.name);
    r_.Fail(node, "unknown profile '" + name + "' (known: " + ProfileNames() + ")" + yaml::DidYouMean(name, known));
  }

  IdempotencyContract Contract(const YAML::Node& node, IdempotencyContract c) {
    r_.CheckKeys(node,
                 {"key_header", "key", "replay", "in_progress", "mismatch", "missing_key", "retryable", "window",
                  "lease", "retry_after", "recovery_bound", "key_max_length", "path_equivalence",
                  "validation_first", "natural_key", "fingerprint"},
                 "idempotency");
    if (node["validation_first"]) c.validation_first = r_.Bool(node["validation_first"], "idempotency.validation_first");
    if (node["key_header"] && node["key_header"].IsScalar() && node["key_header"].Scalar() == "none") {
      c.key_header.clear();  // the actions' templates carry {{key}}
    } else if (node["key_header"]) {
      c.key_header = HeaderName(node["key_header"], "idempotency.key_header");
    }
    if (node["replay"]) {
      YAML::Node rn = node["replay"];
      ReplayMarker m;
      if (rn.IsScalar()) {
        m.header = HeaderName(rn, "idempotency.replay");
      } else {
        r_.CheckKeys(rn, {"header", "body", "value"}, "idempotency.replay");
        if (rn["header"].IsDefined() == rn["body"].IsDefined()) {
          r_.Fail(rn, "idempotency.replay needs exactly one of header (a header name) or body (a JSON path)");
        }
        if (rn["header"]) m.header = HeaderName(rn["header"], "idempotency.replay.header");
        if (rn["body"]) m.body = r_.Path(rn["body"], "idempotency.replay.body");
        if (rn["value"]) m.value = r_.String(rn["value"], "idempotency.replay.value");
      }
      c.replay = m;
    }
    if (node["key"]) {
      const std::string k = r_.String(node["key"], "idempotency.key");
      if (k != "required" && k != "optional")
        r_.Fail(node["key"], "idempotency.key must be required or optional, found '" + k + "'");
      c.key_optional = k == "optional";
    }
    if (node["in_progress"]) StatusList(node["in_progress"], "idempotency.in_progress", c.in_progress, c.in_progress_also);
    if (node["mismatch"]) StatusList(node["mismatch"], "idempotency.mismatch", c.mismatch, c.mismatch_also);
    // One status may be both in_progress and mismatch (many services answer
    // 409 to both): an answer with it counts as in progress.
    if (node["retry_after"]) {
      // `required` or `{level: required, min: 2s}` (min: the shortest delay it may give).
      YAML::Node level = node["retry_after"];
      if (level.IsMap()) {
        r_.CheckKeys(level, {"level", "min"}, "idempotency.retry_after");
        if (level["min"]) {
          c.retry_after_min = r_.DurationOf(level["min"], "idempotency.retry_after.min");
          if (c.retry_after_min < std::chrono::seconds(1))
            r_.Fail(level["min"], "idempotency.retry_after.min must be at least 1s (a Retry-After counts whole "
                                  "seconds, and 0 says retry at once)");
        }
        level = r_.Required(level, "level", "idempotency.retry_after");
      }
      const std::string ra = r_.String(level, "idempotency.retry_after");
      if (ra == "required") {
        c.retry_after = IdempotencyContract::RetryAfter::kRequired;
      } else if (ra == "recommended") {
        c.retry_after = IdempotencyContract::RetryAfter::kRecommended;
      } else if (ra != "none") {
        r_.Fail(level, "idempotency.retry_after must be required, recommended or none, found '" + ra + "'");
      }
    }
    if (node["recovery_bound"]) {
      c.recovery_bound = r_.DurationOf(node["recovery_bound"], "idempotency.recovery_bound");
      c.recovery_bound_declared = true;
    }
    if (node["natural_key"]) c.natural_key = r_.Path(node["natural_key"], "idempotency.natural_key");
    if (node["fingerprint"]) {
      const std::string f = r_.String(node["fingerprint"], "idempotency.fingerprint");
      if (f == "bytes") {
        c.fingerprint = IdempotencyContract::Fingerprint::kBytes;
      } else if (f != "json") {
        r_.Fail(node["fingerprint"], "idempotency.fingerprint must be json or bytes, found '" + f + "'");
      }
    }
    if (node["missing_key"]) c.missing_key = r_.HttpStatus(node["missing_key"], "idempotency.missing_key");
    if (node["retryable"]) {
      if (!node["retryable"].IsSequence()) r_.Fail(node["retryable"], "idempotency.retryable must be a list of statuses");
      for (const auto& item : node["retryable"]) c.retryable.push_back(r_.HttpStatus(item, "idempotency.retryable item"));
    }
    if (node["window"]) c.window = r_.DurationOf(node["window"], "idempotency.window");
    if (node["lease"]) c.lease = r_.DurationOf(node["lease"], "idempotency.lease");
    if (node["key_max_length"]) {
      const long long n = r_.Int(node["key_max_length"], "idempotency.key_max_length");
      if (n < 1 || n > 8192)
        r_.Fail(node["key_max_length"], "idempotency.key_max_length must be between 1 and 8192, found " + std::to_string(n));
      c.key_max_length = static_cast<std::size_t>(n);
    }
    if (node["path_equivalence"]) c.path_equivalence = PathSpellings(node["path_equivalence"]);
    return c;
  }

  // path_equivalence: {trailing_slash, case, query_order: same|distinct, query: {NAME: VALUE}}
  PathEquivalence PathSpellings(const YAML::Node& node) {
    const std::string what = "idempotency.path_equivalence";
    r_.ExpectMap(node, what);
    r_.CheckKeys(node, {"trailing_slash", "case", "query_order", "query"}, what);
    PathEquivalence p;
    auto spelling = [&](const char* key, PathEquivalence::Spelling& out) {
      if (!node[key]) return;
      const std::string v = r_.String(node[key], what + "." + key);
      if (v == "same") {
        out = PathEquivalence::Spelling::kSame;
      } else if (v == "distinct") {
        out = PathEquivalence::Spelling::kDistinct;
      } else {
        r_.Fail(node[key], what + "." + key + " must be same or distinct, found '" + v + "'");
      }
    };
    for (const auto& s : kSpellings) spelling(s.key, p.*s.field);
    if (node["query"]) p.query = Headers(node["query"], what + ".query", /*http=*/false);
    if (!p.Declared())
      r_.Fail(node, what + " declares no spelling: give trailing_slash, case or query_order (same or distinct)");
    return p;
  }

  // An HTTP status or a non-empty list of distinct ones: the first into
  // `first`, the rest into `also`.
  void StatusList(const YAML::Node& node, const std::string& what, int& first, std::vector<int>& also) {
    also.clear();
    if (!node.IsSequence()) {
      first = r_.HttpStatus(node, what);
      return;
    }
    if (node.size() == 0) r_.Fail(node, what + " must name at least one status");
    std::vector<int> seen;
    for (const auto& item : node) {
      const int st = r_.HttpStatus(item, what + " item");
      if (std::find(seen.begin(), seen.end(), st) != seen.end())
        r_.Fail(item, what + ": status " + std::to_string(st) + " is listed twice");
      seen.push_back(st);
    }
    first = seen.front();
    also.assign(seen.begin() + 1, seen.end());
  }

  // A JSON path, or {header: NAME, regex: '...(group 1)...'}.
  CaptureRule Capture(const YAML::Node& node, const std::string& what) {
    CaptureRule rule;
    if (node.IsScalar()) {
      rule.path = r_.Path(node, what);
      return rule;
    }
    r_.CheckKeys(node, {"header", "regex"}, what);
    rule.header = HeaderName(r_.Required(node, "header", what), what + ".header");
    if (node["regex"]) {
      rule.pattern = r_.String(node["regex"], what + ".regex");
      auto re = Pattern::Compile(rule.pattern);
      if (!re.ok()) r_.Fail(node["regex"], what + ".regex: " + re.status().message());
      if (re->groups() < 1) r_.Fail(node["regex"], what + ".regex needs a capture group");
    }
    return rule;
  }

  std::string HeaderName(const YAML::Node& node, const std::string& what) {
    std::string s = r_.String(node, what);
    static const RE2 kToken("[!#$%&'*+.^_`|~0-9A-Za-z-]+", RE2::Latin1);
    if (!RE2::FullMatch(s, kToken)) r_.Fail(node, what + ": '" + s + "' is not a valid header name");
    return s;
  }

  ActionDescription Action(const std::string& name, const YAML::Node& node) {
    std::string what = "action '" + name + "'";
    r_.CheckKeys(node, {"request", "other_payload", "records", "capture", "volatile", "role", "of", "variants",
                        "fingerprint_ignores", "calls"}, what);
    ActionDescription a;
    a.name = name;
    a.mark = r_.MarkOf(node);
    ActionRoles(node, what, a);
    a.request = Request(r_.Required(node, "request", what), what + ".request");
    if (node["other_payload"]) a.other_payload = Request(node["other_payload"], what + ".other_payload", true);
    if (node["records"]) {
      RecordsProbe rp;
      rp.mark = r_.MarkOf(node["records"]);
      rp.call = Call(node["records"], what + ".records", {"count"});
      rp.count = r_.Path(r_.Required(node["records"], "count", what + ".records"), what + ".records.count");
      a.records = rp;
    }
    if (node["capture"]) {
      r_.ExpectMap(node["capture"], what + ".capture");
      for (auto it = node["capture"].begin(); it != node["capture"].end(); ++it) {
        std::string var = r_.String(it->first, what + ".capture name");
        static const RE2 kVar("[A-Za-z_][A-Za-z0-9_]*", RE2::Latin1);
        if (!RE2::FullMatch(var, kVar)) r_.Fail(it->first, "bad capture variable name '" + var + "'");
        const auto& builtin = BuiltinTemplateVariables();
        if (std::find(builtin.begin(), builtin.end(), var) != builtin.end())
          r_.Fail(it->first, "capture variable '" + var + "' shadows a built-in template variable");
        a.capture[var] = Capture(it->second, what + ".capture." + var);
      }
    }
    if (node["volatile"]) a.volatile_paths = Paths(node["volatile"], what + ".volatile");
    if (node["variants"]) a.variants = Variants(node["variants"], what, a.request, a.other_payload);
    if (node["fingerprint_ignores"]) {
      a.fingerprint_ignores = Paths(node["fingerprint_ignores"], what + ".fingerprint_ignores");
      if (!a.request.json) r_.Fail(node["fingerprint_ignores"], what + ".fingerprint_ignores needs a json: request body");
    }
    if (node["calls"]) {
      a.calls.emplace();
      if (!node["calls"].IsSequence()) r_.Fail(node["calls"], what + ".calls must be a list of egress names");
      for (const auto& item : node["calls"]) {
        a.calls->push_back(Name(item, what + ".calls"));
        calls_uses_.emplace_back(item, a.calls->back());
      }
    }
    return a;
  }

  // One role name at `node`, one of `roles`.
  std::string KnownRole(const YAML::Node& node, const std::string& what, const std::vector<std::string>& roles) {
    const std::string role = r_.String(node, what + ".role");
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
      std::string known;
      for (const auto& k : roles) known += (known.empty() ? "" : ", ") + k;
      r_.Fail(node, what + ": unknown role '" + role + "'" + yaml::DidYouMean(role, roles) + "; known: " + known);
    }
    return role;
  }

  // An action's `role: R` or `role: [R1, R2]` (an action that is several
  // things at once: an order endpoint that also charges), and its `of:`.
  void ActionRoles(const YAML::Node& node, const std::string& what, ActionDescription& a) {
    const YAML::Node roles = node["role"];
    if (roles && roles.IsSequence()) {
      if (roles.size() == 0) r_.Fail(roles, what + ".role: give at least one role");
      for (const auto& item : roles) {
        const std::string role = KnownRole(item, what, ActionRoleNames());
        if (a.HasRole(role)) r_.Fail(item, what + ".role: '" + role + "' is listed twice");
        a.roles.push_back(role);
      }
      if (a.roles.size() > 1 && a.HasRole("callback"))
        r_.Fail(roles, what + ".role: a callback is a notification to the target, not one role among others");
      a.role = a.roles.front();
      if (node["of"] && a.HasRole("create"))
        r_.Fail(node["of"], what + ": a create action is not 'of' another action");
      RoleOf(node, what, {}, a.role, a.of, /*role_read=*/true);
      return;
    }
    RoleOf(node, what, ActionRoleNames(), a.role, a.of);
    if (!a.role.empty()) a.roles = {a.role};
  }

  // `role:` (one of `roles`) and `of:` (an action name, checked once every
  // action is loaded: see CheckRoleOf). `role_read`: the caller read the role.
  void RoleOf(const YAML::Node& node, const std::string& what, const std::vector<std::string>& roles,
              std::string& role, std::string& of, bool role_read = false) {
    if (node["role"] && !role_read) role = KnownRole(node["role"], what, roles);
    if (node["of"]) {
      of = Name(node["of"], what + ".of");
      if (role.empty()) r_.Fail(node["of"], what + ": 'of' needs a 'role'");
      if (role == "create") r_.Fail(node["of"], what + ": a create action is not 'of' another action");
      if (role == kAppliedRole) message_of_.emplace_back(node["of"], what);  // of a message or a callback
      else if (role == "callback") callback_of_.emplace_back(node["of"], what);
      else role_of_.emplace_back(node["of"], what);
    }
  }

  // Every action has a role: scenarios ask for actions by role only, so an
  // action without one is never sent and a run would pass having tested
  // (almost) nothing. Checked last, so any other error in the file comes first.
  // A file written before roles: the error says what each action without
  // one looks like (role_hints.h), all of them at once.
  void CheckActionRoles(const YAML::Node& actions, const TargetDescription& t) {
    std::optional<YAML::Node> first;
    std::string message, others;
    for (auto it = actions.begin(); it != actions.end(); ++it) {
      const ActionDescription& a = t.actions.at(it->first.Scalar());
      if (!a.role.empty()) continue;
      const std::string guess = ActionRoleGuess(a, t);
      if (first) {
        others += (others.empty() ? "" : "; ") + ("'" + a.name + "'") + (guess.empty() ? " (no guess)" : " " + guess);
        continue;
      }
      first = it->first;
      std::string known;
      for (const auto& k : ActionRoleNames()) known += (known.empty() ? "" : ", ") + k;
      message = "action '" + a.name +
                "' has no role, and every scenario asks for actions by role, so it could never be "
                "tested: give it role: one of " + known + (guess.empty() ? "" : " (it " + guess + ")");
    }
    if (!first) return;
    if (!others.empty()) message += "; other actions without a role: " + others;
    r_.Fail(*first, message);
  }

  // Every `of:` names a declared action; an action's `of:` a create action,
  // a callback's a create or the callback it follows (a refund the payment);
  // an `applied` probe's `of:` a declared message or callback action.
  void CheckRoleOf(const TargetDescription& t) {
    std::vector<std::string> messages;
    for (const auto& [n, m] : t.messages) messages.push_back(n);
    for (const auto& [node, what] : message_of_) {
      const ActionDescription* callback = t.FindAction(node.Scalar());
      if (!t.messages.count(node.Scalar()) && (callback == nullptr || !callback->HasRole("callback")))
        r_.Fail(node, what + ".of: '" + node.Scalar() + "' is not a declared message (role " + kAppliedRole +
                          " counts a message's applications)" + yaml::DidYouMean(node.Scalar(), messages));
    }
    std::vector<std::string> declared;
    for (const auto& [n, a] : t.actions) declared.push_back(n);
    for (const auto& [node, what] : callback_of_) {
      const ActionDescription* of = t.FindAction(node.Scalar());
      if (of == nullptr)
        r_.Fail(node, what + ".of: '" + node.Scalar() + "' is not a declared action" +
                          yaml::DidYouMean(node.Scalar(), declared));
      if (!of->HasRole("create") && !of->HasRole("callback"))
        r_.Fail(node, what + ".of: action '" + of->name + "' has neither role create nor callback");
    }
    for (const auto& [node, what] : role_of_) {
      const ActionDescription* of = t.FindAction(node.Scalar());
      if (of == nullptr)
        r_.Fail(node, what + ".of: '" + node.Scalar() + "' is not a declared action" +
                          yaml::DidYouMean(node.Scalar(), declared));
      if (what.rfind("action ", 0) == 0 && !of->HasRole("create"))
        r_.Fail(node, what + ".of: action '" + of->name + "' does not have role create");
    }
  }

  // {{target_dir}} (the target file's folder, absolute) and {{env.NAME}}
  // (the harness's environment) in every value of the file, once, here: a
  // service shipped beside its target file starts from there, and an unset
  // variable is an error at its node, never an empty string.
  void ExpandFileVariables(YAML::Node node) {
    if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) ExpandFileVariables(it->second);
      return;
    }
    if (node.IsSequence()) {
      for (auto item : node) ExpandFileVariables(item);
      return;
    }
    if (!node.IsScalar() || node.Scalar().find("{{") == std::string::npos) return;
    const std::string dir = std::filesystem::absolute(std::filesystem::path(r_.file())).parent_path().string();
    auto expanded = ExpandSome(node.Scalar(), [&](const std::string& name) -> Result<std::optional<std::string>> {
      if (name == kTargetDirVariable) return std::optional<std::string>(dir);
      if (name.rfind("env.", 0) != 0) return std::optional<std::string>();
      const char* value = std::getenv(name.substr(4).c_str());
      if (value == nullptr)
        return Status::InvalidArgument("'{{" + name + "}}': the environment variable " + name.substr(4) +
                                       " is not set (set it, or write the value here)");
      return std::optional<std::string>(value);
    });
    if (!expanded.ok()) r_.Fail(node, expanded.status().message());
    node = *expanded;
  }

  // A hook's role: its `role:` (a capability a hook provides), else the
  // one its name spells by default (capabilities.h), else none.
  std::string HookRole(const std::string& name, const YAML::Node& node) {
    std::vector<std::string> roles;
    for (const auto& c : CapabilityTable())
      if (!c.hook.empty()) roles.push_back(c.name);
    if (node.IsMap() && node["role"]) return KnownRole(node["role"], "hook '" + name + "'", roles);
    for (const auto& c : CapabilityTable())
      if (!c.hook.empty() && c.hook == name) return c.name;
    return "";
  }

  // A from_answer probe's value is captured from its action's first 2xx
  // answer, under FromAnswerVariable (the runtime's captures keep it per biz).
  void AddFromAnswerCaptures(TargetDescription& t) {
    for (auto& [name, probe] : t.probes) {
      if (!probe.from_answer) continue;
      CaptureRule rule;
      rule.path = *probe.from_answer;
      t.actions.at(probe.of).capture[FromAnswerVariable(name)] = rule;
    }
  }

  ProbeDescription Probe(const std::string& name, const YAML::Node& node) {
    std::string what = "probe '" + name + "'";
    ProbeDescription p;
    p.name = name;
    p.mark = r_.MarkOf(node);
    if (node.IsMap() && node["egress"]) {
      EgressProbe(node, what, p);
    } else if (node.IsMap() && node["from_answer"]) {
      // A member of its action's answer: no call of its own.
      r_.CheckKeys(node, {"from_answer", "volatile", "role", "of", "counts", "sums"}, what);
      p.from_answer = r_.Path(node["from_answer"], what + ".from_answer");
      if (!node["of"]) r_.Fail(node["from_answer"], what + ".from_answer reads an action's answer: give of: ACTION");
      from_answer_.insert(what);
    } else {
      if (node.IsMap() && node["match"]) r_.Fail(node["match"], what + ".match needs egress: (an egress probe)");
      p.call = Call(node, what, {"value", "volatile", "role", "of", "counts", "sums", "caller"});
      if (node["caller"]) {
        if (!p.call.request) r_.Fail(node["caller"], what + ".caller sends its request as that caller: give request:");
        p.caller = Name(node["caller"], what + ".caller");
        caller_uses_.emplace_back(node["caller"], p.caller);
      }
    }
    RoleOf(node, what, ProbeRoleNames(), p.role, p.of);
    // What a consumer counter moves by per message applied (applied_once).
    if (node["counts"] && node["sums"])
      r_.Fail(node["sums"], what + ": give counts: applications or sums: PATH, not both");
    if (node["counts"] && r_.String(node["counts"], what + ".counts") != "applications")
      r_.Fail(node["counts"], what + ".counts must be applications (for a total of a message member: sums: PATH)");
    if (node["sums"]) p.sums = r_.Path(node["sums"], what + ".sums");
    if (node["value"]) {
      std::string v = r_.String(node["value"], what + ".value");
      if (v == "stdout") {
        if (!p.call.command) r_.Fail(node["value"], what + ".value: 'stdout' needs a command probe");
      } else {
        p.value = r_.Path(node["value"], what + ".value");
      }
    }
    if (node["volatile"]) p.volatile_paths = Paths(node["volatile"], what + ".volatile");
    return p;
  }

  // {egress: NAME, match: {method, path, fields: {PATH: text}}}: the egress
  // record's entries (see EgressMatch).
  void EgressProbe(const YAML::Node& node, const std::string& what, ProbeDescription& p) {
    r_.CheckKeys(node, {"egress", "match", "value", "volatile", "role", "of"}, what);
    p.egress = r_.String(node["egress"], what + ".egress");
    egress_uses_.emplace_back(node["egress"], p.egress);
    if (!node["match"]) return;
    const YAML::Node m = node["match"];
    r_.CheckKeys(m, {"method", "path", "fields"}, what + ".match");
    if (m["method"]) {
      p.match.method = r_.String(m["method"], what + ".match.method");
      if (std::find(kMethods.begin(), kMethods.end(), p.match.method) == kMethods.end())
        r_.Fail(m["method"], what + ".match.method: unknown HTTP method '" + p.match.method + "'" +
                                 yaml::DidYouMean(p.match.method, kMethods));
    }
    if (m["path"]) {
      p.match.path = r_.String(m["path"], what + ".match.path");
      if (p.match.path.empty() || p.match.path[0] != '/') r_.Fail(m["path"], what + ".match.path must start with '/'");
    }
    if (m["fields"]) {
      r_.ExpectMap(m["fields"], what + ".match.fields");
      for (auto it = m["fields"].begin(); it != m["fields"].end(); ++it)
        p.match.fields.emplace_back(r_.Path(it->first, what + ".match.fields key"),
                                    Templated(it->second, what + ".match.fields value"));
    }
  }

  // A downstream behind the harness's proxy (see EgressDescription).
  // `services`: the target's, already read (an egress to one takes its tls:).
  EgressDescription Egress(const std::string& name, const YAML::Node& node,
                           const std::map<std::string, ServiceDescription>& services) {
    const std::string what = "egress '" + name + "'";
    r_.ExpectMap(node, what);
    r_.CheckKeys(node, {"upstream", "record", "protocol", "tls", "key_header"}, what);
    EgressDescription e;
    e.name = name;
    e.mark = r_.MarkOf(node);
    YAML::Node up = r_.Required(node, "upstream", what);
    e.upstream = Templated(up, what + ".upstream");
    if (node["protocol"]) {
      const std::string protocol = r_.String(node["protocol"], what + ".protocol");
      if (protocol != "http" && protocol != "tcp")
        r_.Fail(node["protocol"], what + ".protocol: unknown protocol '" + protocol + "'" +
                                      yaml::DidYouMean(protocol, {"http", "tcp"}) + " (http, tcp)");
      e.tcp = protocol == "tcp";
    }
    if (e.tcp) {
      // Raw bytes: no request to record, no URL to forward to.
      if (node["record"]) r_.Fail(node["record"], what + ".record: a tcp egress has no requests to record (http only)");
      if (node["tls"]) r_.Fail(node["tls"], what + ".tls: a tcp egress copies raw bytes, it speaks no TLS of its own (http only)");
      if (node["key_header"]) r_.Fail(node["key_header"], what + ".key_header: a tcp egress has no requests to read a key from (http only)");
      if (e.upstream.find("://") != std::string::npos)
        r_.Fail(up, what + ".upstream of a tcp egress is HOST:PORT (e.g. \"127.0.0.1:{{services.postgres.port}}\"), not a URL");
      return e;
    }
    // A template ({{services.NAME.url}}) is checked once expanded, by the runtime.
    if (e.upstream.rfind("http://", 0) != 0 && e.upstream.rfind("https://", 0) != 0 &&
        e.upstream.rfind("{{", 0) != 0)
      r_.Fail(up, what + ".upstream must be an http:// or https:// URL");
    if (node["record"]) e.record = Paths(node["record"], what + ".record");
    if (node["key_header"]) {
      e.key_header = r_.String(node["key_header"], what + ".key_header");
      if (e.key_header == "none") e.key_header.clear();
      else if (e.key_header.empty()) r_.Fail(node["key_header"], what + ".key_header: a header name, or none");
    }
    // No tls: of its own: that of the service it forwards to, if it names one.
    for (const auto& [service, svc] : services) {
      if (node["tls"] || e.upstream.rfind("{{services." + service + ".url}}", 0) != 0) continue;
      e.tls = svc.tls;
    }
    ParseTlsSettings(r_, node, r_.file(), e.tls, what + ".tls");
    return e;
  }

  // The `batch` section (see BatchDescription).
  BatchDescription Batch(const YAML::Node& node) {
    const std::string what = "batch";
    r_.CheckKeys(node,
                 {"run", "failing_run", "result", "markers", "marker", "checksum", "partition_rows", "variants"},
                 what);
    BatchDescription b;
    b.mark = r_.MarkOf(node);
    extra_ = kBatchRunVars;
    b.run = Request(r_.Required(node, "run", what), "batch.run");
    if (node["variants"]) b.variants = Variants(node["variants"], what, b.run, std::nullopt);
    if (node["failing_run"]) {
      extra_ = kBatchFailVars;
      b.failing_run = Request(node["failing_run"], "batch.failing_run");
    }
    extra_ = kBatchResultVars;
    YAML::Node result = r_.Required(node, "result", what);
    b.result = Call(result, "batch.result", {"rows", "row_id", "volatile", "markers", "sum"});
    b.rows = r_.Path(r_.Required(result, "rows", "batch.result"), "batch.result.rows");
    // Per-row (row_id) or totals (sum): one form, said outright.
    if (result["sum"]) {
      if (result["row_id"])
        r_.Fail(result["sum"], "batch.result.sum: a totals result has no row_id; give row_id (rows is the array of "
                               "rows) or sum (rows is the row count)");
      if (result["volatile"])
        r_.Fail(result["volatile"], "batch.result.volatile: a totals result has no rows to leave fields out of");
      b.sum = r_.Path(result["sum"], "batch.result.sum");
    } else if (result["row_id"]) {
      b.row_id = r_.Path(result["row_id"], "batch.result.row_id");
    } else {
      r_.Fail(result, "batch.result needs row_id (rows is the array of rows) or sum (rows is the row count, sum the "
                      "target's own total of them)");
    }
    if (result["volatile"]) b.volatile_paths = Paths(result["volatile"], "batch.result.volatile");
    if (result["markers"]) b.markers = r_.Path(result["markers"], "batch.result.markers");
    if (node["markers"]) {
      if (b.markers) r_.Fail(node["markers"], "batch.markers: the markers are already read from batch.result.markers; give one");
      b.markers_call = Call(node["markers"], "batch.markers", {"items"});
      if (node["markers"]["items"]) b.markers_items = r_.Path(node["markers"]["items"], "batch.markers.items");
    }
    extra_.clear();
    if (node["marker"]) {
      YAML::Node m = node["marker"];
      r_.CheckKeys(m, {"key", "from", "to", "rows_written", "checksum"}, "batch.marker");
      if (m["key"]) b.marker.key = r_.Path(m["key"], "batch.marker.key");
      b.marker.from = r_.Path(r_.Required(m, "from", "batch.marker"), "batch.marker.from");
      b.marker.to = r_.Path(r_.Required(m, "to", "batch.marker"), "batch.marker.to");
      b.marker.rows_written = r_.Path(r_.Required(m, "rows_written", "batch.marker"), "batch.marker.rows_written");
      if (m["checksum"]) b.marker.checksum = r_.Path(m["checksum"], "batch.marker.checksum");
    } else if (b.declares_markers()) {
      r_.Fail(node, "batch: markers are declared but not their fields: add 'marker: {from, to, rows_written}'");
    }
    if (node["checksum"]) {
      std::string c = r_.String(node["checksum"], "batch.checksum");
      if (c == "none") b.checksum = ChecksumAlgorithm::kNone;
      else if (c == "sha256-rows") b.checksum = ChecksumAlgorithm::kSha256Rows;
      else if (c == "same-as-clean") b.checksum = ChecksumAlgorithm::kSameAsClean;
      else r_.Fail(node["checksum"], "batch.checksum: unknown algorithm '" + c + "'" +
                                         yaml::DidYouMean(c, {"none", "sha256-rows", "same-as-clean"}) +
                                         " (none, sha256-rows, same-as-clean)");
      if (b.checksum == ChecksumAlgorithm::kSha256Rows && b.totals())
        r_.Fail(node["checksum"], "batch.checksum sha256-rows hashes rows: a totals result has none (same-as-clean "
                                  "compares the target's own checksums with the clean run's, none skips them)");
      if (b.checksum != ChecksumAlgorithm::kNone && !b.marker.checksum)
        r_.Fail(node["checksum"], "batch.checksum needs batch.marker.checksum (where a marker holds it)");
    }
    if (node["partition_rows"]) {
      long long n = r_.Int(node["partition_rows"], "batch.partition_rows");
      if (n < 1) r_.Fail(node["partition_rows"], "batch.partition_rows must be at least 1");
      b.partition_rows = n;
    }
    return b;
  }

  // A helper process (see ServiceDescription).
  ServiceDescription Service(const std::string& name, const YAML::Node& node) {
    const std::string what = "service '" + name + "'";
    r_.CheckKeys(node,
                 {"argv", "env", "cwd", "port_from_stdout", "free_port", "ready", "ready_stdout",
                  "start_timeout", "stop_timeout", "url", "tls"},
                 what);
    ServiceDescription svc;
    svc.name = name;
    svc.mark = r_.MarkOf(node);
    YAML::Node start = YAML::Clone(node);
    for (const char* k : {"ready_stdout", "url", "tls"}) start.remove(k);
    svc.start = Start(start);
    svc.start.mark = svc.mark;
    if (node["ready_stdout"]) {
      svc.ready_stdout = r_.String(node["ready_stdout"], what + ".ready_stdout");
      if (auto re = Pattern::Compile(svc.ready_stdout); !re.ok())
        r_.Fail(node["ready_stdout"], what + ".ready_stdout: " + re.status().message());
    }
    if (node["url"]) svc.url = Templated(node["url"], what + ".url");
    ParseTlsSettings(r_, node, r_.file(), svc.tls, what + ".tls");
    return svc;
  }

  MessageDescription Message(const std::string& name, const YAML::Node& node) {
    const std::string what = "message '" + name + "'";
    r_.CheckKeys(node, {"push", "fields", "variants", "role"}, what);
    MessageDescription m;
    m.name = name;
    m.mark = r_.MarkOf(node);
    if (node["role"]) m.role = KnownRole(node["role"], what, {kMessageRole});
    if (node["push"]) m.push = Request(node["push"], what + ".push");
    if (node["fields"]) m.fields = Headers(node["fields"], what + ".fields", false);
    if (node["variants"]) {
      // A variant changes the push, the broker entry (fields), or both: each
      // needs what it changes.
      const YAML::Node vs = node["variants"];
      r_.ExpectMap(vs, what + ".variants");
      for (auto it = vs.begin(); it != vs.end(); ++it) {
        if (!it->second.IsMap()) continue;  // Variants says so
        const bool entry_only = it->second.size() == 1 && it->second["fields"];
        if (!m.push && !entry_only)
          r_.Fail(vs, what + ".variants change its push: give push (a request)");
        if (it->second["fields"] && !node["fields"])
          r_.Fail(it->second["fields"], what + ".variants." + it->first.Scalar() +
                                            ".fields change its broker entry: give fields (a broker entry)");
      }
      m.variants = Variants(vs, what, m.push ? *m.push : RequestTemplate{}, std::nullopt, /*entry=*/true);
    }
    if (!m.push && m.fields.empty()) r_.Fail(node, what + ": give push (a request) or fields (a broker entry), or both");
    return m;
  }

  BrokerDescription Broker(const YAML::Node& node) {
    r_.CheckKeys(node, {"redis", "stream", "group", "settle"}, "broker");
    BrokerDescription b;
    b.mark = r_.MarkOf(node);
    b.address = Templated(r_.Required(node, "redis", "broker"), "broker.redis");
    b.stream = Templated(r_.Required(node, "stream", "broker"), "broker.stream");
    b.group = r_.String(r_.Required(node, "group", "broker"), "broker.group");
    if (node["settle"]) b.settle = r_.DurationOf(node["settle"], "broker.settle");
    return b;
  }

  Reader r_;
  std::string profile_override_;  // --profile; "" = the file's profile:
  std::vector<std::pair<YAML::Node, std::string>> bases_;  // request `base:` uses, checked at the end
  std::vector<std::pair<YAML::Node, std::string>> egress_uses_;  // probe `egress:` uses, checked at the end
  std::vector<std::pair<YAML::Node, std::string>> calls_uses_;   // action `calls:` names, checked at the end
  std::vector<TemplateUse> templates_;
  std::vector<std::pair<YAML::Node, std::string>> role_of_;  // `of:` nodes and their owner, checked at the end
  std::vector<std::pair<YAML::Node, std::string>> caller_uses_;  // probe `caller:` names, checked at the end
  std::set<std::string> from_answer_;  // the `what` of from_answer probes (their `of:` is an action)
  std::vector<std::pair<YAML::Node, std::string>> message_of_;  // `of:` of applied probes (a message), likewise
  std::vector<std::pair<YAML::Node, std::string>> callback_of_;  // `of:` of callback actions, likewise
  std::vector<std::string> extra_;  // template variables of the section being read
};

}  // namespace

const char* ChecksumAlgorithmName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kNone: return "none";
    case ChecksumAlgorithm::kSha256Rows: return "sha256-rows";
    case ChecksumAlgorithm::kSameAsClean: return "same-as-clean";
  }
  return "?";
}

bool IdempotencyContract::IsRetryable(int status) const {
  if (std::find(retryable.begin(), retryable.end(), status) != retryable.end()) return true;
  if (status >= 500 && status <= 599) return !stores_5xx;
  // Released 4xx: all but the declared refusals, which are never stored anyway.
  return !stores_4xx && status >= 400 && status <= 499 && !IsInProgress(status) && !IsMismatch(status) &&
         status != missing_key;
}

namespace {
bool StatusIn(int status, int first, const std::vector<int>& also) {
  return status == first || std::find(also.begin(), also.end(), status) != also.end();
}
std::string StatusesText(int first, const std::vector<int>& also) {
  std::string out = std::to_string(first);
  for (int st : also) out += " or " + std::to_string(st);
  return out;
}
}  // namespace

bool IdempotencyContract::IsInProgress(int status) const { return StatusIn(status, in_progress, in_progress_also); }
bool IdempotencyContract::IsMismatch(int status) const { return StatusIn(status, mismatch, mismatch_also); }
std::string IdempotencyContract::InProgressText() const { return StatusesText(in_progress, in_progress_also); }
std::string IdempotencyContract::MismatchText() const { return StatusesText(mismatch, mismatch_also); }

const char* BalancePolicyName(BalancePolicy policy) {
  switch (policy) {
    case BalancePolicy::kRoundRobin: return "round_robin";
    case BalancePolicy::kByKey: return "by_key";
    case BalancePolicy::kRandom: return "random";
  }
  return "?";
}

std::string TargetInstanceName(int index) { return index == 0 ? "main" : "instance-" + std::to_string(index + 1); }

std::optional<int> TargetInstanceIndex(const std::string& name) {
  if (name == "main") return 0;
  const std::string prefix = "instance-";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 3) return std::nullopt;
  int n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    n = n * 10 + (name[i] - '0');
  }
  // "instance-1" is "main"; "instance-02" is no name the harness gives.
  if (n < 2 || name[prefix.size()] == '0') return std::nullopt;
  return n - 1;
}

const ActionDescription* TargetDescription::FindAction(const std::string& n) const {
  auto it = actions.find(n);
  return it == actions.end() ? nullptr : &it->second;
}

PathEquivalence::Spelling PathEquivalence::For(const std::string& form) const {
  for (const auto& s : kSpellings)
    if (form == s.form) return this->*s.field;
  return Spelling::kUndeclared;
}

std::string PathEquivalence::KeyFor(const std::string& form) {
  for (const auto& s : kSpellings)
    if (form == s.form) return s.key;
  return "";
}

nlohmann::json EgressMatch::AsFaultMatch() const {
  nlohmann::json match = nlohmann::json::object();
  if (!method.empty()) match["method"] = method;
  if (!path.empty()) match["path"] = path;
  return match;
}

bool ActionDescription::HasRole(const std::string& r) const {
  return std::find(roles.begin(), roles.end(), r) != roles.end() || (roles.empty() && !r.empty() && role == r);
}

const HookDescription* TargetDescription::HookFor(const std::string& role) const {
  for (const auto& [name, hook] : hooks)
    if (hook.role == role) return &hook;
  // A hook built without the loader (role unset) by its default name.
  const CapabilityInfo* info = FindCapability(role);
  if (info == nullptr || info->hook.empty()) return nullptr;
  auto it = hooks.find(info->hook);
  return it != hooks.end() && it->second.role.empty() ? &it->second : nullptr;
}

HeaderList TargetDescription::HeadersAs(const std::string& caller) const {
  const CallerDescription* c = nullptr;
  for (const auto& d : callers)
    if (d.name == caller) c = &d;
  if (c == nullptr) return headers;
  HeaderList out;
  for (const auto& [name, value] : headers) {
    bool replaced = false;
    for (const auto& h : c->headers) replaced = replaced || equals_ignoring_case(h.first, name);
    if (!replaced) out.emplace_back(name, value);
  }
  for (const auto& h : c->headers) out.push_back(h);
  return out;
}

std::vector<std::string> TargetDescription::DownstreamsOf(const std::string& action) const {
  std::set<std::string> out;
  const ActionDescription* a = FindAction(action);
  if (a == nullptr) return {};
  if (a->calls) {
    out.insert(a->calls->begin(), a->calls->end());
  } else {
    for (const auto& [name, probe] : probes)
      if (probe.role == "ledger" && probe.of == action && !probe.egress.empty()) out.insert(probe.egress);
  }
  std::vector<std::string> http;
  for (const auto& name : out)
    if (auto e = egress.find(name); e != egress.end() && !e->second.tcp) http.push_back(name);
  return http;
}

std::vector<JsonPath> TargetDescription::VolatilePathsFor(const std::string& action) const {
  std::vector<JsonPath> out = volatile_paths;
  if (const auto* a = FindAction(action)) out.insert(out.end(), a->volatile_paths.begin(), a->volatile_paths.end());
  // A replay differs from the first answer by its marker, by design.
  if (idempotency.replay && idempotency.replay->body) out.push_back(*idempotency.replay->body);
  return out;
}

std::string ReplayMarker::Where() const { return body ? "body " + body->text() : header; }

std::string ReplayMarker::Describe() const { return Where() + (body ? " = " : ": ") + value; }

std::optional<std::string> CaptureRule::From(const HeaderList& headers, const std::string& body) const {
  if (path) {
    nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
    if (doc.is_discarded()) return std::nullopt;
    return path->FindText(doc);
  }
  for (const auto& [name, value] : headers) {
    if (!equals_ignoring_case(name, header)) continue;
    if (pattern.empty()) return value;
    auto re = Pattern::Compile(pattern);
    if (!re.ok()) return std::nullopt;  // the loader compiled it already
    return re->FirstGroup(value);
  }
  return std::nullopt;
}

Result<std::int64_t> RecordsProbe::CountIn(const nlohmann::json& value) const {
  auto at = count.Find(value);
  if (at.ok() && at->is_number_integer()) return at->get<std::int64_t>();
  if (at.ok() && at->is_array()) return static_cast<std::int64_t>(at->size());
  if (at.ok())
    return Status(StatusCode::kNotFound, count.text() + " in the answer is " + DescribeJsonValue(*at) +
                                             ", not an integer or an array");
  return Status(StatusCode::kNotFound, "no integer or array at " + count.text() + " in the answer");
}

RequestTemplate WithoutKeyPlaceholders(const RequestTemplate& request) {
  RequestTemplate out = request;
  std::erase_if(out.headers, [](const auto& h) { return IsKeyPlaceholder(h.second); });
  if (out.json) out.json = DropKeyMembers(*out.json);
  return out;
}

Result<TargetDescription> ParseTarget(const std::string& yaml_text, const std::string& file,
                                      const std::string& profile) {
  try {
    return TargetLoader(file, profile).Load(yaml_text);
  } catch (const yaml::ConfigError& e) {
    return e.status;
  } catch (const YAML::Exception& e) {
    SourceMark m{file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    return Status::InvalidConfig(e.msg, m);
  }
}

Result<TargetDescription> LoadTargetFile(const std::string& path, const std::string& profile) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read target file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseTarget(ss.str(), path, profile);
}

}  // namespace idemproof
