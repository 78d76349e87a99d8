#include "injectors/proxy_faults/replay_upstream.h"

#include <string>
#include <vector>

#include "injectors/upstream_flight.h"

namespace idemproof::injectors {

ReplayUpstreamOptions ReplayUpstream::parse(YamlOptions& o) {
  ReplayUpstreamOptions out;
  const std::string after = o.string("after").value_or("response");
  if (after != "response") {
    auto d = parse_duration(after);
    if (!d) {
      o.fail_at("after", "expected 'response' or a duration");
    } else {
      out.replay_after = d.value();
    }
  }
  out.times = static_cast<int>(o.integer("times", 1, 16).value_or(1));
  return out;
}

ProxyTask<bool> ReplayUpstream::act(ProxyExchange& x) const {
  const ProxyRequest& req = x.request();
  std::vector<UpstreamAnswer> all;
  if (!options_.replay_after) {
    for (int i = 0; i <= options_.times && !x.closing(); ++i) all.push_back(co_await x.send_upstream(req));
  } else {
    UpstreamFlight flight(x.loop());
    for (int i = 0; i <= options_.times && !x.closing(); ++i) {
      flight.launch(req);
      if (i == options_.times) break;
      co_await flight.wait(UpstreamFlight::Until::kLegDone, flight.legs().size() - 1,
                           std::chrono::steady_clock::now() + *options_.replay_after);
    }
    co_await flight.drain();
    all = flight.take_results();
  }
  FaultEvent& ev = x.event();
  ev.upstream_sends = static_cast<std::int64_t>(all.size());
  UpstreamAnswer last;
  last.error = "proxy is healing";
  if (!all.empty()) {
    last = std::move(all.back());
    all.pop_back();
  }
  ev.detail = "sent the request upstream " + std::to_string(ev.upstream_sends) +
              " times; the client got the last answer";
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].response) {
      ev.upstream.push_back(snapshot(*all[i].response, all[i].done_ns));
    } else {
      ev.detail += "; copy " + std::to_string(i + 1) + ": " + all[i].error;
    }
  }
  ProxyResponse res = last.response ? std::move(*last.response) : x.gateway_error(last);
  ev.client_answer = snapshot(res, steady_now_ns());
  x.record();
  if (x.closing()) co_return false;
  co_return co_await x.answer(std::move(res)) && last.response;
}

}  // namespace idemproof::injectors
