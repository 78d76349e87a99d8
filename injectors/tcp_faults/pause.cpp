#include "injectors/tcp_faults/pause.h"

namespace idemproof::injectors {

PauseOptions Pause::parse(YamlOptions& o) {
  PauseOptions out;
  out.window = ReadTcpWindow(o);
  return out;
}

TcpFaultEffect Pause::effect() const {
  TcpFaultEffect e;
  e.pause = true;
  return e;
}

}  // namespace idemproof::injectors
