// register_proxy_faults: the one place that names the built-in proxy faults
// (drop-response, replay-upstream, hedge, delay, reset, kill-after-answer,
// fail). A new fault is one
// file in this folder and one line in builtin_proxy_faults.cpp (see
// injectors/proxy_fault.h).
#pragma once

#include "injectors/registry.h"

namespace idemproof::injectors {

void register_proxy_faults(Registry& registry);

}  // namespace idemproof::injectors
