// `idempotency:` and `profile:` (contract.h).
#include <algorithm>
#include <string>
#include <vector>

#include "model/profile.h"
#include "model/target/contract.h"
#include "model/target/parse/load_context.h"

namespace idemproof {
namespace {

// Each route spelling: its respelling payload form (model/payload.h), its
// key under idempotency.path_equivalence, and the field holding it.
struct SpellingEntry {
  const char* form;
  const char* key;
  PathEquivalence::Spelling PathEquivalence::*field;
};

constexpr SpellingEntry kSpellings[] = {
    {"spelling_trailing_slash", "trailing_slash", &PathEquivalence::trailing_slash},
    {"spelling_case", "case", &PathEquivalence::letter_case},
    {"spelling_query_order", "query_order", &PathEquivalence::query_order},
};

// The semantics profile: --profile, else the file's `profile:`, else ietf.
const SemanticsProfile& Profile(TargetLoadContext& cx, const YAML::Node& node) {
  if (!cx.profile_override.empty()) {
    if (const SemanticsProfile* p = FindProfile(cx.profile_override)) return *p;
    throw yaml::ConfigError{Status::InvalidArgument("--profile: unknown profile '" + cx.profile_override +
                                                   "' (known: " + ProfileNames() + ")")};
  }
  if (!node) return *FindProfile("ietf");
  const std::string name = cx.r.String(node, "profile");
  if (const SemanticsProfile* p = FindProfile(name)) return *p;
  std::vector<std::string> known;
  for (const auto& p : Profiles()) known.push_back(p.name);
  cx.r.Fail(node, "unknown profile '" + name + "' (known: " + ProfileNames() + ")" + yaml::DidYouMean(name, known));
}

// path_equivalence: {trailing_slash, case, query_order: same|distinct, query: {NAME: VALUE}}
PathEquivalence PathSpellings(TargetLoadContext& cx, const YAML::Node& node) {
  const std::string what = "idempotency.path_equivalence";
  cx.r.ExpectMap(node, what);
  cx.r.CheckKeys(node, {"trailing_slash", "case", "query_order", "query"}, what);
  PathEquivalence p;
  auto spelling = [&](const char* key, PathEquivalence::Spelling& out) {
    if (!node[key]) return;
    const std::string v = cx.r.String(node[key], what + "." + key);
    if (v == "same") {
      out = PathEquivalence::Spelling::kSame;
    } else if (v == "distinct") {
      out = PathEquivalence::Spelling::kDistinct;
    } else {
      cx.r.Fail(node[key], what + "." + key + " must be same or distinct, found '" + v + "'");
    }
  };
  for (const auto& s : kSpellings) spelling(s.key, p.*s.field);
  if (node["query"]) p.query = cx.Headers(node["query"], what + ".query", /*http=*/false);
  if (!p.Declared())
    cx.r.Fail(node, what + " declares no spelling: give trailing_slash, case or query_order (same or distinct)");
  return p;
}

// An HTTP status or a non-empty list of distinct ones: the first into
// `first`, the rest into `also`.
void StatusList(TargetLoadContext& cx, const YAML::Node& node, const std::string& what, int& first,
                std::vector<int>& also) {
  also.clear();
  if (!node.IsSequence()) {
    first = cx.r.HttpStatus(node, what);
    return;
  }
  if (node.size() == 0) cx.r.Fail(node, what + " must name at least one status");
  std::vector<int> seen;
  for (const auto& item : node) {
    const int st = cx.r.HttpStatus(item, what + " item");
    if (std::find(seen.begin(), seen.end(), st) != seen.end())
      cx.r.Fail(item, what + ": status " + std::to_string(st) + " is listed twice");
    seen.push_back(st);
  }
  first = seen.front();
  also.assign(seen.begin() + 1, seen.end());
}

IdempotencyContract ParseIdempotency(TargetLoadContext& cx, const YAML::Node& node, IdempotencyContract c) {
  cx.r.CheckKeys(node,
               {"key_header", "key", "replay", "in_progress", "mismatch", "missing_key", "retryable", "window",
                "lease", "retry_after", "recovery_bound", "key_max_length", "path_equivalence",
                "validation_first", "natural_key", "fingerprint", "invalid_key"},
               "idempotency");
  if (node["validation_first"]) c.validation_first = cx.r.Bool(node["validation_first"], "idempotency.validation_first");
  if (node["key_header"] && node["key_header"].IsScalar() && node["key_header"].Scalar() == "none") {
    c.key_header.clear();  // the actions' templates carry {{key}}
  } else if (node["key_header"]) {
    c.key_header = cx.HeaderName(node["key_header"], "idempotency.key_header");
  }
  if (node["replay"]) {
    YAML::Node rn = node["replay"];
    ReplayMarker m;
    if (rn.IsScalar()) {
      m.header = cx.HeaderName(rn, "idempotency.replay");
    } else {
      cx.r.CheckKeys(rn, {"header", "body", "value"}, "idempotency.replay");
      if (rn["header"].IsDefined() == rn["body"].IsDefined()) {
        cx.r.Fail(rn, "idempotency.replay needs exactly one of header (a header name) or body (a JSON path)");
      }
      if (rn["header"]) m.header = cx.HeaderName(rn["header"], "idempotency.replay.header");
      if (rn["body"]) m.body = cx.r.Path(rn["body"], "idempotency.replay.body");
      if (rn["value"]) m.value = cx.r.String(rn["value"], "idempotency.replay.value");
    }
    c.replay = m;
  }
  if (node["key"]) {
    const std::string k = cx.r.String(node["key"], "idempotency.key");
    if (k != "required" && k != "optional")
      cx.r.Fail(node["key"], "idempotency.key must be required or optional, found '" + k + "'");
    c.key_optional = k == "optional";
  }
  if (node["in_progress"]) StatusList(cx, node["in_progress"], "idempotency.in_progress", c.in_progress, c.in_progress_also);
  if (node["mismatch"]) StatusList(cx, node["mismatch"], "idempotency.mismatch", c.mismatch, c.mismatch_also);
  // One status may be both in_progress and mismatch (many services answer
  // 409 to both): an answer with it counts as in progress.
  if (node["retry_after"]) {
    // `required` or `{level: required, min: 2s}` (min: the shortest delay it may give).
    YAML::Node level = node["retry_after"];
    if (level.IsMap()) {
      cx.r.CheckKeys(level, {"level", "min"}, "idempotency.retry_after");
      if (level["min"]) {
        c.retry_after_min = cx.r.DurationOf(level["min"], "idempotency.retry_after.min");
        if (c.retry_after_min < std::chrono::seconds(1))
          cx.r.Fail(level["min"], "idempotency.retry_after.min must be at least 1s (a Retry-After counts whole "
                                "seconds, and 0 says retry at once)");
      }
      level = cx.r.Required(level, "level", "idempotency.retry_after");
    }
    const std::string ra = cx.r.String(level, "idempotency.retry_after");
    if (ra == "required") {
      c.retry_after = IdempotencyContract::RetryAfter::kRequired;
    } else if (ra == "recommended") {
      c.retry_after = IdempotencyContract::RetryAfter::kRecommended;
    } else if (ra != "none") {
      cx.r.Fail(level, "idempotency.retry_after must be required, recommended or none, found '" + ra + "'");
    }
  }
  if (node["recovery_bound"]) {
    c.recovery_bound = cx.r.DurationOf(node["recovery_bound"], "idempotency.recovery_bound");
    c.recovery_bound_declared = true;
  }
  if (node["natural_key"]) c.natural_key = cx.r.Path(node["natural_key"], "idempotency.natural_key");
  if (node["fingerprint"]) {
    const std::string f = cx.r.String(node["fingerprint"], "idempotency.fingerprint");
    if (f == "bytes") {
      c.fingerprint = IdempotencyContract::Fingerprint::kBytes;
    } else if (f != "json") {
      cx.r.Fail(node["fingerprint"], "idempotency.fingerprint must be json or bytes, found '" + f + "'");
    }
  }
  if (node["missing_key"]) c.missing_key = cx.r.HttpStatus(node["missing_key"], "idempotency.missing_key");
  if (node["retryable"]) {
    if (!node["retryable"].IsSequence()) cx.r.Fail(node["retryable"], "idempotency.retryable must be a list of statuses");
    for (const auto& item : node["retryable"]) c.retryable.push_back(cx.r.HttpStatus(item, "idempotency.retryable item"));
  }
  if (node["window"]) c.window = cx.r.DurationOf(node["window"], "idempotency.window");
  if (node["lease"]) c.lease = cx.r.DurationOf(node["lease"], "idempotency.lease");
  if (node["key_max_length"]) {
    const long long n = cx.r.Int(node["key_max_length"], "idempotency.key_max_length");
    if (n < 1 || n > 8192)
      cx.r.Fail(node["key_max_length"], "idempotency.key_max_length must be between 1 and 8192, found " + std::to_string(n));
    c.key_max_length = static_cast<std::size_t>(n);
    c.key_max_length_declared = true;
  }
  if (node["invalid_key"]) {
    c.invalid_key = cx.r.HttpStatus(node["invalid_key"], "idempotency.invalid_key");
    c.invalid_key_declared = true;
  }
  if (node["path_equivalence"]) c.path_equivalence = PathSpellings(cx, node["path_equivalence"]);
  return c;
}

}  // namespace

IdempotencyContract ParseContract(TargetLoadContext& cx, const YAML::Node& profile, const YAML::Node& idempotency) {
  IdempotencyContract c = Profile(cx, profile).defaults;
  return idempotency ? ParseIdempotency(cx, idempotency, c) : c;
}

// PathEquivalence's lookups read the spellings table above (the file's keys).
PathEquivalence::Spelling PathEquivalence::For(const std::string& form) const {
  for (const auto& s : kSpellings)
    if (form == s.form) return this->*s.field;
  return Spelling::kUndeclared;
}

std::string PathEquivalence::KeyFor(const std::string& form) {
  for (const auto& s : kSpellings)
    if (form == s.form) return s.key;
  return "";
}

}  // namespace idemproof
