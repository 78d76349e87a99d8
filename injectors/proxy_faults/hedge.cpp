#include "injectors/proxy_faults/hedge.h"

#include <memory>
#include <string>

#include "injectors/upstream_flight.h"

namespace idemproof::injectors {

HedgeOptions Hedge::parse(YamlOptions& o) {
  HedgeOptions out;
  out.copies = static_cast<int>(o.integer("copies", 2, 16).value_or(2));
  return out;
}

ProxyTask<bool> Hedge::act(ProxyExchange& x) const {
  UpstreamFlight flight(x.loop());
  for (int i = 0; i < options_.copies; ++i) flight.launch(x.request());
  co_await flight.wait(UpstreamFlight::Until::kAnyAnswer, 0,
                       std::chrono::steady_clock::now() + 2 * x.loop().settings.upstream_timeout);
  std::shared_ptr<UpstreamFlight::Leg> first;
  for (const auto& l : flight.legs()) {
    if (l->done && l->result.response && (!first || l->result.done_ns < first->result.done_ns)) first = l;
  }
  FaultEvent& ev = x.event();
  bool ok = false;
  ProxyResponse res = first ? *first->result.response : x.gateway_error(flight.legs().front()->result);
  ev.client_answer = snapshot(res, steady_now_ns());
  if (!x.closing()) ok = co_await x.answer(std::move(res)) && first;
  co_await flight.drain();
  ev.upstream_sends = options_.copies;
  for (const auto& l : flight.legs()) {
    if (l != first && l->result.response) ev.upstream.push_back(snapshot(*l->result.response, l->result.done_ns));
  }
  ev.detail = "sent " + std::to_string(options_.copies) + " copies at once; the client got the first answer";
  x.record();
  co_return ok;
}

}  // namespace idemproof::injectors
