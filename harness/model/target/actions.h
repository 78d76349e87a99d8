// `actions:` of the target file: the business actions the scenarios send,
// with their records probe, captures and variants.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/header_list.h"
#include "base/status.h"
#include "model/json_path.h"
#include "model/target/request.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// How to count an action's business records for one biz id.
struct RecordsProbe {
  TargetCall call;
  JsonPath count;   // an integer, or an array (one record per element)
  SourceMark mark;

  // The record count in the call's value: the integer at `count`, or the
  // size of the array there (a listing without a total, as Stripe's
  // {"data": [...], "has_more": false}). Error (kNotFound) otherwise.
  Result<std::int64_t> CountIn(const nlohmann::json& value) const;
};

// Where a captured variable comes from in a 2xx answer: a JSON path into
// the body, or an answer header (e.g. Location, for an API answering 201
// with the new resource's URL and no body), optionally narrowed by a regex
// whose group 1 is the value.
struct CaptureRule {
  std::optional<JsonPath> path;  // the body's JSON; unset = from `header`
  std::string header;            // with no path: the header's value
  std::string pattern;           // RE2 regex over the header's value; "" = all of it

  // The captured text (a JSON string as is, any other JSON value dumped);
  // nullopt when the answer does not have it.
  std::optional<std::string> From(const HeaderList& headers, const std::string& body) const;
};

// A business action the scenarios can send.
struct ActionDescription {
  std::string name;
  RequestTemplate request;
  // The request body for "same key, other payload" (payload: other). Only
  // json/body are used from it.
  std::optional<RequestTemplate> other_payload;
  std::optional<RecordsProbe> records;
  // Variables taken from the first 2xx answer, for later requests.
  std::map<std::string, CaptureRule> capture;
  // JSON paths allowed to differ between answers for one key (added to the
  // target-wide list).
  std::vector<JsonPath> volatile_paths;
  // What the action is for the bind stage (roles.h); "" = no role: only
  // scenarios naming it literally send it. `role: [create, pay]` gives it
  // several (an order endpoint that also charges): `role` is the first,
  // `roles` all of them; compare through HasRole.
  std::string role;
  std::vector<std::string> roles;
  bool HasRole(const std::string& r) const;
  // The create action whose resource this one works on (a put, delete or
  // callback of that create); "" = none. Always an action with role create.
  std::string of;
  std::map<std::string, RequestVariant> variants;  // by name
  // JSON paths of the request body that do not take part in the target's
  // request fingerprint (a client timestamp, a trace id): the changed
  // payload forms leave them alone, `ignored_changed` changes one.
  std::vector<JsonPath> fingerprint_ignores;
  // `calls: [NAME, ...]`: the http egress downstreams this action's work
  // calls (a payment provider, a fraud check); unset = those of the ledger
  // probes of it (`egress:` with `of:` this action). See DownstreamsOf.
  std::optional<std::vector<std::string>> calls;
  SourceMark mark;
};

// Reads `actions:` (required, at least one) into t.actions.
void ParseActions(TargetLoadContext& cx, const YAML::Node& actions, TargetDescription& t);
// Once the file is read: every `of:` names a fitting action or message.
void CheckRoleOf(TargetLoadContext& cx, const TargetDescription& t);
// With `key_header: none`: every action sends {{key}} itself.
void CheckActionsSendKey(TargetLoadContext& cx, const YAML::Node& actions, const TargetDescription& t);
// Last of all: every action has a role.
void CheckActionRoles(TargetLoadContext& cx, const YAML::Node& actions, const TargetDescription& t);

}  // namespace idemproof
