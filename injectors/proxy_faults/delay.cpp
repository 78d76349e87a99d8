#include "injectors/proxy_faults/delay.h"

#include <string>

namespace idemproof::injectors {

namespace {

std::string millis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration<double, std::milli>(d).count()) + "ms";
}

}  // namespace

DelayOptions Delay::parse(YamlOptions& o) {
  DelayOptions out;
  const std::string side = o.string("side").value_or("request");
  if (side != "request" && side != "response") o.fail_at("side", "expected request or response");
  out.response_side = side == "response";
  auto d = o.duration("duration");
  if (!d) o.require("duration");
  out.duration = d.value_or(std::chrono::nanoseconds(0));
  return out;
}

ProxyTask<bool> Delay::act(ProxyExchange& x) const {
  if (!options_.response_side) co_await x.sleep(options_.duration);
  UpstreamAnswer ex = co_await x.send_upstream(std::move(x.request()));
  if (options_.response_side) co_await x.sleep(options_.duration);
  FaultEvent& ev = x.event();
  ev.upstream_sends = 1;
  ev.detail = std::string("delayed the ") + (options_.response_side ? "answer" : "request") + " by " +
              millis(options_.duration);
  ProxyResponse res = ex.response ? std::move(*ex.response) : x.gateway_error(ex);
  ev.client_answer = snapshot(res, steady_now_ns());
  x.record();
  if (x.closing()) co_return false;
  co_return co_await x.answer(std::move(res)) && ex.response;
}

}  // namespace idemproof::injectors
