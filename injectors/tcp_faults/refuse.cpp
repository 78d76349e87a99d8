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

TcpFaultEffect Refuse::effect() const {
  TcpFaultEffect e;
  e.admit = options_.reset ? TcpFaultEffect::Admit::kReset : TcpFaultEffect::Admit::kClose;
  return e;
}

}  // namespace idemproof::injectors
