#include "injectors/proxy_faults/fail.h"

#include <boost/beast/http/field.hpp>

namespace idemproof::injectors {

FailOptions Fail::parse(YamlOptions& o) {
  FailOptions out;
  out.status = static_cast<int>(o.integer("status", 100, 599).value_or(out.status));
  out.body = o.string("body").value_or("");
  out.content_type = o.string("content_type").value_or(out.content_type);
  out.retry_after = o.string("retry_after");
  return out;
}

ProxyTask<bool> Fail::act(ProxyExchange& x) const {
  ProxyResponse res{static_cast<boost::beast::http::status>(options_.status), x.version()};
  res.set(boost::beast::http::field::content_type, options_.content_type);
  if (options_.retry_after) res.set(boost::beast::http::field::retry_after, *options_.retry_after);
  res.set("X-Idemproof-Proxy", "fail");
  res.body() = options_.body;
  res.prepare_payload();
  FaultEvent& ev = x.event();
  ev.detail = "answered " + std::to_string(options_.status) + " without forwarding";
  ev.client_answer = snapshot(res, steady_now_ns());
  x.record();
  if (x.closing()) co_return false;
  co_return co_await x.answer(std::move(res));
}

}  // namespace idemproof::injectors
