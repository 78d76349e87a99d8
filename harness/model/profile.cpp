#include "model/profile.h"

namespace idemproof {

const char* RuleLevelName(RuleLevel level) { return level == RuleLevel::kShould ? "SHOULD" : "MUST"; }

const ProfileRule* SemanticsProfile::RuleFor(const std::string& oracle, bool status_only) const {
  auto it = rules.find(oracle);
  if (it == rules.end()) return nullptr;
  if (status_only && it->second.status) return &*it->second.status;
  return &it->second.effect;
}

namespace {

constexpr RuleLevel kMust = RuleLevel::kMust;
constexpr RuleLevel kShould = RuleLevel::kShould;

// The rules every profile shares: what makes a key idempotent at all. A
// profile replaces the ones its source says otherwise about.
std::map<std::string, OracleRules> EffectRules(const std::string& p) {
  auto rule = [&](const std::string& id, const std::string& text, RuleLevel level = kMust) {
    return ProfileRule{p + "/" + id, text, level};
  };
  std::map<std::string, OracleRules> r;
  r["one_record"] = {rule("one-execution", "a key executes its action once per window: one record per business action")};
  r["identical_replay"] = {
      rule("same-answer", "a retry after the first answer gets that answer again (status and body), marked as a "
                          "replay where the target marks replays")};
  r["mismatch_rejected"] = {
      rule("changed-request-refused", "a key reused with another request is refused, never executed nor answered "
                                      "with the first result")};
  r["missing_key_rejected"] = {rule("key-required", "a request without its required key is not executed")};
  // The key's own syntax (issue 48): the draft makes Idempotency-Key an Item
  // Structured Header whose value MUST be a String (RFC 8941 sf-string). A
  // malformed key cannot deduplicate, so executing its request is a MUST
  // violation; the refusal's status is a SHOULD, as the missing key's 400.
  auto key_status = [&](const std::string& id, const std::string& what) {
    return std::optional<ProfileRule>(
        rule(id, "a request with " + what + " SHOULD be answered 400 (the declared invalid_key), as a missing key is",
             kShould));
  };
  r["empty_key_rejected"] = {rule("key-not-empty", "a key header with an empty value carries no key: the request "
                                                   "is refused, never executed"),
                             key_status("empty-key-status", "an empty key")};
  r["long_key_rejected"] = {rule("key-max-length", "a key longer than the longest the target declares "
                                                   "(key_max_length) is refused, never executed nor cut short"),
                            key_status("long-key-status", "a key past the declared maximum")};
  r["key_syntax_rejected"] = {rule("key-is-sf-string", "the key is an Item Structured Header whose value MUST be "
                                                       "a String (RFC 8941 sf-string): a request whose key is none "
                                                       "(a list, a stray quote, a non-ASCII character) is refused, "
                                                       "never executed"),
                              key_status("key-syntax-status", "a key that is no sf-string")};
  r["problem_details"] = {rule("problem-details", "where the target declares errors: problem+json, every 4xx is "
                                                  "application/problem+json (RFC 9457) with its members typed as "
                                                  "RFC 9457 section 3.1 says, status equal to the answer's")};
  r["keyless_executes"] = {rule("keyless-executes", "a request without an optional key is executed, not deduplicated")};
  r["in_progress"] = {rule("one-concurrent-execution",
                           "a duplicate arriving while the first runs never executes again: it waits for the first "
                           "answer or is refused as in progress")};
  r["retryable_released"] = {
      rule("failure-released", "a retryable failure (5xx or a declared retryable status) is not stored: the next "
                               "retry executes")};
  r["no_false_dedup"] = {rule("replay-has-record", "an answer marked as a replay has an execution behind it")};
  r["answer_after_abort"] = {rule("abort-keeps-answer", "a client that gave up and retries gets the real answer "
                                                        "or one execution, never an empty or cut stored answer")};
  r["new_key_executes"] = {rule("new-key-executes", "a request under a new key is a new request: it executes, "
                                                    "whatever body or key prefix it shares with another")};
  r["action_scope"] = {rule("key-per-action", "one key on two actions is two keys: both execute")};
  r["caller_scope"] = {rule("key-per-caller", "one key from two callers is two keys: no caller gets another's "
                                              "answer, nor is blocked by another's key")};
  r["window"] = {rule("window-honoured", "a retry inside the declared window is recognised, not executed again")};
  // The oracle takes its level from the target's idempotency.retry_after.
  r["retry_after"] = {rule("retry-after", "an in-progress answer says when to retry (Retry-After), as the target "
                                          "declares: required is a MUST, recommended a SHOULD")};
  r["key_released"] = {rule("key-released", "once no request of a key runs, the key is not in progress: a retry "
                                            "gets the stored answer or executes")};
  r["route_spelling"] = {rule("route-spelling", "another spelling of a keyed route is the same request or another, "
                                                "as the target declares (path_equivalence)")};
  r["probe_equal"] = {rule("state-equal", "the two observed states are equal")};
  r["range_continuity"] = {rule("range-once", "a rerun after a partial failure processes every range once")};
  r["lease_recovery"] = {rule("lease-recovers", "a key whose owner died is free again when its lease ends")};
  r["intent_reconciled"] = {rule("one-external-effect", "one business action has one external effect")};
  r["applied_once"] = {rule("applied-once", "a redelivered message is applied once")};
  r["downstream_once"] = {rule("downstream-once", "a downstream call whose caller crashed right after the answer "
                                                  "takes effect once per business action, retries included")};
  return r;
}

// A profile with the shared effect rules and its own status rules, each at
// `level`; an empty text leaves that oracle without a status rule.
SemanticsProfile Make(const std::string& name, std::string summary, std::string source, RuleLevel level,
                      const std::string& mismatch, const std::string& in_progress, const std::string& missing_key) {
  SemanticsProfile s;
  s.name = name;
  s.summary = std::move(summary);
  s.source = std::move(source);
  s.rules = EffectRules(name);
  struct StatusOf {
    const char* oracle;
    const char* id;
    const std::string& text;
  };
  const StatusOf status_rules[] = {{"mismatch_rejected", "mismatch-status", mismatch},
                                   {"in_progress", "in-progress-status", in_progress},
                                   {"missing_key_rejected", "missing-key-status", missing_key}};
  for (const auto& r : status_rules) {
    if (!r.text.empty()) s.rules[r.oracle].status = ProfileRule{name + "/" + r.id, r.text, level};
  }
  return s;
}

// The status rule of identical_replay: an equivalent body (JSON members
// reordered, re-indented) is the same request, not another payload. Judged
// only where the target does not declare `fingerprint: bytes`.
ProfileRule JsonEquivalence(const std::string& profile, RuleLevel level, std::string text) {
  return ProfileRule{profile + "/json-equivalence", std::move(text), level};
}

SemanticsProfile Ietf() {
  SemanticsProfile s = Make("ietf",
              "the IETF Idempotency-Key draft: 400 without a key, 422 for a changed request, 409 while in progress "
              "(SHOULD); errors of a completed operation are replayed, 5xx released",
              "draft-ietf-httpapi-idempotency-key-header (IETF HTTPAPI WG), sections on idempotency enforcement and "
              "error scenarios",
              kShould, "a key reused with a different payload SHOULD be answered 422",
              "a retry while the original is still processing SHOULD be answered 409",
              "a request missing its required key SHOULD be answered 400");
  s.rules["identical_replay"].status =
      JsonEquivalence(s.name, kShould,
                      "a retry whose body is equal as JSON SHOULD get the stored answer; the draft allows a "
                      "fingerprint over the payload's bytes, so a mismatch answer to it is a deviation");
  return s;
}


SemanticsProfile StripeV1() {
  SemanticsProfile s =
      Make("stripe-v1",
           "Stripe API v1: the first result after execution began is saved and replayed, 500 errors included; a "
           "changed request gets 400; the key is optional; replays carry Idempotent-Replayed: true",
           "docs.stripe.com/api/idempotent_requests (API v1) and docs.stripe.com/error-low-level#idempotency", kMust,
           "a key reused with other parameters gets an idempotency_error (400)",
           "a request conflicting with one executing concurrently gets 409 (not saved)", "");
  s.defaults.key_optional = true;
  s.defaults.mismatch = 400;
  s.defaults.stores_5xx = true;
  ReplayMarker marker;
  marker.header = "Idempotent-Replayed";
  s.defaults.replay = marker;
  s.rules["identical_replay"].effect.text =
      "a retry with the same key gets the saved status code and body, including 500 errors";
  s.rules["retryable_released"].effect = {s.name + "/saved-500-replayed",
                                          "a 500 after execution began is saved and replayed, not released", kMust};
  s.rules["identical_replay"].status = JsonEquivalence(
      s.name, kMust, "request parameters are compared as parsed values: a retry whose body is equal as JSON gets "
                     "the saved answer, never the changed-request error");
  return s;
}

SemanticsProfile StripeV2() {
  SemanticsProfile s =
      Make("stripe-v2",
           "Stripe API v2: a retry never repeats a successful operation and finishes failed work (a 5xx is not "
           "replayed: the retry executes); a changed request gets 400; the key is optional",
           "docs.stripe.com/api-v2-overview#idempotency; the mismatch status is v1's (400), the v2 overview names no "
           "other",
           kMust, "a key reused with other parameters gets 400", "a request conflicting with one executing gets 409",
           "");
  s.defaults.key_optional = true;
  s.defaults.mismatch = 400;
  s.rules["retryable_released"].effect = {
      s.name + "/failed-work-finished", "a retry after a failure finishes the work rather than replaying the failure",
      kMust};
  s.rules["identical_replay"].status = JsonEquivalence(
      s.name, kMust, "request parameters are compared as parsed values: a retry whose body is equal as JSON gets "
                     "the saved answer, never the changed-request error");
  return s;
}

SemanticsProfile Store2xxOnly() {
  SemanticsProfile s =
      Make("store-2xx-only",
           "only 2xx answers are stored and replayed; any 4xx or 5xx is released (the retry executes again); a "
           "changed request gets 400, 409 or 422; Retry-After not expected",
           "the common middleware design that caches successful responses only (e.g. libraries that store a "
           "response only when its status is 2xx)",
           kShould, "a key reused with another request is refused with 400, 409 or 422",
           "a duplicate while the first runs is refused with 409", "a request missing its required key is answered 400");
  s.defaults.stores_4xx = false;
  s.defaults.mismatch = 422;
  s.defaults.mismatch_also = {400, 409};
  s.rules["identical_replay"].effect.text = "a retry after a 2xx gets that answer again; a 4xx is not replayed";
  s.rules["retryable_released"].effect = {s.name + "/failure-released",
                                          "no 4xx or 5xx is stored: the next retry executes", kMust};
  s.rules["identical_replay"].status = JsonEquivalence(
      s.name, kShould, "a retry whose body is equal as JSON should get the stored answer (many middlewares hash "
                       "the body's bytes)");
  return s;
}

}  // namespace

const std::vector<SemanticsProfile>& Profiles() {
  static const std::vector<SemanticsProfile> profiles = [] {
    std::vector<SemanticsProfile> all = {Ietf(), StripeV1(), StripeV2(), Store2xxOnly()};
    for (auto& p : all) p.defaults.profile = p.name;
    return all;
  }();
  return profiles;
}

const SemanticsProfile* FindProfile(const std::string& name) {
  for (const auto& p : Profiles())
    if (p.name == name) return &p;
  return nullptr;
}

std::string ProfileNames() {
  std::string out;
  for (const auto& p : Profiles()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace idemproof
