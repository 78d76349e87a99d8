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
  out.directions = ReadTcpDirection(o);
  return out;
}

void Latency::on_chunk(TcpChunk& chunk) const {
  if (!options_.directions.has(chunk.direction())) return;
  if (chunk.first_on_link())
    chunk.record("delayed connection " + std::to_string(chunk.link().id()) + " (" +
                 TcpDirectionName(chunk.direction()) + ", " + TcpMillis(options_.delay) + " per chunk)");
  chunk.delay(options_.delay);
}

}  // namespace idemproof::injectors
