#include "injectors/tcp_faults/refuse.h"

namespace idemproof::injectors {

RefuseOptions Refuse::parse(YamlOptions& o) {
  RefuseOptions out;
  out.window = ReadTcpWindow(o);
  const std::string how = o.string("how").value_or("close");
  if (how != "close" && how != "reset") o.fail_at("how", "expected close or reset, found '" + how + "'");
  out.reset = how == "reset";
  return out;
}

void Refuse::TurnAway(TcpAccept& accept, bool reset) {
  TcpLink& link = accept.link();
  if (link.closed()) return;  // an earlier fault turned it away
  accept.record(std::string(reset ? "reset" : "refused") + " new connection " + std::to_string(link.id()) +
                (reset ? " (RST)" : " (closed at once)"));
  link.close(reset);
}

void Refuse::on_accept(TcpAccept& accept) const { TurnAway(accept, options_.reset); }

}  // namespace idemproof::injectors
