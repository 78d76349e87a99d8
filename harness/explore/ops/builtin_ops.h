// The built-in op kinds (explore/op_spec.h), one factory each, defined in
// their family's file under harness/explore/ops/ and registered in
// builtin_ops.cpp.
#pragma once

#include <memory>

#include "explore/op_spec.h"

namespace idemproof::explore {

// Registers the built-ins into `registry`, in the alphabet's draw order.
void RegisterBuiltinOps(OpRegistry& registry);

// The process's registry, the built-ins (ops/builtin_ops.cpp) registered on
// first use.
OpRegistry& Ops();
// The registered kind `name`. REQUIRES: registered (a programming error
// otherwise: aborts with a message).
const OpSpec* OpNamed(const std::string& name);

// send_ops.cpp
std::unique_ptr<OpSpec> MakeSendOp();
std::unique_ptr<OpSpec> MakeSendOtherOp();
std::unique_ptr<OpSpec> MakeSendEquivalentOp();
std::unique_ptr<OpSpec> MakeSendChangedOp();
std::unique_ptr<OpSpec> MakeSendThenKillOp();
std::unique_ptr<OpSpec> MakeSendBackgroundOp();
std::unique_ptr<OpSpec> MakeBurstOp();
std::unique_ptr<OpSpec> MakeFaultOp();
// wait_ops.cpp
std::unique_ptr<OpSpec> MakeWaitOp();
std::unique_ptr<OpSpec> MakeWaitPastLeaseOp();
std::unique_ptr<OpSpec> MakeWaitPastWindowOp();
// process_ops.cpp
std::unique_ptr<OpSpec> MakeKillOp();
std::unique_ptr<OpSpec> MakeRestartOp();
std::unique_ptr<OpSpec> MakePauseOp();
std::unique_ptr<OpSpec> MakeResumeOp();
// hook_cause_ops.cpp
std::unique_ptr<OpSpec> MakeHookOp();
std::unique_ptr<OpSpec> MakeCauseOp();
// crash_ops.cpp
std::unique_ptr<OpSpec> MakeKillMidWorkOp();
std::unique_ptr<OpSpec> MakeSendPastLeaseOp();
// queue_batch_ops.cpp
std::unique_ptr<OpSpec> MakeDeliverOp();
std::unique_ptr<OpSpec> MakeRedeliverOp();
std::unique_ptr<OpSpec> MakeRunBatchOp();
std::unique_ptr<OpSpec> MakeRerunOp();
// client_ops.cpp
std::unique_ptr<OpSpec> MakeSendAbortOp();
std::unique_ptr<OpSpec> MakeSendCallerOp();

}  // namespace idemproof::explore
