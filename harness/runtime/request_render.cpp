#include "runtime/request_render.h"

#include <cctype>
#include <chrono>

namespace idemproof::runtime {

namespace {

Status located(const Status& s, const SourceMark& mark) {
  if (!mark.known()) return s;
  return Status(s.code(), s.message() + " (in the request declared at " + mark.ToString() + ")");
}

Result<HttpRequest> render(const RequestTemplate& tmpl, const RequestTemplate& body_source,
                           const std::string& base_url, const TemplateVars& vars,
                           const HeaderList& target_headers, const HeaderList& extra,
                           Duration timeout) {
  HttpRequest out;
  out.method = tmpl.method;
  auto path = ExpandTemplate(tmpl.path, vars);
  if (!path.ok()) return located(path.status(), tmpl.mark);
  out.url = base_url + *path;
  for (const HeaderList* list : {&target_headers, &tmpl.headers}) {
    for (const auto& [name, value] : *list) {
      auto v = ExpandTemplate(value, vars);
      if (!v.ok()) return located(v.status(), tmpl.mark);
      out.headers.emplace_back(name, *v);
    }
  }
  if (body_source.json) {
    auto body = ExpandTemplateJson(*body_source.json, vars);
    if (!body.ok()) return located(body.status(), body_source.mark);
    out.body = body->dump();
    bool typed = false;
    for (const auto& h : out.headers) {
      std::string n = h.first;
      for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      typed = typed || n == "content-type";
    }
    if (!typed) out.headers.emplace_back("Content-Type", "application/json");
  } else if (body_source.body) {
    auto body = ExpandTemplate(*body_source.body, vars);
    if (!body.ok()) return located(body.status(), body_source.mark);
    out.body = *body;
  }
  for (const auto& h : extra) out.headers.push_back(h);
  out.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  return out;
}

}  // namespace

Result<HttpRequest> RenderRequest(const RequestTemplate& tmpl, const std::string& base_url,
                                  const TemplateVars& vars, const HeaderList& target_headers,
                                  const HeaderList& extra, Duration timeout) {
  return render(tmpl, tmpl, base_url, vars, target_headers, extra, timeout);
}

Result<HttpRequest> RenderRequestWithBody(const RequestTemplate& tmpl,
                                          const RequestTemplate& body_source,
                                          const std::string& base_url, const TemplateVars& vars,
                                          const HeaderList& target_headers,
                                          const HeaderList& extra, Duration timeout) {
  return render(tmpl, body_source, base_url, vars, target_headers, extra, timeout);
}

Result<HttpRequest> Capped(Result<HttpRequest> request, const TargetDescription& target) {
  if (request.ok()) request->max_body = static_cast<std::size_t>(target.max_body);
  return request;
}

}  // namespace idemproof::runtime
