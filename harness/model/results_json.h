// results.json: the one place a run's results, their verdicts and the
// verdicts' typed details (model/verdict_details.h) become JSON and are read
// back. One codec each way; the conformance table (model/conformance.h) is
// derived into the document here and not read back.
//
// Thread-safety: pure functions; WriteRunResults writes one file.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/results.h"
#include "model/verdict.h"
#include "model/verdict_details.h"

namespace idemproof {

// A verdict's "details" object: each set member under its name (the tables
// in results_json.cpp), "violations" as FindingToJson of each finding, and
// the unknown members as read.
nlohmann::json VerdictDetailsToJson(const VerdictDetails& details);
// Reads what VerdictDetailsToJson writes. A member goes to the first kind
// whose table names it and whose shape it has (counts: an integer; tallies:
// an object of integers; texts: a string; lists: an array of strings;
// records: anything); what no kind takes is kept in `unknown`. Not an
// object: empty details.
VerdictDetails VerdictDetailsFromJson(const nlohmann::json& doc);

nlohmann::json VerdictToJson(const Verdict& verdict);
Result<Verdict> VerdictFromJson(const nlohmann::json& doc);

nlohmann::json ScenarioResultToJson(const ScenarioResult& result);
Result<ScenarioResult> ScenarioResultFromJson(const nlohmann::json& doc);

// results.json "hunt": the hunt phase (model/results.h HuntResults). A
// hunt that did not run has only budget, spec_file, oracles, exit_code,
// outcome "not_run" and reason.
nlohmann::json HuntResultsToJson(const HuntResults& hunt);
Result<HuntResults> HuntResultsFromJson(const nlohmann::json& doc);

// results.json: every field above plus "exit_code" and "metrics" (the total);
// "namespace" only when set (older run directories lack it). An incomplete
// run has "finished": false (instead of its time) and exit code 3 at most
// 1 (a violation already seen stays one); reading it back sets complete.
nlohmann::json RunResultsToJson(const RunResults& results);
Result<RunResults> RunResultsFromJson(const nlohmann::json& doc);
// Atomic: written to a temp file beside `path`, then renamed over it, so a
// reader (or a killed harness) never leaves a half-written results.json.
Status WriteRunResults(const RunResults& results, const std::string& path);
// Errors name `path`: kIoError unreadable; kInvalidArgument not JSON (with
// the line:column where parsing stopped) or not a results document.
Result<RunResults> ReadRunResults(const std::string& path);

}  // namespace idemproof
