// Random tokens: lease owners, payment intents, charge keys. 128 bits from a
// per-thread generator, as 32 lowercase hex digits: unguessable enough that
// two executions never share one, not a secret.
//
// Thread-safety: safe from any thread.
#pragma once

#include <string>

namespace idemproof::ref {

std::string random_token();

}  // namespace idemproof::ref
