#include "injectors/tcp_faults/reset.h"

namespace idemproof::injectors {

ResetConnectionsOptions ResetConnections::parse(YamlOptions& o) {
  ResetConnectionsOptions out;
  out.window = ReadTcpWindow(o);
  return out;
}

TcpFaultEffect ResetConnections::effect() const {
  TcpFaultEffect e;
  e.reset_open = true;
  e.admit = TcpFaultEffect::Admit::kReset;
  return e;
}

}  // namespace idemproof::injectors
