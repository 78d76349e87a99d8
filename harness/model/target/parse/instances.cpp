// `instances:`, `balance:`, `shared_store:` and `base_url:` (instances.h).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "model/target/description.h"
#include "model/target/instances.h"
#include "model/target/parse/load_context.h"

namespace idemproof {
namespace {

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

// `instances: N` (started, N >= 1, needs `start`) or `instances: [URL, ...]`
// (already running, no `start`).
void Instances(TargetLoadContext& cx, const YAML::Node& node, TargetDescription& t) {
  if (node.IsSequence()) {
    if (t.start)
      cx.r.Fail(node, "instances: a list of URLs describes a target already running behind them; it takes no "
                    "'start' (give 'instances: N' to start N processes)");
    if (node.size() == 0) cx.r.Fail(node, "instances: list at least one base URL");
    std::vector<std::string> seen, servers;
    for (const auto& item : node) {
      std::string url = cx.Templated(item, "instances[]");
      if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
        cx.r.Fail(item, "instances: '" + url + "' must start with http:// or https://");
      while (!url.empty() && url.back() == '/') url.pop_back();
      if (std::find(seen.begin(), seen.end(), url) != seen.end())
        cx.r.Fail(item, "instances: '" + url + "' is listed twice (one instance, one URL)");
      // The same server spelt otherwise would be balanced to as two.
      const std::string server = ServerOf(url);
      if (auto same = std::find(servers.begin(), servers.end(), server); !server.empty() && same != servers.end())
        cx.r.Fail(item, "instances: '" + url + "' names the same server as '" + seen[same - servers.begin()] +
                          "' (" + server + "): one instance, one server");
      seen.push_back(url);
      servers.push_back(server);
    }
    t.instance_urls = std::move(seen);
    t.instance_count = static_cast<int>(t.instance_urls.size());
    return;
  }
  const long long n = cx.r.Int(node, "instances");
  if (n < 1 || n > kMostInstances)
    cx.r.Fail(node, "instances must be between 1 and " + std::to_string(kMostInstances) + ", found " +
                      std::to_string(n));
  if (n > 1 && !t.start)
    cx.r.Fail(node, "instances: " + std::to_string(n) + " starts " + std::to_string(n) +
                      " processes and needs 'start' (for a target already running, list its URLs: "
                      "instances: [URL, ...])");
  t.instance_count = static_cast<int>(n);
}

BalancePolicy Balance(TargetLoadContext& cx, const YAML::Node& node) {
  const std::string text = cx.r.String(node, "balance");
  for (BalancePolicy p : {BalancePolicy::kRoundRobin, BalancePolicy::kByKey, BalancePolicy::kRandom}) {
    if (text == BalancePolicyName(p)) return p;
  }
  cx.r.Fail(node, "balance must be round_robin, by_key or random, found '" + text + "'" +
                    yaml::DidYouMean(text, {"round_robin", "by_key", "random"}));
  return BalancePolicy::kRoundRobin;
}

}  // namespace

void ParseInstances(TargetLoadContext& cx, const YAML::Node& root, TargetDescription& t) {
  if (root["instances"]) Instances(cx, root["instances"], t);
  if (root["balance"]) t.balance = Balance(cx, root["balance"]);
  if (root["shared_store"]) {
    t.shared_store = cx.r.Bool(root["shared_store"], "shared_store");
    // Instances that share nothing must each see all of a key's requests.
    if (!t.shared_store && t.instance_count > 1 && t.balance != BalancePolicy::kByKey)
      cx.r.Fail(root["shared_store"], "shared_store: false with " + std::to_string(t.instance_count) +
                                          " instances needs balance: by_key (instances that share no store must "
                                          "each get every request of a key)");
  }
  if (t.instance_urls.empty()) {
    YAML::Node base = cx.r.Required(root, "base_url", "target");
    t.base_url = cx.Templated(base, "base_url");
    if (t.base_url.rfind("http://", 0) != 0 && t.base_url.rfind("https://", 0) != 0)
      cx.r.Fail(base, "base_url must start with http:// or https://");
  } else {
    if (root["base_url"])
      cx.r.Fail(root["base_url"], "base_url: give base_url or a list of instance URLs (instances: [URL, ...]), "
                                  "not both; the first URL is the main instance's");
    t.base_url = t.instance_urls.front();
  }
}

}  // namespace idemproof
