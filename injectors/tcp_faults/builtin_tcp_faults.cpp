// register_builtin_tcp_faults (declared in injectors/tcp_fault_injector.h):
// the one place that names the built-in tcp faults (pause, refuse, reset, store-error,
// cut-after, latency). A new one is one file in this folder and one line here.
#include "injectors/tcp_fault_injector.h"
#include "injectors/tcp_faults/cut_after.h"
#include "injectors/tcp_faults/latency.h"
#include "injectors/tcp_faults/pause.h"
#include "injectors/tcp_faults/refuse.h"
#include "injectors/tcp_faults/reset.h"
#include "injectors/tcp_faults/store_error.h"

namespace idemproof::injectors {

void register_builtin_tcp_faults(Registry& registry) {
  // Distinct kinds: add() cannot fail here.
  add_tcp_fault<Pause>(registry);
  add_tcp_fault<Refuse>(registry);
  add_tcp_fault<ResetConnections>(registry);
  add_tcp_fault<CutAfter>(registry);
  add_tcp_fault<Latency>(registry);
  add_tcp_fault<StoreError>(registry);
}

}  // namespace idemproof::injectors
