#include "oracles/oracle.h"
#include "oracles/answer_after_abort.h"
#include "oracles/oracle_support.h"
#include "oracles/side_effect_oracles.h"

namespace idemproof {

void RegisterBuiltinOracles(OracleRegistry& registry) {
  using namespace oracles;
  const OracleParamSpec actions{"actions", ParamType::kStringList, false, "only these actions (default: all)"};
  struct Builtin {
    OracleSignature sig;
    OracleFn fn;
  };
  const std::vector<Builtin> builtins = {
      {{"one_record", "each business id has exactly `count` records after a 2xx, none when every request was rejected",
        {actions, {"count", ParamType::kInt, false, "records expected per business id (default 1)"}},
        false,
        "repeated deliveries (or keyless requests)"},
       OneRecord},
      {{"identical_replay",
        "every later answer for a key equals the first (status, body minus volatile, compare_headers) and carries "
        "the replay marker; the first does not",
        {actions,
         {"failures", ParamType::kBool, false,
          "only keys whose first answer was a stored failure (a final non-2xx): a repeat of the failed request gets "
          "it unchanged, Retry-After included"}},
        true, "replays"},
       IdenticalReplay},
      {{"mismatch_rejected", "a reused key with another payload gets the declared mismatch status, never the first result",
        {actions}, true, "reuses of a key with another payload"},
       MismatchRejected},
      {{"missing_key_rejected", "a request without the key header gets the declared missing_key status", {actions},
        false, "requests without a key"},
       MissingKeyRejected},
      {{"empty_key_rejected",
        "a request whose key header is empty gets idempotency.invalid_key (default 400) and is never executed",
        {actions}, false, "requests with an empty key (key_form: empty)"},
       EmptyKeyRejected},
      {{"long_key_rejected",
        "a request whose key is one character longer than the declared idempotency.key_max_length gets "
        "idempotency.invalid_key and is never executed",
        {actions}, false, "requests with a key past the declared maximum (key_form: over_max_length)"},
       LongKeyRejected},
      {{"key_syntax_rejected",
        "a request whose key is no Structured Field String (a comma, a quote, a non-ASCII character) gets "
        "idempotency.invalid_key and is never executed",
        {actions}, false, "requests with a key that is no sf-string (key_form: comma, quote, non_ascii)"},
       KeySyntaxRejected},
      {{"problem_details",
        "with errors: problem+json, every 4xx answer is application/problem+json with the RFC 9457 members "
        "typed as the RFC says (status equal to the answer's)",
        {actions}, false, "4xx answers"},
       ProblemDetails},
      {{"keyless_executes",
        "with idempotency.key: optional, a request without the key is executed (2xx) and never answered as a replay",
        {actions}, false, "requests without a key"},
       KeylessExecutes},
      {{"in_progress",
        "a duplicate overlapping a running request gets the in-progress status or the first answer; one execution",
        {actions}, true, "overlapping duplicates"},
       InProgress},
      {{"retryable_released", "after a retryable answer the next retry really executes and one record exists",
        {actions}, false, "retries after a retryable answer"},
       RetryableReleased},
      {{"no_false_dedup", "every replay-marked 2xx/retryable answer has at least one record behind it", {actions},
        false, "replay-marked answers"},
       NoFalseDedup},
      {{"answer_after_abort",
        "after a client gave up on a request, every later 2xx for its key is the real answer: not empty, not cut "
        "short (against the action's answers received whole)",
        {actions}, true, "answers after a client gave up"},
       AnswerAfterAbort},
      {{"new_key_executes",
        "a request under a new key executes: never swallowed as a replay of another key's request with the same "
        "body or a key sharing its prefix, each 2xx with a record",
        {actions}, true, "requests under a new key"},
       NewKeyExecutes},
      {{"action_scope", "the same key on two different actions executes both", {}, false, "keys shared by two actions"},
       ActionScope},
      {{"caller_scope",
        "one key from two callers is two keys: no caller gets another's answer or credential headers, or is "
        "blocked by another's key",
        {actions},
        false,
        "keys shared by two callers"},
       CallerScope},
      {{"window", "a retry inside the declared window is recognised and creates no second record",
        {actions, {"window", ParamType::kDuration, false, "overrides the target's idempotency.window"}},
        false,
        "retries inside the window"},
       Window},
      {{"retry_after",
        "every in-progress answer carries Retry-After, as idempotency.retry_after declares (required: a "
        "violation, recommended: a deviation, none: not judged)",
        {actions},
        false,
        "in-progress answers"},
       RetryAfter},
      {{"key_released",
        "once no request of a key is running (every earlier one answered, no kill), a request of it is not "
        "answered in progress",
        {actions},
        false,
        "requests sent after their key's earlier ones were answered"},
       KeyReleased},
      {{"route_spelling",
        "the same key and body under another spelling of the route (trailing slash, letter case, query order) is "
        "judged as idempotency.path_equivalence declares it: same = the first answer replayed and no second "
        "record, distinct = never the first answer's replay",
        {actions},
        true,
        "requests under another spelling of their route"},
       RouteSpelling},
      {{"probe_equal", "two labelled probe values are equal, minus volatile paths",
        {{"a", ParamType::kString, true, "label of the first probe"},
         {"b", ParamType::kString, true, "label of the second probe"},
         {"volatile", ParamType::kStringList, false, "extra JSON paths to ignore"}}},
       ProbeEqual},
      {{"range_continuity",
        "after a partial failure and reruns every range is processed once (none lost, none doubled, at most one "
        "partition redone), the result equals a clean run row by row, markers agree with the rows, later reruns "
        "change nothing",
        {{"job", ParamType::kString, false, "the rerun job (default: the first job made to fail)"},
         {"clean", ParamType::kString, false, "the clean run's job (default: the clean run of the same job)"},
         {"redo_rows", ParamType::kInt, false, "rows a rerun may redo (default: the target's batch.partition_rows)"}},
        false,
        "reruns after a partial failure"},
       RangeContinuity},
  };
  for (const auto& b : builtins) registry.Register(b.sig, b.fn);
  RegisterSideEffectOracles(registry);
}

const OracleRegistry& BuiltinOracles() {
  static const OracleRegistry registry = [] {
    OracleRegistry r;
    RegisterBuiltinOracles(r);
    return r;
  }();
  return registry;
}

}  // namespace idemproof
