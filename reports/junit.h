// JUnit XML for CI, rendered from RunResults: one <testsuite> per scenario,
// one <testcase> per scenario x oracle (classname "<layer>.<scenario>", name
// the oracle, then a bound row's binding and a shard's place: "one_record
// [create=create_order] (shard 2/4)"). invalid -> <failure> carrying the evidence (message) and the
// details JSON (text); unknown -> <error>; not_applicable -> <skipped>. A
// scenario the tool could not run gets one testcase "run" with an <error>.
// Every string taken from the run (evidence, answers) is XML-escaped.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "model/results.h"
#include "base/status.h"

namespace idemproof {

std::string RenderJUnit(const RunResults& results);

}  // namespace idemproof
