// How every section reads a request, a call and its variants (load_context.h).
#include <algorithm>

#include "model/target/parse/load_context.h"
#include "model/target/request.h"

namespace idemproof {

RequestTemplate TargetLoadContext::Request(const YAML::Node& node, const std::string& what, bool body_only) {
  RequestTemplate rq;
  rq.mark = r.MarkOf(node);
  if (body_only) {
    r.CheckKeys(node, {"json", "body", "content_type"}, what);
  } else {
    r.CheckKeys(node, {"method", "path", "headers", "json", "body", "content_type", "base"}, what);
    if (node["base"]) {
      rq.base = r.String(node["base"], what + ".base");
      bases.emplace_back(node["base"], rq.base);
    }
    if (node["method"]) {
      rq.method = r.String(node["method"], what + ".method");
      if (std::find(HttpMethods().begin(), HttpMethods().end(), rq.method) == HttpMethods().end())
        r.Fail(node["method"], what + ".method: unknown HTTP method '" + rq.method + "'" +
                                    yaml::DidYouMean(rq.method, HttpMethods()));
    }
    rq.path = Templated(r.Required(node, "path", what), what + ".path");
    if (rq.path.empty() || rq.path[0] != '/') r.Fail(node["path"], what + ".path must start with '/'");
    if (node["headers"]) rq.headers = Headers(node["headers"], what + ".headers");
  }
  if (node["json"] && node["body"]) r.Fail(node["body"], what + ": give json or body, not both");
  if (node["json"]) {
    rq.json = r.Json(node["json"]);
    TemplatedJson(node["json"]);
  }
  if (node["body"]) rq.body = Templated(node["body"], what + ".body");
  if (node["content_type"]) rq.content_type = ContentType(node, what);
  if (body_only && !rq.json && !rq.body) r.Fail(node, what + ": give json or body");
  return rq;
}

// `content_type:` of a block with json or body (a header value: no CR/LF).
std::string TargetLoadContext::ContentType(const YAML::Node& node, const std::string& what) {
  const YAML::Node ct = node["content_type"];
  std::string s = r.String(ct, what + ".content_type");
  if (!node["json"] && !node["body"]) r.Fail(ct, what + ".content_type: there is no body (json or body) to type");
  if (s.empty() || s.find_first_of("\r\n") != std::string::npos)
    r.Fail(ct, what + ".content_type: '" + s + "' is not a header value");
  return s;
}

// variants: {NAME: {query, headers, patch, json, body, content_type}}; a
// message's (`entry`) may also give `fields` (its broker entry's).
std::map<std::string, RequestVariant> TargetLoadContext::Variants(const YAML::Node& node, const std::string& what,
                                                                const RequestTemplate& request,
                                                                const std::optional<RequestTemplate>& other_payload,
                                                                bool entry) {
  r.ExpectMap(node, what + ".variants");
  std::map<std::string, RequestVariant> out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    RequestVariant v;
    v.name = Name(it->first, "variant");
    v.mark = r.MarkOf(it->first);
    const std::string vw = what + " variant '" + v.name + "'";
    const YAML::Node b = it->second;
    r.ExpectMap(b, vw);
    std::vector<std::string> keys = {"query", "headers", "patch", "json", "body", "content_type"};
    if (entry) keys.push_back("fields");
    r.CheckKeys(b, keys, vw);
    if (b.size() == 0) r.Fail(b, vw + " changes nothing: give query, headers, patch, json or body");
    if (b["fields"]) v.fields = Headers(b["fields"], vw + ".fields", false);
    if (b["query"]) v.query = Headers(b["query"], vw + ".query", /*http=*/false);
    if (b["headers"]) {
      v.headers = Headers(b["headers"], vw + ".headers");
      for (auto h = b["headers"].begin(); h != b["headers"].end(); ++h) HeaderName(h->first, vw + ".headers name");
    }
    if (b["json"] && b["body"]) r.Fail(b["body"], vw + ": give json or body, not both");
    if (b["patch"] && (b["json"] || b["body"]))
      r.Fail(b["patch"], vw + ": give patch (changes to the action's json body) or a whole body, not both");
    if (b["json"]) {
      v.json = r.Json(b["json"]);
      TemplatedJson(b["json"]);
    }
    if (b["body"]) v.body = Templated(b["body"], vw + ".body");
    if (b["content_type"]) v.content_type = ContentType(b, vw);
    if (b["patch"]) {
      r.ExpectMap(b["patch"], vw + ".patch");
      if (!request.json)
        r.Fail(b["patch"], vw + ".patch: the action's request has no json body to patch (give json or body instead)");
      for (auto p = b["patch"].begin(); p != b["patch"].end(); ++p) {
        JsonPath path = r.Path(p->first, vw + ".patch path");
        if (path.has_wildcard() || path.segments().empty())
          r.Fail(p->first, vw + ".patch: '" + path.text() + "' must name one member or element (no [*], not $)");
        v.patch.emplace_back(path, r.Json(p->second));
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
void TargetLoadContext::CheckPatches(const YAML::Node& node, const std::string& vw, const RequestVariant& v,
                                     nlohmann::json body, const std::string& whose) {
  auto p = node.begin();
  for (const auto& [path, value] : v.patch) {
    Status s = path.SetIn(body, value);
    if (!s.ok())
      r.Fail(p->first, vw + ".patch: '" + path.text() + "' cannot apply to " + whose + ": " + s.message());
    ++p;
  }
}

// {request: ...} | {command: [...]} plus `extra` keys the caller reads.
TargetCall TargetLoadContext::Call(const YAML::Node& node, const std::string& what, std::vector<std::string> extra) {
  std::vector<std::string> allowed = {"request", "command"};
  allowed.insert(allowed.end(), extra.begin(), extra.end());
  r.CheckKeys(node, allowed, what);
  TargetCall c;
  c.mark = r.MarkOf(node);
  bool has_req = static_cast<bool>(node["request"]);
  bool has_cmd = static_cast<bool>(node["command"]);
  if (has_req == has_cmd) r.Fail(node, what + ": give exactly one of 'request' or 'command'");
  if (has_req) c.request = Request(node["request"], what + ".request");
  if (has_cmd) c.command = Argv(node["command"], what + ".command");
  return c;
}

}  // namespace idemproof
