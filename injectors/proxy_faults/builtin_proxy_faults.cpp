#include "injectors/proxy_faults/builtin_proxy_faults.h"

#include "injectors/proxy_faults/delay.h"
#include "injectors/proxy_faults/drop_response.h"
#include "injectors/proxy_faults/fail.h"
#include "injectors/proxy_faults/hedge.h"
#include "injectors/proxy_faults/kill_after_answer.h"
#include "injectors/proxy_faults/replay_upstream.h"
#include "injectors/proxy_faults/reset.h"

namespace idemproof::injectors {

void register_proxy_faults(Registry& registry) {
  // Distinct kinds: add() cannot fail here.
  add_proxy_fault<DropResponse>(registry);
  add_proxy_fault<ReplayUpstream>(registry);
  add_proxy_fault<Hedge>(registry);
  add_proxy_fault<Delay>(registry);
  add_proxy_fault<Reset>(registry);
  add_proxy_fault<KillAfterAnswer>(registry);
  add_proxy_fault<Fail>(registry);
}

}  // namespace idemproof::injectors
