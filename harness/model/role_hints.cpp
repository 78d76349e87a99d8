#include "model/role_hints.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "model/target/description.h"

namespace idemproof {
namespace {

// The lower-case words of a name or path: "inbox_applied" -> {inbox, applied},
// "/callbacks/payment" -> {callbacks, payment}; a plural's singular is added.
std::set<std::string> Words(const std::string& text) {
  std::set<std::string> out;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    out.insert(word);
    if (word.size() > 3 && word.back() == 's') out.insert(word.substr(0, word.size() - 1));
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c))) {
      // camelCase splits too: "cancelOrder" -> cancel, order
      if (std::isupper(static_cast<unsigned char>(c)) && i > 0 && std::islower(static_cast<unsigned char>(text[i - 1])))
        flush();
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

bool Any(const std::set<std::string>& words, std::initializer_list<const char*> wanted) {
  return std::any_of(wanted.begin(), wanted.end(), [&](const char* w) { return words.count(w) > 0; });
}

std::set<std::string> PathWords(const std::string& path) {
  // Template placeholders ({{order_id}}) are no words of the route.
  std::string plain;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path.compare(i, 2, "{{") == 0) {
      const std::size_t end = path.find("}}", i);
      if (end == std::string::npos) break;
      i = end + 1;
      plain.push_back('/');
      continue;
    }
    plain.push_back(path[i]);
  }
  return Words(plain.substr(0, plain.find('?')));
}

// Does an action look like `role` by its name's words and its request?
bool ActionLooksLike(const ActionDescription& a, const std::string& role) {
  const auto name = Words(a.name);
  const auto path = PathWords(a.request.path);
  const std::string& method = a.request.method;
  const bool callback = Any(name, {"callback", "webhook", "notify", "notification"}) ||
                        Any(path, {"callback", "webhook", "notification"});
  if (role == "callback") return callback;
  if (callback) return false;  // a provider's notification is no pay, create or change
  if (role == "create")
    return method == "POST" && (Any(name, {"create", "add", "new", "place", "submit", "open", "register"}) ||
                                (a.records.has_value() && !Any(name, {"pay", "payment", "charge"})));
  if (role == "put")
    return (method == "PUT" || method == "PATCH") || Any(name, {"set", "update", "change", "replace", "edit"});
  if (role == "delete") return method == "DELETE" || Any(name, {"delete", "cancel", "remove", "revoke", "void"});
  if (role == "pay") return method == "POST" && Any(name, {"pay", "payment", "charge", "purchase", "checkout"});
  return false;
}

// Does a probe look like `role`? A resource probe reads a create's resource
// by what that create captured (GET /orders/{{order_id}}).
bool ProbeLooksLike(const ProbeDescription& p, const std::string& role, const TargetDescription& target) {
  const auto name = Words(p.name);
  if (role == kAppliedRole) return Any(name, {"applied", "inbox", "processed", "consumed", "handled"});
  if (role == "counter") return Any(name, {"stock", "count", "counter", "available", "inventory", "balance", "quantity"});
  if (role == "ledger") return Any(name, {"ledger", "provider", "effect", "charge"}) || !p.egress.empty();
  if (role == "record") return Any(name, {"record", "payment", "transaction"}) && !Any(name, {"applied"});
  if (role == "resource") {
    if (!p.call.request || p.call.request->path.find("{{") == std::string::npos) return false;
    for (const auto& [action_name, a] : target.actions) {
      if (!a.HasRole("create") && !ActionLooksLike(a, "create")) continue;
      for (const auto& [capture, rule] : a.capture)
        if (p.call.request->path.find("{{" + capture + "}}") != std::string::npos) return true;
    }
  }
  return false;
}

// The names `of:` could take for a parameter whose `of` is `of_param`, each
// with the words of its name and request path.
std::vector<std::pair<std::string, std::set<std::string>>> OfCandidates(const Scenario& scenario,
                                                                        const std::string& of_param,
                                                                        const TargetDescription& target) {
  const auto of = std::find_if(scenario.parameters.begin(), scenario.parameters.end(),
                               [&](const ScenarioParameter& q) { return q.name == of_param; });
  std::vector<std::pair<std::string, std::set<std::string>>> out;
  if (of == scenario.parameters.end()) return out;
  if (of->is_message()) {
    for (const auto& [name, m] : target.messages) {
      auto words = Words(name);
      if (m.push) words.merge(PathWords(m.push->path));
      out.emplace_back(name, std::move(words));
    }
    return out;
  }
  for (const auto& [name, a] : target.actions) {
    if (!a.HasRole(of->role) && !(a.role.empty() && ActionLooksLike(a, of->role))) continue;
    auto words = Words(name);
    words.merge(PathWords(a.request.path));
    out.emplace_back(name, std::move(words));
  }
  return out;
}

// One undeclared thing that looks like the role: its kind, name, and the
// `of:` candidates it shares a word with (`shared`) or, when none, all.
struct Guess {
  std::string what, name;
  std::vector<std::string> of;
  bool shared = false;
};

Guess GuessOf(const std::string& what, const std::string& name, const std::set<std::string>& subject,
              const std::vector<std::pair<std::string, std::set<std::string>>>& candidates) {
  Guess g{what, name, {}, false};
  for (const auto& [candidate, words] : candidates)
    if (std::any_of(words.begin(), words.end(), [&](const std::string& w) { return subject.count(w) > 0; }))
      g.of.push_back(candidate);
  g.shared = !g.of.empty();
  if (!g.shared)
    for (const auto& c : candidates) g.of.push_back(c.first);
  return g;
}

std::string Hint(const Guess& g, const std::string& role, bool wants_of) {
  std::string of;
  if (wants_of && g.of.size() == 1) {
    of = g.of.front();
  } else if (wants_of && !g.of.empty()) {
    of = "one of ";
    for (std::size_t i = 0; i < g.of.size(); ++i) of += (i ? ", " : "") + g.of[i];
  }
  std::string out = g.what + " '" + g.name + "' looks like role " + role + (of.empty() ? "" : " of " + of) +
                    ": add `role: " + role;
  if (!of.empty()) out += ", of: " + (g.of.size() == 1 ? of : std::string("NAME"));
  return out + "`";
}

}  // namespace

std::vector<std::string> RoleHints(const Scenario& scenario, const ScenarioParameter& p,
                                   const TargetDescription& target) {
  // Every message binds a message parameter, and `role: any` wants any role:
  // nothing of the file to point at.
  if (p.is_message() || p.role == kAnyActionRole) return {};
  const bool wants_of = !p.of.empty();
  const auto candidates = wants_of ? OfCandidates(scenario, p.of, target)
                                   : std::vector<std::pair<std::string, std::set<std::string>>>{};
  std::vector<Guess> guesses;
  if (p.is_probe()) {
    for (const auto& [name, probe] : target.probes) {
      if (!probe.role.empty() || !ProbeLooksLike(probe, p.role, target)) continue;
      auto subject = Words(name);
      if (probe.call.request) subject.merge(PathWords(probe.call.request->path));
      guesses.push_back(GuessOf("probe", name, subject, candidates));
    }
  } else {
    for (const auto& [name, action] : target.actions) {
      if (!action.role.empty() || !ActionLooksLike(action, p.role)) continue;
      auto subject = Words(name);
      subject.merge(PathWords(action.request.path));
      guesses.push_back(GuessOf("action", name, subject, candidates));
    }
  }
  // When some guess shares a word with what it would be `of` (the inbox
  // probe and the message pushed to /inbox), the others are weaker: dropped.
  const bool any_shared = std::any_of(guesses.begin(), guesses.end(), [](const Guess& g) { return g.shared; });
  std::vector<std::string> out;
  for (const auto& g : guesses)
    if (!wants_of || !any_shared || g.shared) out.push_back(Hint(g, p.role, wants_of));
  return out;
}

std::string ActionRoleGuess(const ActionDescription& action, const TargetDescription& target) {
  // A notification first (it excludes the rest), then the verbs and
  // methods that say what a request changes, then a create.
  for (const char* role : {"callback", "delete", "put", "pay", "create"}) {
    if (!ActionLooksLike(action, role)) continue;
    if (std::string(role) == "pay" || std::string(role) == "create") return "looks like role " + std::string(role) + ": add `role: " + role + "`";
    // put, delete and callback work on a create's resource: `of:` it.
    std::vector<std::pair<std::string, std::set<std::string>>> creates;
    for (const auto& [name, a] : target.actions) {
      if (name == action.name || !(a.HasRole("create") || (a.role.empty() && ActionLooksLike(a, "create")))) continue;
      auto words = Words(name);
      words.merge(PathWords(a.request.path));
      creates.emplace_back(name, std::move(words));
    }
    auto subject = Words(action.name);
    subject.merge(PathWords(action.request.path));
    Guess g = GuessOf("action", action.name, subject, creates);
    const std::string hint = Hint(g, role, /*wants_of=*/true);
    return hint.substr(hint.find("looks like"));
  }
  return "";
}

}  // namespace idemproof
