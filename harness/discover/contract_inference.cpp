#include "discover/contract_inference.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "model/answer_diff.h"

namespace idemproof::discover {

namespace {

bool Is2xx(int status) { return status >= 200 && status < 300; }
bool Is4xx(int status) { return status >= 400 && status < 500; }

// Headers every answer may carry with any value: never a marker.
bool TransportHeader(const std::string& name) {
  for (const char* h : {"Date", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding"}) {
    if (equals_ignoring_case(name, h)) return true;
  }
  return false;
}

// The headers that describe an answer's content: what a replay should repeat
// (compare_headers), as opposed to per-message ones (Date, a request id).
const std::vector<std::string>& ContentHeaders() {
  static const std::vector<std::string> kNames = {"Content-Type", "Content-Encoding", "Content-Language",
                                                  "Content-Location", "Location", "ETag", "Link"};
  return kNames;
}

std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string StatusList(int first, const std::vector<int>& also) {
  if (also.empty()) return std::to_string(first);
  std::string text = "[" + std::to_string(first);
  for (int s : also) text += ", " + std::to_string(s);
  return text + "]";
}

std::string StatusList(const std::vector<int>& statuses) {
  return StatusList(statuses.front(), std::vector<int>(statuses.begin() + 1, statuses.end()));
}

std::string NameList(const std::vector<std::string>& names) {
  std::string text = "[";
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text + "]";
}

std::string MarkerText(const std::string& header, const std::string& body, const std::string& value) {
  return header.empty() ? "{body: " + Quoted(body) + ", value: " + Quoted(value) + "}"
                        : "{header: " + header + ", value: " + Quoted(value) + "}";
}

// Every JSON leaf of `doc` as path text -> value text (a string as is, other
// values as JSON), member names that a JsonPath can spell only.
void Leaves(const nlohmann::json& doc, const std::string& at, std::map<std::string, std::string>& out) {
  if (doc.is_object()) {
    for (const auto& [name, value] : doc.items()) {
      const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '-';
      });
      if (plain) Leaves(value, at + "." + name, out);
    }
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size() && i < 16; ++i) Leaves(doc[i], at + "[" + std::to_string(i) + "]", out);
  } else {
    out[at] = doc.is_string() ? doc.get<std::string>() : doc.dump();
  }
}

std::map<std::string, std::string> BodyLeaves(const std::string& body) {
  std::map<std::string, std::string> out;
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_discarded()) Leaves(doc, "$", out);
  return out;
}

// The answers of one action, by kind (the first of each kind).
struct ActionAnswers {
  std::string action;
  std::map<ProbeKind, const ProbeAnswer*> by_kind;
  const ProbeAnswer* Get(ProbeKind kind) const {
    auto it = by_kind.find(kind);
    return it == by_kind.end() ? nullptr : it->second;
  }
};

std::vector<ActionAnswers> ByAction(const std::vector<ProbeAnswer>& answers) {
  std::vector<ActionAnswers> out;
  for (const ProbeAnswer& a : answers) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ActionAnswers& x) { return x.action == a.action; });
    if (it == out.end()) {
      out.push_back({a.action, {}});
      it = out.end() - 1;
    }
    it->by_kind.emplace(a.kind, &a);
  }
  return out;
}

// The actions whose `kind` answers judge a line: the creates when one got
// that answer (the suite's families for the key, the mismatch and the replay
// bind role create; a PUT or DELETE is idempotent by itself and may need no
// key, nor mark or refuse anything), else every action. The others' answers
// go to `notes`.
std::vector<const ActionAnswers*> Judging(const std::vector<ActionAnswers>& actions, ProbeKind kind,
                                          const TargetDescription& target, const std::string& line,
                                          std::vector<std::string>& notes) {
  auto is_create = [&](const ActionAnswers& a) {
    const ActionDescription* d = target.FindAction(a.action);
    return d && d->role == "create";
  };
  auto answered = [&](const ActionAnswers& a) {
    const ProbeAnswer* x = a.Get(kind);
    return x && x->status > 0;
  };
  const bool creates = std::any_of(actions.begin(), actions.end(),
                                   [&](const ActionAnswers& a) { return is_create(a) && answered(a); });
  std::vector<const ActionAnswers*> out;
  for (const ActionAnswers& a : actions) {
    if (!creates || is_create(a)) {
      out.push_back(&a);
    } else if (answered(a)) {
      const ActionDescription* d = target.FindAction(a.action);
      notes.push_back("not judged for " + line + " (" + (d ? d->role : std::string("?")) + ", the creates decide): " +
                      a.Get(kind)->Evidence());
    }
  }
  return out;
}

// A replay marker candidate: where, the value every replay carries, and how
// it tells the first answers apart (absent there, or another value).
struct MarkerCandidate {
  std::string header;  // or
  std::string body;    // a JSON path text
  std::string value;
  bool absent_on_firsts = true;
};

// The pairs (first answer, its replay) where both were 2xx with one status.
struct ReplayPair {
  const ProbeAnswer* first;
  const ProbeAnswer* replay;
};

std::optional<MarkerCandidate> FindMarker(const std::vector<ReplayPair>& pairs,
                                          const std::vector<const ProbeAnswer*>& firsts) {
  if (pairs.empty()) return std::nullopt;
  std::vector<MarkerCandidate> found;
  // Headers: every replay has it with one value.
  for (const auto& [name, value] : pairs.front().replay->headers) {
    if (TransportHeader(name)) continue;
    bool everywhere = std::all_of(pairs.begin(), pairs.end(), [&](const ReplayPair& p) {
      auto v = find_header(p.replay->headers, name);
      return v && *v == value;
    });
    if (!everywhere) continue;
    MarkerCandidate c{name, "", value, true};
    bool tells_apart = true;
    for (const ProbeAnswer* f : firsts) {
      auto v = find_header(f->headers, name);
      if (v && *v == value) tells_apart = false;
      if (v) c.absent_on_firsts = false;
    }
    if (tells_apart) found.push_back(c);
  }
  // JSON body leaves, the same way.
  const auto replay_leaves = BodyLeaves(pairs.front().replay->body);
  for (const auto& [path, value] : replay_leaves) {
    bool everywhere = std::all_of(pairs.begin(), pairs.end(), [&](const ReplayPair& p) {
      auto leaves = BodyLeaves(p.replay->body);
      auto it = leaves.find(path);
      return it != leaves.end() && it->second == value;
    });
    if (!everywhere) continue;
    MarkerCandidate c{"", path, value, true};
    bool tells_apart = true;
    for (const ProbeAnswer* f : firsts) {
      auto leaves = BodyLeaves(f->body);
      auto it = leaves.find(path);
      if (it != leaves.end() && it->second == value) tells_apart = false;
      if (it != leaves.end()) c.absent_on_firsts = false;
    }
    if (tells_apart) found.push_back(c);
  }
  if (found.empty()) return std::nullopt;
  // Absent on the first answers first, then a header before a body member.
  std::stable_sort(found.begin(), found.end(), [](const MarkerCandidate& a, const MarkerCandidate& b) {
    if (a.absent_on_firsts != b.absent_on_firsts) return a.absent_on_firsts;
    return !a.header.empty() && b.header.empty();
  });
  return found.front();
}

ProposedLine Line(const std::string& key, const std::string& declared) {
  ProposedLine line;
  line.key = key;
  line.declared = declared;
  line.proposed = declared;
  return line;
}

// Marks a decided line and whether it differs from the declaration.
void Decide(ProposedLine& line, std::string proposed, std::string comment) {
  line.decided = true;
  line.proposed = std::move(proposed);
  line.comment = std::move(comment);
  line.differs = line.proposed != line.declared;
}

void Undecided(ProposedLine& line, std::string why) {
  line.decided = false;
  line.differs = false;
  line.comment = std::move(why);
}

// The distinct statuses in order of first appearance, the expected one first.
std::vector<int> Distinct(const std::vector<int>& statuses) {
  std::vector<int> out;
  for (int s : statuses) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

// The declared statuses as a proposal would spell the seen ones: declared
// first when seen, so "422" seen against "mismatch: 422" reads equal.
std::string SeenStatusText(std::vector<int> seen, int declared) {
  auto it = std::find(seen.begin(), seen.end(), declared);
  if (it != seen.end()) std::rotate(seen.begin(), it, it + 1);
  return StatusList(seen);
}

}  // namespace

const char* ProbeKindName(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kSetup: return "setup";
    case ProbeKind::kFirst: return "first";
    case ProbeKind::kReplay: return "replay";
    case ProbeKind::kChanged: return "changed";
    case ProbeKind::kKeyless: return "keyless";
    case ProbeKind::kSlowFirst: return "slow first";
    case ProbeKind::kConcurrent: return "concurrent";
  }
  return "?";
}

std::string ProbeAnswer::Evidence() const {
  std::string text = action + " " + ProbeKindName(kind) + ": " + request;
  text += key_name == "none" || key_name.empty() ? " no key" : " key " + key_name;
  if (!payload.empty() && payload != "default") text += " payload " + payload;
  text += status > 0 ? " -> " + std::to_string(status) : " -> no answer" + (error.empty() ? "" : " (" + error + ")");
  return text;
}

int Proposal::Differences() const {
  return static_cast<int>(std::count_if(lines.begin(), lines.end(), [](const ProposedLine& l) { return l.differs; }));
}

const ProposedLine* Proposal::Find(const std::string& key) const {
  for (const ProposedLine& l : lines) {
    if (l.key == key) return &l;
  }
  return nullptr;
}

Proposal InferContract(const std::vector<ProbeAnswer>& answers, const TargetDescription& target) {
  const IdempotencyContract& c = target.idempotency;
  Proposal p;
  const std::vector<ActionAnswers> actions = ByAction(answers);

  bool any_first_2xx = false;
  for (const ActionAnswers& a : actions) {
    const ProbeAnswer* first = a.Get(ProbeKind::kFirst);
    if (first && Is2xx(first->status)) any_first_2xx = true;
  }
  if (!any_first_2xx) {
    p.undecided = answers.empty() ? "no probe was sent"
                                  : "no first request of a keyed action was answered 2xx: nothing to replay";
    for (const ProbeAnswer& a : answers) {
      if (a.kind == ProbeKind::kFirst) p.undecided += "; " + a.Evidence();
    }
  }

  // key_header: discover sends the keys where the file says; it cannot find another place.
  ProposedLine key_header = Line("key_header", c.key_header.empty() ? "none" : c.key_header);
  Undecided(key_header, "where discover sent the keys: it cannot find another place");

  // The replay marker.
  const std::string declared_marker =
      !c.replay ? "" : MarkerText(c.replay->header, c.replay->body ? c.replay->body->text() : "", c.replay->value);
  ProposedLine replay = Line("replay", declared_marker);
  std::vector<ReplayPair> pairs;         // every action's (answer equality, compare_headers)
  std::vector<ReplayPair> marker_pairs;  // the judging actions' (the marker)
  std::vector<const ProbeAnswer*> firsts;  // 2xx answers that are no replay
  const std::vector<const ActionAnswers*> marking = Judging(actions, ProbeKind::kReplay, target, "the marker", p.notes);
  for (const ActionAnswers& a : actions) {
    const ProbeAnswer* first = a.Get(ProbeKind::kFirst);
    const ProbeAnswer* again = a.Get(ProbeKind::kReplay);
    if (first && again && Is2xx(first->status) && again->status == first->status) {
      pairs.push_back({first, again});
      if (std::find(marking.begin(), marking.end(), &a) != marking.end()) marker_pairs.push_back({first, again});
    }
    for (ProbeKind k : {ProbeKind::kFirst, ProbeKind::kKeyless, ProbeKind::kSlowFirst}) {
      const ProbeAnswer* x = a.Get(k);
      if (x && Is2xx(x->status)) firsts.push_back(x);
    }
  }
  std::optional<MarkerCandidate> marker = FindMarker(marker_pairs, firsts);
  if (marker_pairs.empty()) {
    Undecided(replay, "no replay answered as its first answer was (2xx, same status)");
  } else if (marker) {
    const std::string where = marker->header.empty() ? "body " + marker->body : marker->header;
    Decide(replay, MarkerText(marker->header, marker->body, marker->value),
           "seen: " + where + " = " + Quoted(marker->value) + " on " + std::to_string(marker_pairs.size()) +
               " replay(s), " + (marker->absent_on_firsts ? "absent" : "another value") + " on " +
               std::to_string(firsts.size()) + " first answer(s)");
  } else {
    Decide(replay, "", "no header or body member told the " + std::to_string(marker_pairs.size()) +
                           " replay(s) from the first answers");
  }
  for (const ReplayPair& rp : marker_pairs) replay.evidence.push_back(rp.replay->Evidence());

  // The replays against their first answers (volatile paths and a body
  // marker, the declared one or the one seen, left out as the oracles do).
  ProposedLine equal = Line("replay_equal", "true");
  {
    std::vector<std::string> differ;
    int compared = 0;
    for (const ActionAnswers& a : actions) {
      const ProbeAnswer* first = a.Get(ProbeKind::kFirst);
      const ProbeAnswer* again = a.Get(ProbeKind::kReplay);
      if (!first || !again || !Is2xx(first->status) || again->status == 0) continue;
      ++compared;
      std::vector<JsonPath> ignore = target.VolatilePathsFor(a.action);
      if (marker && !marker->body.empty()) {
        if (auto path = JsonPath::Parse(marker->body); path.ok()) ignore.push_back(*path);
      }
      HttpAnswer x{first->status, first->headers, first->body};
      HttpAnswer y{again->status, again->headers, again->body};
      std::vector<std::string> d = AnswerDifferences(x, y, ignore, {});
      for (const std::string& text : d) differ.push_back(a.action + ": " + text);
      equal.evidence.push_back(first->Evidence());
      equal.evidence.push_back(again->Evidence());
    }
    if (compared == 0) {
      Undecided(equal, "no replay to compare");
    } else if (differ.empty()) {
      Decide(equal, "true", "seen: " + std::to_string(compared) + " replay(s) equal to their first answer (status, body minus volatile paths)");
    } else {
      std::string text = "seen: ";
      for (std::size_t i = 0; i < differ.size(); ++i) text += (i ? "; " : "") + differ[i];
      Decide(equal, "false", text + " (a replay must repeat its first answer: declare the field volatile, or it is a bug)");
    }
  }

  // Mismatch: the changed requests' answers.
  ProposedLine mismatch = Line("mismatch", StatusList(c.mismatch, c.mismatch_also));
  {
    std::vector<int> refusals;
    std::vector<const ProbeAnswer*> accepted;
    for (const ActionAnswers* a : Judging(actions, ProbeKind::kChanged, target, "the mismatch", p.notes)) {
      const ProbeAnswer* changed = a->Get(ProbeKind::kChanged);
      if (!changed || changed->status == 0) continue;
      mismatch.evidence.push_back(changed->Evidence());
      if (Is4xx(changed->status)) refusals.push_back(changed->status);
      else accepted.push_back(changed);
    }
    if (!accepted.empty()) {
      Decide(mismatch, "", "no refusal seen: the same key with another body was answered " +
                               std::to_string(accepted.front()->status));
      mismatch.evidence = {accepted.front()->Evidence()};
    } else if (!refusals.empty()) {
      Decide(mismatch, SeenStatusText(Distinct(refusals), c.mismatch), "seen: the same key with another body refused");
    } else {
      Undecided(mismatch, "no changed request was answered (no other_payload nor a JSON body to change)");
    }
  }

  // In progress: the concurrent duplicates of a slow first request.
  ProposedLine in_progress = Line("in_progress", StatusList(c.in_progress, c.in_progress_also));
  const char* const kRetryAfterNames[] = {"", "recommended", "required"};
  ProposedLine retry_after = Line("retry_after", kRetryAfterNames[static_cast<int>(c.retry_after)]);
  {
    std::vector<int> refusals;
    std::vector<const ProbeAnswer*> waited, with_retry_after, without_retry_after;
    for (const ActionAnswers& a : actions) {
      const ProbeAnswer* dup = a.Get(ProbeKind::kConcurrent);
      if (!dup || dup->status == 0) continue;
      in_progress.evidence.push_back(dup->Evidence());
      if (Is4xx(dup->status)) {
        refusals.push_back(dup->status);
        auto ra = find_header(dup->headers, "Retry-After");
        (ra ? with_retry_after : without_retry_after).push_back(dup);
        retry_after.evidence.push_back(dup->Evidence() + (ra ? " Retry-After: " + *ra : " without Retry-After"));
      } else {
        waited.push_back(dup);
      }
    }
    if (!refusals.empty()) {
      Decide(in_progress, SeenStatusText(Distinct(refusals), c.in_progress),
             "seen: a duplicate while the slow first ran was refused");
    } else if (!waited.empty()) {
      Decide(in_progress, "", "no in-progress status seen: the duplicate while the first ran was answered " +
                                  std::to_string(waited.front()->status));
      in_progress.evidence = {waited.front()->Evidence()};
    } else {
      Undecided(in_progress, "no `slow` variant nor `slow_business` hook (or no duplicate answered): not probed");
    }
    if (refusals.empty()) {
      Undecided(retry_after, "no in-progress answer to read Retry-After from");
    } else if (without_retry_after.empty()) {
      // Sent every time: the file may call it a MUST or a SHOULD; either matches.
      const std::string seen = c.retry_after == IdempotencyContract::RetryAfter::kNone ? "recommended" : retry_after.declared;
      Decide(retry_after, seen, "seen: Retry-After on every in-progress answer");
      // A delay shorter than the declared min (`retry_after: {min}`, 1s by
      // default) tells a client to retry at once: the retry_after oracle's
      // complaint, so a difference even with the same level.
      const long min_s = std::chrono::duration_cast<std::chrono::seconds>(c.retry_after_min).count();
      for (const ProbeAnswer* dup : with_retry_after) {
        const std::string value = *find_header(dup->headers, "Retry-After");
        const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char ch) { return std::isdigit(ch); });
        if (digits && value.size() < 9 && std::stol(value) < min_s) {
          retry_after.comment = "seen: Retry-After: " + value + ", shorter than the min " + std::to_string(min_s) + "s";
          retry_after.differs = true;
          break;
        }
      }
    } else {
      Decide(retry_after, "", "seen: an in-progress answer without Retry-After");
    }
  }

  // The key: required (with its status) or optional.
  ProposedLine key = Line("key", c.key_optional ? "optional" : "required");
  ProposedLine missing = Line("missing_key", c.key_optional ? "" : std::to_string(c.missing_key));
  {
    std::vector<int> refusals;
    std::vector<const ProbeAnswer*> executed;
    for (const ActionAnswers* a : Judging(actions, ProbeKind::kKeyless, target, "the key", p.notes)) {
      const ProbeAnswer* keyless = a->Get(ProbeKind::kKeyless);
      if (!keyless || keyless->status == 0) continue;
      key.evidence.push_back(keyless->Evidence());
      if (Is2xx(keyless->status)) executed.push_back(keyless);
      else if (Is4xx(keyless->status)) refusals.push_back(keyless->status);
    }
    missing.evidence = key.evidence;
    if (!executed.empty() && refusals.empty()) {
      Decide(key, "optional", "seen: a request without a key executed");
      Decide(missing, "", "a keyless request is not refused");
    } else if (executed.empty() && !refusals.empty()) {
      Decide(key, "required", "seen: a request without a key refused");
      Decide(missing, SeenStatusText(Distinct(refusals), c.missing_key), "seen: the status of a request without a key");
    } else if (!executed.empty()) {
      Decide(key, "", "seen: keyless requests executed on one action, refused on another");
      Undecided(missing, "the actions disagree");
    } else {
      Undecided(key, "no keyless request was answered 2xx or 4xx");
      Undecided(missing, "no keyless request was answered 2xx or 4xx");
    }
  }

  // compare_headers: the answer-describing headers the replays repeated.
  ProposedLine headers = Line("compare_headers", NameList(target.compare_headers));
  {
    std::set<std::string> repeated_lower;
    std::vector<std::string> repeated, not_repeated;
    for (const ReplayPair& rp : pairs) {
      for (const std::string& name : ContentHeaders()) {
        auto f = find_header(rp.first->headers, name);
        auto r = find_header(rp.replay->headers, name);
        if (!f && !r) continue;
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (f && r && *f == *r) {
          repeated_lower.insert(lower);
        } else {
          not_repeated.push_back(rp.first->action + " " + name + ": " + (f ? Quoted(*f) : "absent") + " then " +
                                 (r ? Quoted(*r) : "absent"));
        }
      }
    }
    // The declared order first, then the others in ContentHeaders() order.
    for (const std::string& name : target.compare_headers) {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (repeated_lower.erase(lower)) repeated.push_back(name);
    }
    for (const std::string& name : ContentHeaders()) {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (repeated_lower.erase(lower)) repeated.push_back(name);
    }
    if (pairs.empty()) {
      Undecided(headers, "no replay to compare");
    } else {
      std::string comment = "seen: the replays repeated these";
      if (!not_repeated.empty()) {
        comment += "; not repeated:";
        for (const std::string& n : not_repeated) comment += " " + n + ";";
        comment.pop_back();
      }
      Decide(headers, NameList(repeated), comment);
    }
  }

  p.lines = {key_header, replay, mismatch, in_progress, retry_after, key, missing, headers, equal};
  return p;
}

std::string ProposalText(const Proposal& proposal) {
  std::ostringstream out;
  auto yaml = [](const ProposedLine& l, const std::string& value) -> std::string {
    if (l.key == "replay_equal") return "# replays equal their first answers: " + value;
    if (value.empty()) return "# " + l.key + ": (none)";
    return l.key + ": " + value;
  };
  auto indent = [](const ProposedLine& l) { return l.key == "compare_headers" || l.key == "replay_equal" ? "" : "  "; };
  // The comment, and the first answer behind it.
  auto said = [](const ProposedLine& l) {
    std::string text = l.decided ? l.comment : "not decided, as declared: " + l.comment;
    if (l.decided && !l.evidence.empty()) {
      text += " (" + l.evidence.front();
      if (l.evidence.size() > 1) text += ", +" + std::to_string(l.evidence.size() - 1) + " more";
      text += ")";
    }
    return text;
  };
  out << "idempotency:\n";
  for (const ProposedLine& l : proposal.lines) {
    if (l.key == "compare_headers") out << "# (top level)\n";
    if (l.differs) {
      out << "-" << indent(l) << yaml(l, l.declared) << "   # the file\n";
      out << "+" << indent(l) << yaml(l, l.proposed) << "   # " << said(l) << "\n";
    } else {
      out << " " << indent(l) << yaml(l, l.proposed) << "   # " << said(l) << "\n";
    }
  }
  return out.str();
}

}  // namespace idemproof::discover
