#include "runtime/request_render.h"

#include <cctype>
#include <algorithm>
#include <chrono>
#include <vector>

#include "base/query_string.h"
#include "clients/trace_context.h"

namespace idemproof::runtime {

namespace {

Status located(const Status& s, const SourceMark& mark) {
  if (!mark.known()) return s;
  return Status(s.code(), s.message() + " (in the request declared at " + mark.ToString() + ")");
}

// `path` with `query` merged into its query string: a parameter of the same
// (encoded) name is replaced in place, a new one appended.
Result<std::string> MergeQuery(const std::string& path, const HeaderList& query, const TemplateVars& vars) {
  if (query.empty()) return path;
  const auto q = path.find('?');
  std::vector<std::string> params;
  if (q != std::string::npos) {
    std::string rest = path.substr(q + 1);
    std::size_t start = 0;
    while (start <= rest.size()) {
      const auto amp = rest.find('&', start);
      const std::string part = rest.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      if (!part.empty()) params.push_back(part);
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }
  for (const auto& [name, value] : query) {
    auto v = ExpandTemplate(value, vars);
    if (!v.ok()) return v.status();
    const std::string encoded = percent_encode(name);
    const std::string param = encoded + "=" + percent_encode(*v);
    auto same = std::find_if(params.begin(), params.end(), [&](const std::string& p) {
      return p.substr(0, p.find('=')) == encoded;
    });
    if (same != params.end()) *same = param;
    else params.push_back(param);
  }
  std::string out = path.substr(0, q);
  for (std::size_t i = 0; i < params.size(); ++i) out += (i == 0 ? "?" : "&") + params[i];
  return out;
}

bool HasHeader(const HeaderList& headers, const std::string& name) {
  for (const auto& h : headers)
    if (equals_ignoring_case(h.first, name)) return true;
  return false;
}

Result<OutgoingRequest> render(const RequestTemplate& tmpl, const std::string& base_url, const TemplateVars& vars,
                               const HeaderList& target_headers, const HeaderList& extra, Duration timeout) {
  OutgoingRequest out;
  HttpRequest& m = out.message;
  m.method = tmpl.method;
  auto expanded = ExpandTemplate(tmpl.path, vars);
  if (!expanded.ok()) return located(expanded.status(), tmpl.mark);
  auto path = MergeQuery(*expanded, tmpl.query, vars);
  if (!path.ok()) return located(path.status(), tmpl.mark);
  out.set_url(base_url + *path);
  for (const HeaderList* list : {&target_headers, &tmpl.headers}) {
    for (const auto& [name, value] : *list) {
      auto v = ExpandTemplate(value, vars);
      if (!v.ok()) return located(v.status(), tmpl.mark);
      m.headers.emplace_back(name, *v);
    }
  }
  if (tmpl.json) {
    auto body = ExpandTemplateJson(*tmpl.json, vars);
    if (!body.ok()) return located(body.status(), tmpl.mark);
    m.body = body->dump();
    if (!HasHeader(m.headers, "content-type"))
      m.headers.emplace_back("Content-Type", tmpl.content_type.empty() ? "application/json" : tmpl.content_type);
  } else if (tmpl.body) {
    auto body = ExpandTemplate(*tmpl.body, vars);
    if (!body.ok()) return located(body.status(), tmpl.mark);
    m.body = *body;
    // A raw body is typed only as declared: no guess (docs/scenario-reference.md).
    if (!tmpl.content_type.empty() && !HasHeader(m.headers, "content-type"))
      m.headers.emplace_back("Content-Type", tmpl.content_type);
  }
  for (const auto& h : extra) m.headers.push_back(h);
  // A span per request of the run's trace (off: no trace id, `trace: false`).
  if (auto trace = vars.find(kTraceIdVariable); trace != vars.end() && !HasHeader(m.headers, kTraceparentHeader))
    m.headers.emplace_back(kTraceparentHeader, Traceparent(trace->second, NewSpanId()));
  out.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  return out;
}

}  // namespace

Result<OutgoingRequest> RenderRequest(const RequestTemplate& tmpl, const std::string& base_url,
                                      const TemplateVars& vars, const HeaderList& target_headers,
                                      const HeaderList& extra, Duration timeout) {
  return render(tmpl, base_url, vars, target_headers, extra, timeout);
}

Result<OutgoingRequest> Capped(Result<OutgoingRequest> request, const TargetDescription& target, KeptBudget* kept,
                               Hop hop) {
  if (request.ok()) {
    request->max_body = static_cast<std::size_t>(target.max_body);
    request->http_version = hop == Hop::kTarget ? target.http.version : 1;
    request->kept = kept;
    request->tls = target.tls;
  }
  return request;
}

}  // namespace idemproof::runtime
