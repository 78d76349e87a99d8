#include "injectors/tcp_faults/cut_after.h"

namespace idemproof::injectors {

CutAfterOptions CutAfter::parse(YamlOptions& o) {
  CutAfterOptions out;
  out.window = ReadTcpWindow(o);
  auto bytes = o.integer("bytes", 0, std::int64_t{1} << 40);
  if (!bytes) o.require("bytes");
  out.bytes = bytes.value_or(0);
  const std::string direction = o.string("direction").value_or("both");
  if (direction != "upstream" && direction != "downstream" && direction != "both")
    o.fail_at("direction", "expected upstream, downstream or both, found '" + direction + "'");
  out.upstream = direction != "downstream";
  out.downstream = direction != "upstream";
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
