#include "injectors/proxy_faults/reset.h"

namespace idemproof::injectors {

ProxyTask<bool> Reset::act(ProxyExchange& x) const {
  x.event().detail = "reset the client connection before forwarding";
  x.record();
  close_client(x.client(), /*reset=*/true);
  co_return false;
}

}  // namespace idemproof::injectors
