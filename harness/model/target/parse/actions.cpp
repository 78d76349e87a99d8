// `actions:` (actions.h).
#include <algorithm>
#include <optional>

#include <re2/re2.h>

#include "model/role_hints.h"
#include "model/pattern.h"
#include "model/target/actions.h"
#include "model/target/description.h"
#include "model/target/parse/load_context.h"
#include "model/template.h"

namespace idemproof {
namespace {

// A JSON path, or {header: NAME, regex: '...(group 1)...'}.
CaptureRule Capture(TargetLoadContext& cx, const YAML::Node& node, const std::string& what) {
  CaptureRule rule;
  if (node.IsScalar()) {
    rule.path = cx.r.Path(node, what);
    return rule;
  }
  cx.r.CheckKeys(node, {"header", "regex"}, what);
  rule.header = cx.HeaderName(cx.r.Required(node, "header", what), what + ".header");
  if (node["regex"]) {
    rule.pattern = cx.r.String(node["regex"], what + ".regex");
    auto re = Pattern::Compile(rule.pattern);
    if (!re.ok()) cx.r.Fail(node["regex"], what + ".regex: " + re.status().message());
    if (re->groups() < 1) cx.r.Fail(node["regex"], what + ".regex needs a capture group");
  }
  return rule;
}

// An action's `role: R` or `role: [R1, R2]` (an action that is several
// things at once: an order endpoint that also charges), and its `of:`.
void ActionRoles(TargetLoadContext& cx, const YAML::Node& node, const std::string& what, ActionDescription& a) {
  const YAML::Node roles = node["role"];
  if (roles && roles.IsSequence()) {
    if (roles.size() == 0) cx.r.Fail(roles, what + ".role: give at least one role");
    for (const auto& item : roles) {
      const std::string role = cx.KnownRole(item, what, ActionRoleNames());
      if (a.HasRole(role)) cx.r.Fail(item, what + ".role: '" + role + "' is listed twice");
      a.roles.push_back(role);
    }
    if (a.roles.size() > 1 && a.HasRole("callback"))
      cx.r.Fail(roles, what + ".role: a callback is a notification to the target, not one role among others");
    a.role = a.roles.front();
    if (node["of"] && a.HasRole("create"))
      cx.r.Fail(node["of"], what + ": a create action is not 'of' another action");
    cx.RoleOf(node, what, {}, a.role, a.of, /*role_read=*/true);
    return;
  }
  cx.RoleOf(node, what, ActionRoleNames(), a.role, a.of);
  if (!a.role.empty()) a.roles = {a.role};
}

ActionDescription Action(TargetLoadContext& cx, const std::string& name, const YAML::Node& node) {
  std::string what = "action '" + name + "'";
  cx.r.CheckKeys(node, {"request", "other_payload", "records", "capture", "volatile", "role", "of", "variants",
                      "fingerprint_ignores", "calls"}, what);
  ActionDescription a;
  a.name = name;
  a.mark = cx.r.MarkOf(node);
  ActionRoles(cx, node, what, a);
  a.request = cx.Request(cx.r.Required(node, "request", what), what + ".request");
  if (node["other_payload"]) a.other_payload = cx.Request(node["other_payload"], what + ".other_payload", true);
  if (node["records"]) {
    RecordsProbe rp;
    rp.mark = cx.r.MarkOf(node["records"]);
    rp.call = cx.Call(node["records"], what + ".records", {"count"});
    rp.count = cx.r.Path(cx.r.Required(node["records"], "count", what + ".records"), what + ".records.count");
    a.records = rp;
  }
  if (node["capture"]) {
    cx.r.ExpectMap(node["capture"], what + ".capture");
    for (auto it = node["capture"].begin(); it != node["capture"].end(); ++it) {
      std::string var = cx.r.String(it->first, what + ".capture name");
      static const RE2 kVar("[A-Za-z_][A-Za-z0-9_]*", RE2::Latin1);
      if (!RE2::FullMatch(var, kVar)) cx.r.Fail(it->first, "bad capture variable name '" + var + "'");
      const auto& builtin = BuiltinTemplateVariables();
      if (std::find(builtin.begin(), builtin.end(), var) != builtin.end())
        cx.r.Fail(it->first, "capture variable '" + var + "' shadows a built-in template variable");
      a.capture[var] = Capture(cx, it->second, what + ".capture." + var);
    }
  }
  if (node["volatile"]) a.volatile_paths = cx.Paths(node["volatile"], what + ".volatile");
  if (node["variants"]) a.variants = cx.Variants(node["variants"], what, a.request, a.other_payload);
  if (node["fingerprint_ignores"]) {
    a.fingerprint_ignores = cx.Paths(node["fingerprint_ignores"], what + ".fingerprint_ignores");
    if (!a.request.json) cx.r.Fail(node["fingerprint_ignores"], what + ".fingerprint_ignores needs a json: request body");
  }
  if (node["calls"]) {
    a.calls.emplace();
    if (!node["calls"].IsSequence()) cx.r.Fail(node["calls"], what + ".calls must be a list of egress names");
    for (const auto& item : node["calls"]) {
      a.calls->push_back(cx.Name(item, what + ".calls"));
      cx.calls_uses.emplace_back(item, a.calls->back());
    }
  }
  return a;
}

}  // namespace

void ParseActions(TargetLoadContext& cx, const YAML::Node& actions, TargetDescription& t) {
  cx.r.ExpectMap(actions, "actions");
  if (actions.size() == 0) cx.r.Fail(actions, "actions: declare at least one action");
  for (auto it = actions.begin(); it != actions.end(); ++it) {
    std::string name = cx.Name(it->first, "action");
    t.actions[name] = Action(cx, name, it->second);
  }
}

// With `key_header: none` every action must carry {{key}} itself.
void CheckActionsSendKey(TargetLoadContext& cx, const YAML::Node& actions, const TargetDescription& t) {
  if (!t.idempotency.key_header.empty()) return;
  for (auto it = actions.begin(); it != actions.end(); ++it) {
    const ActionDescription& a = t.actions.at(it->first.Scalar());
    if (!UsesKey(a.request))
      cx.r.Fail(it->first, "action '" + a.name +
                               "' never sends {{key}}, and idempotency.key_header is none: put {{key}} where "
                               "the target reads its idempotency key (a body member, a query parameter)");
  }
}

// Every action has a role: scenarios ask for actions by role only, so an
// action without one is never sent and a run would pass having tested
// (almost) nothing. Checked last, so any other error in the file comes first.
// A file written before roles: the error says what each action without
// one looks like (role_hints.h), all of them at once.
void CheckActionRoles(TargetLoadContext& cx, const YAML::Node& actions, const TargetDescription& t) {
  std::optional<YAML::Node> first;
  std::string message, others;
  for (auto it = actions.begin(); it != actions.end(); ++it) {
    const ActionDescription& a = t.actions.at(it->first.Scalar());
    if (!a.role.empty()) continue;
    const std::string guess = ActionRoleGuess(a, t);
    if (first) {
      others += (others.empty() ? "" : "; ") + ("'" + a.name + "'") + (guess.empty() ? " (no guess)" : " " + guess);
      continue;
    }
    first = it->first;
    std::string known;
    for (const auto& k : ActionRoleNames()) known += (known.empty() ? "" : ", ") + k;
    message = "action '" + a.name +
              "' has no role, and every scenario asks for actions by role, so it could never be "
              "tested: give it role: one of " + known + (guess.empty() ? "" : " (it " + guess + ")");
  }
  if (!first) return;
  if (!others.empty()) message += "; other actions without a role: " + others;
  cx.r.Fail(*first, message);
}

// Every `of:` names a declared action; an action's `of:` a create action,
// a callback's a create or the callback it follows (a refund the payment);
// an `applied` probe's `of:` a declared message or callback action.
void CheckRoleOf(TargetLoadContext& cx, const TargetDescription& t) {
  std::vector<std::string> messages;
  for (const auto& [n, m] : t.messages) messages.push_back(n);
  for (const auto& [node, what] : cx.message_of) {
    const ActionDescription* callback = t.FindAction(node.Scalar());
    if (!t.messages.count(node.Scalar()) && (callback == nullptr || !callback->HasRole("callback")))
      cx.r.Fail(node, what + ".of: '" + node.Scalar() + "' is not a declared message (role " + kAppliedRole +
                        " counts a message's applications)" + yaml::DidYouMean(node.Scalar(), messages));
  }
  std::vector<std::string> declared;
  for (const auto& [n, a] : t.actions) declared.push_back(n);
  for (const auto& [node, what] : cx.callback_of) {
    const ActionDescription* of = t.FindAction(node.Scalar());
    if (of == nullptr)
      cx.r.Fail(node, what + ".of: '" + node.Scalar() + "' is not a declared action" +
                        yaml::DidYouMean(node.Scalar(), declared));
    if (!of->HasRole("create") && !of->HasRole("callback"))
      cx.r.Fail(node, what + ".of: action '" + of->name + "' has neither role create nor callback");
  }
  for (const auto& [node, what] : cx.role_of) {
    const ActionDescription* of = t.FindAction(node.Scalar());
    if (of == nullptr)
      cx.r.Fail(node, what + ".of: '" + node.Scalar() + "' is not a declared action" +
                        yaml::DidYouMean(node.Scalar(), declared));
    if (what.rfind("action ", 0) == 0 && !of->HasRole("create"))
      cx.r.Fail(node, what + ".of: action '" + of->name + "' does not have role create");
  }
}

}  // namespace idemproof
