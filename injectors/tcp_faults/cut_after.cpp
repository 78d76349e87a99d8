#include "injectors/tcp_faults/cut_after.h"

#include <algorithm>

namespace idemproof::injectors {

CutAfterOptions CutAfter::parse(YamlOptions& o) {
  CutAfterOptions out;
  out.window = ReadTcpWindow(o);
  auto bytes = o.integer("bytes", 0, std::int64_t{1} << 40);
  if (!bytes) o.require("bytes");
  out.bytes = bytes.value_or(0);
  out.directions = ReadTcpDirection(o);
  return out;
}

void CutAfter::on_chunk(TcpChunk& chunk) const {
  if (!options_.directions.has(chunk.direction())) return;
  std::int64_t& counted = chunk.counted();
  const std::int64_t left = std::max<std::int64_t>(0, options_.bytes - counted);
  const auto size = static_cast<std::int64_t>(chunk.bytes().size());
  counted += std::min(left, size);
  if (left >= size) return;  // within the limit (a chunk another cut emptied included)
  chunk.cut(static_cast<std::size_t>(left),
            "cut connection " + std::to_string(chunk.link().id()) + " after " + std::to_string(counted) + " bytes " +
                TcpDirectionName(chunk.direction()) + " (" + std::to_string(chunk.read_size() - left) +
                " bytes dropped)");
}

}  // namespace idemproof::injectors
