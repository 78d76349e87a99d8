#include "injectors/tcp_faults/reset.h"

#include "injectors/tcp_faults/refuse.h"

namespace idemproof::injectors {

ResetConnectionsOptions ResetConnections::parse(YamlOptions& o) {
  ResetConnectionsOptions out;
  out.window = ReadTcpWindow(o);
  return out;
}

void ResetConnections::on_arm(TcpArm& arm) const {
  const std::vector<TcpLink*> open = arm.open_links();
  for (TcpLink* link : open) link->close(/*reset=*/true);
  if (!open.empty()) arm.record("reset " + std::to_string(open.size()) + " open connection(s) (RST)");
}

void ResetConnections::on_accept(TcpAccept& accept) const { Refuse::TurnAway(accept, /*reset=*/true); }

}  // namespace idemproof::injectors
