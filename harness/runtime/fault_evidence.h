// Fault evidence: did the faults a scenario declares actually fire?
//
// A chaos scenario whose chaos never fired proves nothing, so its verdicts
// must not read as a pass. FaultsFired() reads the history: the injector's
// own record of each firing (its "injected" events on the proxy lane; one
// with "missed" did not do what it is for, e.g. "nothing killed"), never the
// request to fire (the heal event's "injected", how often it was picked,
// kept in details as "picked"), and returns one verdict, oracle "faults_fired":
//   valid    every declared fault took effect at least once ("lost-answer fired 1×");
//   unknown  a declared fault fired 0 times, or only missed, or was picked
//            with no record of the injector, or was never started, or failed
//            to start ("fault lost-answer never fired: the scenario proves
//            nothing about it"), which makes the scenario's outcome unknown;
// and nothing for a scenario that declares no fault. The faults a `cause`
// step armed (their fault events carry "cause") are judged the same way. Pure: `idemproof check`
// recomputes it offline from the history.
//
// Thread-safety: pure function.
#pragma once

#include <optional>

#include "model/history.h"
#include "model/scenario.h"
#include "model/verdict.h"

namespace idemproof::runtime {

inline constexpr const char* kFaultsFiredOracle = "faults_fired";

std::optional<Verdict> FaultsFired(const Scenario& scenario, const History& history);

}  // namespace idemproof::runtime
