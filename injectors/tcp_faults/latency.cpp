#include "injectors/tcp_faults/latency.h"

namespace idemproof::injectors {

LatencyOptions Latency::parse(YamlOptions& o) {
  LatencyOptions out;
  out.window = ReadTcpWindow(o);
  auto delay = o.duration("delay");
  if (!delay) o.require("delay");
  else if (delay->count() <= 0 || *delay > std::chrono::minutes(1))
    o.fail_at("delay", "must be more than 0 and at most 1m");
  out.delay = delay.value_or(std::chrono::nanoseconds(0));
  const TcpDirections ways = ReadTcpDirection(o);
  out.upstream = ways.upstream;
  out.downstream = ways.downstream;
  return out;
}

TcpFaultEffect Latency::effect() const {
  TcpFaultEffect e;
  e.latency = options_.delay;
  e.latency_upstream = options_.upstream;
  e.latency_downstream = options_.downstream;
  return e;
}

}  // namespace idemproof::injectors
