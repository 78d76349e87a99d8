#include "injectors/tcp_faults/pause.h"

namespace idemproof::injectors {

PauseOptions Pause::parse(YamlOptions& o) {
  PauseOptions out;
  out.window = ReadTcpWindow(o);
  return out;
}

void Pause::on_chunk(TcpChunk& chunk) const {
  if (chunk.first_on_link())
    chunk.record("held connection " + std::to_string(chunk.link().id()) + " (" +
                 TcpDirectionName(chunk.direction()) + ", " + std::to_string(chunk.read_size()) + " bytes waiting)");
  chunk.hold();
}

}  // namespace idemproof::injectors
