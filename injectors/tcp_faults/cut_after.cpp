#include "injectors/tcp_faults/cut_after.h"

namespace idemproof::injectors {

CutAfterOptions CutAfter::parse(YamlOptions& o) {
  CutAfterOptions out;
  out.window = ReadTcpWindow(o);
  auto bytes = o.integer("bytes", 0, std::int64_t{1} << 40);
  if (!bytes) o.require("bytes");
  out.bytes = bytes.value_or(0);
  const TcpDirections ways = ReadTcpDirection(o);
  out.upstream = ways.upstream;
  out.downstream = ways.downstream;
  return out;
}

TcpFaultEffect CutAfter::effect() const {
  TcpFaultEffect e;
  e.cut_after = options_.bytes;
  e.cut_upstream = options_.upstream;
  e.cut_downstream = options_.downstream;
  return e;
}

}  // namespace idemproof::injectors
