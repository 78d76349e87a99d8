// Finding: one thing an oracle found wrong, as every oracle that lists its
// violations builds it (oracles/oracle_support.h's Violations) and as the
// reports read it back (reports/design_review/run_review.cpp): one type and
// one JSON codec, so a reader never guesses which member is a request.
//
// JSON (one element of a verdict's "violations", model/verdict_details.h): the subject's
// fields (key, action, biz, ... as the oracle names them), "problem", "rule"
// ("status": the finding is about the status code alone, and the profile's
// status rule applies; "effect"), every op under its role's name (an object,
// or an array for the roles that hold several), "differences", "records",
// "expected", "missing_ranges" and "values" ([{"label", "value"}]: values
// the finding compares that are no answer, e.g. probe_equal's two probes)
// when set. An op is a reference to the
// history: {"index", "process", ...} (oracles' OpJson); a role's member
// without an "index" (an answer a proxy swallowed: no request of the history
// got it) is evidence of the subject, not an op.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace idemproof {

// The part an op plays in a finding. Its name is its JSON member; the order
// is the order a reader compares them in (the first answer, then the one
// that should have equalled it, ...).
enum class FindingRole {
  kFirst,       // "first": the answer the others are held to
  kReplay,      // "replay": a later answer of the key
  kRetry,       // "retry": a retry (of a failure, after the window)
  kDuplicate,   // "duplicate": a duplicate overlapping another request
  kRequest,     // "request": the one request the finding is about
  kFailure,     // "failure": the retryable failure before a retry
  kReplayOf,    // "replay_of": the request whose answer another got
  kExecutions,  // "executions" (several): the executions of one key
  kOps,         // "ops" (several): every request of one business id
};
const char* FindingRoleName(FindingRole role);
// True for the roles whose JSON member is an array.
bool FindingRoleHoldsSeveral(FindingRole role);

// An op reference (oracles' OpJson) read once, so a reader of findings
// never probes its JSON: members absent in `ref` stay at their defaults.
struct OpRefView {
  std::int64_t index = -1;
  std::string process;
  std::string key;
  std::string outcome;  // "ok", "fail", "info", "open"
  std::string error;    // the completion's error text, "" when none
  std::optional<std::int64_t> completion_index;
  nlohmann::json answer;  // AnswerEvidenceJson's object, null when none
};
OpRefView ReadOpRef(const nlohmann::json& ref);

struct FindingOp {
  FindingRole role = FindingRole::kRequest;
  nlohmann::json ref;  // {"index", "process", ...}: oracles' OpJson

  // The op's history index, or -1.
  std::int64_t index() const;
  bool operator==(const FindingOp&) const = default;
};

// A labelled value a finding compares (a probe's reading), not an answer.
struct FindingValue {
  std::string label;
  nlohmann::json value;

  bool operator==(const FindingValue&) const = default;
};

struct Finding {
  nlohmann::json subject = nlohmann::json::object();  // key, action, biz, ...
  std::string problem;                                // what broke, one line
  std::string rule;                                   // "", "status" or "effect"
  std::vector<FindingOp> ops;                         // in the order added
  std::vector<std::string> differences;
  std::optional<std::int64_t> records;
  nlohmann::json expected;  // null: not said
  std::vector<std::string> missing_ranges;
  std::vector<FindingValue> values;  // in the order compared

  // Adds `ref` as an op of `role`; a ref without "index" (a swallowed
  // answer) goes to subject[role's name] instead, null nowhere.
  Finding& With(FindingRole role, nlohmann::json ref);
  // Every op of `role`, in the order added.
  std::vector<const FindingOp*> OpsOf(FindingRole role) const;
  bool operator==(const Finding&) const = default;
};

// A finding of `problem` about `subject` ({"key": ..., "action": ...}).
Finding MakeFinding(std::string problem, nlohmann::json subject = nlohmann::json::object());

// `finding` as its JSON says it: ops in role order, one op for each role
// that holds one (the first added). Oracles' Violations::Add keeps findings
// so; FindingFromJson(FindingToJson(f)) == f for such a finding.
Finding InRoleOrder(Finding finding);

nlohmann::json FindingToJson(const Finding& finding);
// Reads what FindingToJson writes; members of another shape are kept in
// `subject` (a finding written before this type kept them there too).
Finding FindingFromJson(const nlohmann::json& doc);

}  // namespace idemproof
