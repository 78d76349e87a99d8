// register_builtin_injectors (declared in injectors/registry.h): the one place
// that names the built-in proxy faults (drop-response, replay-upstream, hedge,
// delay, reset, kill-after-answer, fail). A new fault is one file in this
// folder and one line here (see injectors/proxy_fault.h). The faults include
// neither the registry nor this file, so registering adds no include cycle.
#include "injectors/proxy_fault_injector.h"
#include "injectors/proxy_faults/delay.h"
#include "injectors/proxy_faults/drop_response.h"
#include "injectors/proxy_faults/fail.h"
#include "injectors/proxy_faults/hedge.h"
#include "injectors/proxy_faults/kill_after_answer.h"
#include "injectors/proxy_faults/replay_upstream.h"
#include "injectors/proxy_faults/reset.h"
#include "injectors/registry.h"

namespace idemproof::injectors {

void register_builtin_injectors(Registry& registry) {
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
