#include "init/target_writer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fnmatch.h>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/http_message.h"
#include "base/query_string.h"
#include "init/yaml_out.h"
#include "model/pattern.h"
#include "model/roles.h"
#include "model/template.h"

namespace idemproof::init {

namespace {

using json = nlohmann::ordered_json;

// node[key] when present, else a null node: yaml-cpp throws on the type of
// a missing key's (zombie) node.
YAML::Node Child(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return YAML::Node();
  const YAML::Node child = node[key];
  return child.IsDefined() ? child : YAML::Node();
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// createOrder, create-order, "Create order" -> create_order.
std::string SnakeCase(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isupper(c)) {
      if (!out.empty() && out.back() != '_' && i > 0 && !std::isupper(static_cast<unsigned char>(text[i - 1])))
        out += '_';
      out += static_cast<char>(std::tolower(c));
    } else if (std::isalnum(c)) {
      out += static_cast<char>(c);
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "op_" + out;
  return out;
}

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(path);
  std::string part;
  while (std::getline(in, part, '/'))
    if (!part.empty()) out.push_back(part);
  return out;
}

bool IsParam(const std::string& segment) { return segment.size() > 2 && segment.front() == '{'; }

// orders -> order, subscriptions -> subscription, addresses -> address.
std::string Singular(std::string word) {
  if (word.size() > 4 && word.ends_with("sses")) return word.substr(0, word.size() - 2);
  if (word.size() > 3 && word.ends_with("ies")) return word.substr(0, word.size() - 3) + "y";
  if (word.size() > 1 && word.ends_with("s") && !word.ends_with("ss") && !word.ends_with("us") && !word.ends_with("is"))
    word.pop_back();  // status, analysis: no plural
  return word;
}

// A YAML scalar as JSON: quoted stays a string, plain becomes a number,
// boolean or null when it reads as one.
json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& n : node) out.push_back(ToJson(n));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.Scalar()] = ToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;
      if (s == "true" || s == "false") return s == "true";
      if (s == "null" || s == "~") return nullptr;
      static const Pattern kInt = *Pattern::Compile("-?[0-9]+");
      static const Pattern kNum = *Pattern::Compile("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
      if (kInt.FullMatch(s)) {
        try {
          return std::stoll(s);
        } catch (...) {
          return s;
        }
      }
      if (kNum.FullMatch(s)) {
        // 1e999: kept as the document's text (JSON has no infinity).
        const double d = std::strtod(s.c_str(), nullptr);
        return std::isfinite(d) ? json(d) : json(s);
      }
      return s;
    }
    default:
      return nullptr;
  }
}

// Every string of a JSON value from the document escaped for the template
// language, so the request sends the document's text (members are not
// expanded, so they stay).
json EscapeStrings(json v) {
  if (v.is_string()) return EscapeTemplateLiteral(v.get_ref<const std::string&>());
  if (v.is_structured())
    for (auto& item : v) item = EscapeStrings(std::move(item));
  return v;
}

// A document's path with its parameter {param} as {{var}}; the rest is the
// document's text, escaped.
std::string TemplatePath(const std::string& path, const std::string& param, const std::string& var) {
  const std::string braces = "{" + param + "}";
  const std::size_t at = path.find(braces);
  if (at == std::string::npos) return EscapeTemplateLiteral(path);
  return EscapeTemplateLiteral(path.substr(0, at)) + "{{" + var + "}}" +
         EscapeTemplateLiteral(path.substr(at + braces.size()));
}

// An HTTP field name (RFC 9110 token): what a header name may be.
bool IsHeaderToken(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos))
      return false;
  return true;
}

// A body built from a schema's required properties (all properties when
// none is required), each from its example, default, enum or type.
json BuildFromSchema(const YAML::Node& schema, int depth) {
  if (!schema.IsMap() || depth > 8) return nullptr;
  if (schema["example"]) return ToJson(schema["example"]);
  if (schema["default"]) return ToJson(schema["default"]);
  if (schema["enum"] && schema["enum"].IsSequence() && schema["enum"].size() > 0) return ToJson(schema["enum"][0]);
  std::string type = schema["type"] && schema["type"].IsScalar() ? schema["type"].Scalar() : "";
  if (type.empty() && schema["type"] && schema["type"].IsSequence() && schema["type"].size() > 0)
    type = schema["type"][0].Scalar();  // 3.1: [string, "null"]
  if (type.empty() && schema["properties"]) type = "object";
  if (type == "object") {
    json out = json::object();
    // `additionalProperties` alone (a map of free keys) has no `properties`.
    const YAML::Node props = Child(schema, "properties");
    if (!props.IsMap()) return out;
    std::set<std::string> required;
    if (schema["required"] && schema["required"].IsSequence())
      for (const auto& r : schema["required"]) required.insert(r.Scalar());
    for (const auto& kv : props)
      if (required.empty() || required.count(kv.first.Scalar()))
        out[kv.first.Scalar()] = BuildFromSchema(kv.second, depth + 1);
    return out;
  }
  if (type == "array") {
    json out = json::array();
    const bool needs_one = schema["minItems"] && schema["minItems"].as<int>(0) > 0;
    if (needs_one || schema["items"]) out.push_back(BuildFromSchema(Child(schema, "items"), depth + 1));
    return out;
  }
  if (type == "integer") return std::max<long long>(1, Child(schema, "minimum").as<long long>(1));
  if (type == "number") return 1;
  if (type == "boolean") return false;
  if (type == "string") return "x";
  return nullptr;
}

bool LooksLikeIdentifier(const std::string& name) {
  static const Pattern kId =
      *Pattern::Compile("(.*_(no|id|ref|number|key)|id|ref|reference|customer|account|biz.*|.*[a-z](Id|No|Ref))");
  return kId.FullMatch(name);
}

// The top-level string member of `body` that carries the business id: the
// one named as `preferred` (the listing's filter parameter), else the
// first identifier-like one, else the first string.
std::string BizField(const json& body, const std::string& preferred, const std::string& key_member) {
  if (!body.is_object()) return "";
  if (!preferred.empty() && preferred != key_member && body.contains(preferred) && body[preferred].is_string())
    return preferred;
  for (const auto& [k, v] : body.items())
    if (v.is_string() && k != key_member && LooksLikeIdentifier(k)) return k;
  for (const auto& [k, v] : body.items())
    if (v.is_string() && k != key_member) return k;
  return "";
}

// A body as application/x-www-form-urlencoded template text: the writer's
// {{biz}} and {{key}} kept, the document's text percent-encoded (nested
// values as their JSON).
std::string FormBody(const json& body) {
  std::string out;
  if (!body.is_object()) return out;
  for (const auto& [k, v] : body.items()) {
    std::string value;
    if (v.is_string() && (v == "{{biz}}" || v == "{{key}}")) {
      value = v.get<std::string>();
    } else if (v.is_string()) {
      // the document's text, escaped: back to the text, then encoded
      const auto text = ExpandTemplate(v.get_ref<const std::string&>(), {});
      value = percent_encode(text.ok() ? *text : v.get<std::string>());
    } else {
      value = percent_encode(v.dump());
    }
    out += (out.empty() ? "" : "&") + percent_encode(k) + "=" + value;
  }
  return out;
}

// The other payload: the body with its first integer changed (+1), else its
// first string other than the business id (suffix "-other"). Returns the
// JSON path changed, "" when nothing could be.
std::string ChangeOne(json& v, const std::string& path, const std::string& skip, bool integers) {
  if (v.is_object()) {
    for (auto& [k, item] : v.items()) {
      const std::string at = path + "." + k;
      if (at == skip) continue;
      if (std::string r = ChangeOne(item, at, skip, integers); !r.empty()) return r;
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::string r = ChangeOne(v[i], path + "[" + std::to_string(i) + "]", skip, integers); !r.empty())
        return r;
  } else if (integers && v.is_number_integer()) {
    v = v.get<long long>() + 1;
    return path;
  } else if (!integers && v.is_string() && v.get<std::string>().find("{{") == std::string::npos) {
    v = v.get<std::string>() + "-other";
    return path;
  }
  return "";
}

// Where a property named `name` sits in an answer schema: "$.name" or one
// object deeper ("$.subscription.id"); "" when not found.
std::string FindProperty(const YAML::Node& schema, const std::string& name) {
  if (!schema.IsMap() || !Child(schema, "properties").IsMap()) return "";
  const YAML::Node props = schema["properties"];
  if (props[name]) return "$." + name;
  for (const auto& kv : props) {
    const YAML::Node inner = kv.second;
    if (inner.IsMap() && Child(inner, "properties").IsMap() && inner["properties"][name])
      return "$." + kv.first.Scalar() + "." + name;
  }
  return "";
}

// The count of a listing: an integer `count`/`total`, else its first array.
std::string CountPath(const YAML::Node& schema) {
  if (!schema.IsMap()) return "";
  if (schema["type"] && schema["type"].Scalar() == "array") return "$";
  if (!Child(schema, "properties").IsMap()) return "";
  for (const char* name : {"count", "total", "total_count", "totalCount"})
    if (schema["properties"][name]) return std::string("$.") + name;
  for (const auto& kv : schema["properties"])
    if (kv.second.IsMap() && kv.second["type"] && kv.second["type"].Scalar() == "array")
      return "$." + kv.first.Scalar();
  return "";
}

std::string FirstArray(const YAML::Node& schema) {
  if (!schema.IsMap() || !Child(schema, "properties").IsMap()) return "";
  for (const auto& kv : schema["properties"])
    if (kv.second.IsMap() && kv.second["type"] && kv.second["type"].Scalar() == "array") return kv.first.Scalar();
  return "";
}

// Lower case, letters and digits only: "X-Idempotency-Key" -> "xidempotencykey".
std::string Folded(const std::string& name) {
  std::string out;
  for (const char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Holds(const std::string& text, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return text.find(w) != std::string::npos; });
}

// A name that says it is the key whatever its description: any spelling of
// idempotency or deduplication.
bool NameSaysKey(const std::string& folded) { return Holds(folded, {"idempoten", "dedup", "clienttoken"}); }
// A name that is the key only when its description says so.
bool NameMayBeKey(const std::string& folded) {
  return Holds(folded, {"requestid", "requesttoken", "clientreference", "referenceid", "uniquekey",
                        "operationid", "transactionid", "correlationid", "nonce"});
}
// A description speaking of idempotency, retries or duplicates.
bool DescriptionSaysKey(const std::string& description) {
  return Holds(Lower(description), {"idempoten", "dedup", "duplicat", "retry", "retries", "retried", "replay"});
}
// Credentials are never the key, whatever their description says.
bool IsCredential(const std::string& folded) {
  return Holds(folded, {"authorization", "apikey", "subscriptionkey", "cookie", "signature", "accesstoken", "secret"});
}

bool IsKeyName(const std::string& name, const std::string& description) {
  const std::string f = Folded(name);
  if (IsCredential(f)) return false;
  if (NameSaysKey(f)) return true;
  return DescriptionSaysKey(description) && (NameMayBeKey(f) || Lower(description).find("idempoten") != std::string::npos);
}


}  // namespace

std::string KeyPlace::Where() const {
  switch (in) {
    case In::kHeader: return "header " + name;
    case In::kJson: return "json member " + name;
    case In::kForm: return "form member " + name;
    case In::kNone: break;
  }
  return "none";
}

namespace {
// The first candidate, unless a later one's name says it and the first's
// only its description.
bool Better(const KeyPlace& found, const std::string& name) {
  return found.in == KeyPlace::In::kNone || (!NameSaysKey(Folded(found.name)) && NameSaysKey(Folded(name)));
}
}  // namespace

KeyPlace FindKey(const Operation& op, const std::vector<std::string>& security_headers) {
  KeyPlace key;
  for (const auto& p : op.parameters) {
    if (p.in != "header" || !IsHeaderToken(p.name)) continue;
    if (std::find(security_headers.begin(), security_headers.end(), Lower(p.name)) != security_headers.end()) continue;
    if (IsKeyName(p.name, p.description) && Better(key, p.name))
      key = KeyPlace{KeyPlace::In::kHeader, p.name, p.required, !NameSaysKey(Folded(p.name))};
  }
  if (key.in != KeyPlace::In::kNone) return key;
  const YAML::Node props = Child(op.request_schema, "properties");
  if (!props.IsMap() || (op.request_media != "json" && op.request_media != "form")) return key;
  std::set<std::string> required;
  if (const YAML::Node r = Child(op.request_schema, "required"); r.IsSequence())
    for (const auto& n : r)
      if (n.IsScalar()) required.insert(n.Scalar());
  for (const auto& kv : props) {
    const std::string name = kv.first.Scalar();
    const YAML::Node d = Child(kv.second, "description");
    // A key is a string (a member of another type is no key, whatever its description).
    const YAML::Node type = Child(kv.second, "type");
    if (type.IsScalar() && type.Scalar() != "string") continue;
    if (!IsKeyName(name, d.IsScalar() ? d.Scalar() : "") || !Better(key, name)) continue;
    key = KeyPlace{op.request_media == "json" ? KeyPlace::In::kJson : KeyPlace::In::kForm, name,
                   required.count(name) > 0, !NameSaysKey(Folded(name))};
  }
  return key;
}

namespace {

// What an operation's x-idempotency says.
struct Marking {
  bool present = false;
  bool keyed = true;        // false: `x-idempotency: false`
  std::string key_header;
  std::string role;
  std::string of;
};

struct ActionPlan {
  const Operation* op = nullptr;
  std::string name;
  std::string role;
  std::string of;              // an action name
  std::vector<std::string> confirms;
  std::string path;            // templated
  std::optional<json> body;
  std::optional<json> other;
  std::string other_changed;
  std::string biz_field;
  std::string records_path;    // templated GET path for records
  std::string records_count;
  std::string capture_var, capture_path;
  std::string slow_param;
  KeyPlace key;                // where its operation takes the key; kNone when it declares none
  bool form = false;           // the body is form-encoded
  std::string setup;           // what the user completes (a path parameter no create makes); "" when none
  bool keyless = false;        // declares no key, kept (a PUT, PATCH or DELETE)
};

class Writer {
 public:
  Writer(const OpenApiDocument& doc, const InitOptions& options, InitSummary* summary)
      : doc_(doc), options_(options), summary_(summary) {}

  // The operation being written when Write() stopped; null between them.
  const Operation* At() const { return at_; }

  Result<std::string> Write() {
    // Every write operation's key, and whether the document names one anywhere.
    struct Candidate {
      const Operation* op;
      Marking mark;
      KeyPlace key;
      bool keyed;
    };
    std::vector<Candidate> candidates;
    bool any_key = false;
    for (const auto& op : doc_.operations) {
      if (op.method == "GET") continue;
      Candidate c{&op, {}, {}, false};
      if (Status s = ReadMarking(op, c.mark); !s.ok()) return s;
      if (!c.mark.key_header.empty() || (op.idempotency.IsMap() && op.idempotency["key_header"])) {
        if (!IsHeaderToken(c.mark.key_header))
          return Located(op.idempotency["key_header"],
                         "x-idempotency: key_header '" + CommentText(c.mark.key_header) + "' is no HTTP header name");
        const Parameter* declared = op.FindParameter("header", c.mark.key_header);
        c.key = KeyPlace{KeyPlace::In::kHeader, c.mark.key_header, declared == nullptr || declared->required, false};
      } else {
        c.key = FindKey(op, doc_.security_headers);
      }
      c.keyed = c.mark.present ? c.mark.keyed : c.key.in != KeyPlace::In::kNone;
      any_key = any_key || c.key.in != KeyPlace::In::kNone || c.mark.present;
      candidates.push_back(c);
    }
    if (candidates.empty()) {
      return Status::InvalidConfig(
          "no POST, PUT, PATCH or DELETE operation to make an action of (GET endpoints alone cannot be tested "
          "for idempotency)",
          SourceMark{doc_.file, 0, 0});
    }
    const bool chosen = !options_.path_globs.empty() || !options_.tags.empty() || !options_.operation_ids.empty();
    const bool some_keyed = std::any_of(candidates.begin(), candidates.end(), [](const Candidate& c) { return c.keyed; });
    const bool big = !chosen && !options_.keyed_only && candidates.size() > kDefaultKeyedOnlyAbove && some_keyed;
    const bool keyed_only = options_.keyed_only || big;
    if (big)
      Note(std::to_string(candidates.size()) + " write operations (more than " +
           std::to_string(kDefaultKeyedOnlyAbove) +
           "): only those that carry a key are written; --path, --tag or --operation-id choose others");
    if (summary_) summary_->operations_read = doc_.operations.size();
    for (const auto& c : candidates) {
      const Operation& op = *c.op;
      at_ = &op;
      InitRow row{op.method + " " + op.path, "", c.mark.present && c.key.in == KeyPlace::In::kNone ? "x-idempotency" : c.key.Where(), ""};
      if (!Selected(op)) {
        row.note = "not selected";
      } else if (keyed_only && !c.keyed) {
        row.note = big ? "no key (a big document: keyed ones only)" : "no key (--keyed-only)";
      } else if (!c.keyed && op.method == "POST" && any_key) {
        row.note = "no key: a POST is not idempotent by itself";
        keyless_posts_.push_back(&op);
      } else {
        ActionPlan plan;
        plan.op = &op;
        plan.key = c.keyed ? c.key : KeyPlace{};
        plan.name = Unique(op.operation_id.empty() ? SnakeCase(Lower(op.method) + "_" + op.path) : SnakeCase(op.operation_id));
        if (!any_key) {
          plan.confirms.push_back("the document declares no idempotency key anywhere: a candidate, sent under "
                                  "the key header below; delete it if the service does not deduplicate it");
        } else if (!c.keyed) {
          plan.keyless = true;
        } else if (plan.key.by_description) {
          plan.confirms.push_back("the key: " + plan.key.Where() + ", taken from its description");
        }
        if (!c.mark.role.empty()) {
          plan.role = c.mark.role;
        } else {
          GuessRole(op, plan);
        }
        plan.of = c.mark.of;
        row.action = plan.name;
        plans_.push_back(std::move(plan));
      }
      rows_.push_back(std::move(row));
    }
    if (plans_.empty()) {
      std::string why;
      for (const auto& r : rows_) why += (why.empty() ? "" : "; ") + r.operation + ": " + r.note;
      return Status::InvalidConfig("no write operation left to make an action of (" + CommentText(why.substr(0, 400)) +
                                       (why.size() > 400 ? "…" : "") + ")",
                                   SourceMark{doc_.file, 0, 0});
    }
    ChooseKeyMode();
    const std::string no_key = key_in_request_ ? "no idempotency key" : "no " + key_header_ + " header";
    for (auto& plan : plans_)
      if (plan.keyless)
        plan.confirms.push_back("declares " + no_key + ": kept as an action since " + plan.op->method +
                                " is idempotent by its method; the suite sends it under a key anyway");
    for (const Operation* op : keyless_posts_)
      left_out_.push_back(op->method + " " + op->path + ": declares " + no_key +
                          " and no x-idempotency (a POST is not idempotent by itself: the suite would judge a "
                          "promise the service never made). CONFIRM: add it as an action if the service "
                          "deduplicates it (a callback: role callback, of: its create)");
    // Creates first: their captures are what the others' paths need.
    for (auto& plan : plans_) {
      at_ = plan.op;
      if (plan.role == "create" || plan.role == "pay") FillCreate(plan);
    }
    for (auto& plan : plans_) {
      at_ = plan.op;
      if (plan.role != "create" && plan.role != "pay") FillDependent(plan);
    }
    at_ = nullptr;
    YamlOut out;
    if (Status s = WriteHeader(out); !s.ok()) return s;
    WriteContract(out);
    WriteActions(out);
    WriteProbes(out);
    WriteLeftOut(out);
    if (!out.Error().ok())
      return Status::InvalidConfig(out.Error().message() + ": UTF-8 only in the document", SourceMark{doc_.file, 0, 0});
    if (summary_) {
      for (auto& row : rows_)
        for (const auto& plan : plans_)
          if (plan.name == row.action && !plan.setup.empty()) row.note = plan.setup;
      summary_->rows = rows_;
    }
    return out.Text();
  }

 private:
  void Note(const std::string& note) {
    if (summary_) summary_->notes.push_back(note);
    notes_.push_back(note);
  }

  // --path, --tag, --operation-id: each kind given must match.
  bool Selected(const Operation& op) const {
    const auto any = [](const std::vector<std::string>& wanted, const auto& match) {
      return wanted.empty() || std::any_of(wanted.begin(), wanted.end(), match);
    };
    return any(options_.path_globs,
               [&](const std::string& glob) { return fnmatch(glob.c_str(), op.path.c_str(), 0) == 0; }) &&
           any(options_.tags,
               [&](const std::string& tag) { return std::find(op.tags.begin(), op.tags.end(), tag) != op.tags.end(); }) &&
           any(options_.operation_ids, [&](const std::string& id) { return id == op.operation_id; });
  }

  // One key header for every keyed action, or none: then each action's
  // request carries {{key}} where its operation takes the key.
  void ChooseKeyMode() {
    std::string header;
    for (const auto& plan : plans_) {
      if (plan.key.in == KeyPlace::In::kNone) continue;
      if (plan.key.in != KeyPlace::In::kHeader || (!header.empty() && Lower(header) != Lower(plan.key.name))) {
        key_in_request_ = true;
        return;
      }
      header = plan.key.name;
    }
    key_header_ = header.empty() ? "Idempotency-Key" : header;
    key_header_guessed_ = header.empty();
  }
  Status ReadMarking(const Operation& op, Marking& mark) const {
    const YAML::Node x = op.idempotency;
    if (!x.IsDefined() || x.IsNull()) return Status::Ok();
    mark.present = true;
    if (x.IsScalar()) {
      mark.keyed = x.Scalar() != "false";
      return Status::Ok();
    }
    if (!x.IsMap()) return Located(x, "x-idempotency must be true, false or a map {key_header, role, of}");
    for (const auto& kv : x) {
      const std::string key = kv.first.Scalar();
      if (key != "key_header" && key != "role" && key != "of" && key != "keyed")
        return Located(kv.first, "x-idempotency: unknown key '" + key + "' (known: key_header, role, of, keyed)");
    }
    if (x["keyed"]) mark.keyed = x["keyed"].Scalar() != "false";
    if (x["key_header"]) mark.key_header = x["key_header"].Scalar();
    if (x["role"]) {
      mark.role = x["role"].Scalar();
      if (!IsActionRole(mark.role)) {
        std::string names;
        for (const auto& r : ActionRoleNames()) names += (names.empty() ? "" : ", ") + r;
        return Located(x["role"], "x-idempotency: unknown role '" + mark.role + "' (roles: " + names + ")");
      }
    }
    if (x["of"]) {
      // An operationId; checked against the actions once they are named.
      mark.of = SnakeCase(x["of"].Scalar());
      bool found = false;
      for (const auto& o : doc_.operations) found = found || (!o.operation_id.empty() && SnakeCase(o.operation_id) == mark.of);
      if (!found) return Located(x["of"], "x-idempotency: of: '" + x["of"].Scalar() + "' names no operationId");
    }
    return Status::Ok();
  }

  Status Located(const YAML::Node& node, const std::string& message) const {
    const YAML::Mark m = node.Mark();
    return Status::InvalidConfig(message, SourceMark{doc_.file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1});
  }

  std::string Unique(const std::string& name) {
    std::string out = name;
    for (int i = 2; used_.count(out); ++i) out = name + "_" + std::to_string(i);
    used_.insert(out);
    return out;
  }

  void GuessRole(const Operation& op, ActionPlan& plan) {
    static const std::set<std::string> kEnding = {"cancel", "cancellation", "void", "close", "delete",
                                                  "archive", "revoke", "deactivate"};
    const auto segments = Segments(op.path);
    const bool on_item = std::any_of(segments.begin(), segments.end(), IsParam);
    // The last segment without a ".json"/".xml" suffix: Twilio's Calls.json.
    const std::string last = segments.empty() ? "" : segments.back();
    const std::string word = last.substr(0, last.find('.'));
    // A POST to a plural noun under an item (/accounts/{id}/calls) makes a
    // record in that sub-collection; its parents' ids are a setup to fill.
    const bool to_collection = on_item && !IsParam(last) && !kEnding.count(Lower(word)) && Singular(word) != word;
    if (op.method == "POST" && (!on_item || to_collection)) {
      plan.role = "create";
      plan.confirms.push_back("role create (a POST that makes a record" +
                              (to_collection ? " in the collection '" + word + "'" : std::string()) +
                              "); pay if it charges an external system, callback if an external system sends it "
                              "(x-idempotency: {role: ...} says so in the document)");
    } else if (op.method == "DELETE") {
      plan.role = "delete";
    } else if (op.method == "PUT" || op.method == "PATCH") {
      plan.role = "put";
      if (op.method == "PATCH")
        plan.confirms.push_back("role put: a PATCH that SETS a state (an increment is no put)");
    } else {
      plan.role = kEnding.count(Lower(last)) ? "delete" : "put";
      plan.confirms.push_back("role " + plan.role + " from the path's last segment '" + Lower(last) +
                              "' (a POST on an item: delete if it ends the resource, put if it sets a state)");
    }
  }

  // The GET collection on `path` with a query parameter (the listing's filter).
  const Operation* Listing(const std::string& path, std::string* filter) const {
    for (const auto& op : doc_.operations) {
      if (op.method != "GET" || op.path != path) continue;
      for (const auto& p : op.parameters) {
        if (p.in == "query") {
          *filter = p.name;
          return &op;
        }
      }
    }
    return nullptr;
  }

  // Every query parameter of `op` for a listing filter; the preferred one first.
  static std::vector<std::string> QueryNames(const Operation& op) {
    std::vector<std::string> out;
    for (const auto& p : op.parameters)
      if (p.in == "query") out.push_back(p.name);
    return out;
  }

  // The operation's body: its first example, else built from its schema;
  // every string escaped for the template language. Null when neither.
  static json DocumentBody(const Operation& op, bool* from_example) {
    *from_example = !op.request_examples.empty();
    if (*from_example) return EscapeStrings(ToJson(op.request_examples[0]));
    if (op.request_schema.IsMap()) return EscapeStrings(BuildFromSchema(op.request_schema, 0));
    return nullptr;
  }

  // {{key}} in the body member that takes the key, when the target names no
  // key header; a form body noted as such.
  void PlaceKey(ActionPlan& plan, json& body) {
    plan.form = plan.op->request_media == "form";
    if (!key_in_request_ || (plan.key.in != KeyPlace::In::kJson && plan.key.in != KeyPlace::In::kForm)) return;
    if (!body.is_object()) {
      if (!body.is_null()) plan.confirms.push_back("the body is not an object: replaced by the key member alone");
      body = json::object();
    }
    body[plan.key.name] = "{{key}}";
  }

  void FillCreate(ActionPlan& plan) {
    const Operation& op = *plan.op;
    plan.path = EscapeTemplateLiteral(op.path);
    // A create in a sub-collection: its parents are resources it does not make.
    if (const auto params = op.PathParameters(); !params.empty()) SetupParents(plan, params);
    std::string filter;
    const Operation* listing = Listing(op.path, &filter);
    bool from_example = false;
    json body = DocumentBody(op, &from_example);
    PlaceKey(plan, body);
    const std::string key_member = plan.key.in == KeyPlace::In::kHeader ? "" : plan.key.name;
    if (body.is_object()) {
      // The listing's filter names the business id when the body has it.
      std::string preferred;
      if (listing)
        for (const auto& q : QueryNames(*listing))
          if (body.contains(q) && body[q].is_string()) preferred = q;
      plan.biz_field = BizField(body, preferred, key_member);
      if (!plan.biz_field.empty()) {
        body[plan.biz_field] = "{{biz}}";
        plan.confirms.push_back(std::string("body from the document's ") + (from_example ? "example" : "schema") +
                                "; {{biz}} (the business id, one per test) in $." + plan.biz_field);
        if (!preferred.empty()) filter = preferred;
      } else {
        plan.confirms.push_back("no string member for the business id: put {{biz}} where the service keeps one");
      }
      json other = body;
      std::string changed = ChangeOne(other, "$", "$." + plan.biz_field, true);
      if (changed.empty()) changed = ChangeOne(other, "$", "$." + plan.biz_field, false);
      if (!changed.empty()) {
        plan.other = other;
        plan.other_changed = changed;
      }
    } else if (!body.is_null()) {
      plan.confirms.push_back("the body is not a JSON object: {{biz}} not placed");
    }
    if (!body.is_null()) plan.body = body;
    if (listing) {
      plan.records_path = EscapeTemplateLiteral(op.path + "?" + filter + "=") + "{{biz}}";
      const Response* ok = listing->Success();
      plan.records_count = ok ? CountPath(ok->schema) : "";
      if (plan.records_count.empty()) {
        plan.records_count = "$";
        plan.confirms.push_back("records: the listing's answer names no count nor array: point count at one");
      }
      if (filter != plan.biz_field)
        plan.confirms.push_back("records: GET " + op.path + " filtered by ?" + filter + "= with the business id");
    }
    for (const auto& p : op.parameters) {
      const std::string l = Lower(p.name);
      if (p.in == "query" && (l.find("slow") != std::string::npos || l.find("delay") != std::string::npos)) {
        plan.slow_param = p.name;
      }
    }
  }

  void FillDependent(ActionPlan& plan) {
    const Operation& op = *plan.op;
    const auto params = op.PathParameters();
    bool from_example = false;
    json body = DocumentBody(op, &from_example);
    PlaceKey(plan, body);
    if (!body.is_null()) plan.body = body;
    if (params.empty()) {
      plan.path = EscapeTemplateLiteral(op.path);
      if (plan.role == "put" || plan.role == "delete")
        plan.confirms.push_back("a " + plan.role + " works on a create's resource (of:): none found in its path");
      return;
    }
    ActionPlan* create = nullptr;
    if (params.size() == 1) {
      const std::string prefix = op.path.substr(0, op.path.find("/{" + params[0] + "}"));
      for (auto& c : plans_)
        if ((c.role == "create") && c.op->path == prefix && (plan.of.empty() || plan.of == c.name)) create = &c;
    }
    if (!create) {
      // On a resource no create of the document makes: the path as written
      // (no `of:`), so every scenario that needs its resource made first is
      // not applicable until the user completes it.
      plan.of.clear();
      SetupParents(plan, params);
      return;
    }
    Capture(*create, params[0]);
    plan.of = create->name;
    plan.path = TemplatePath(op.path, params[0], create->capture_var);
  }

  // The path as written, its parameters a setup for the user to fill.
  static void SetupParents(ActionPlan& plan, const std::vector<std::string>& params) {
    std::string names;
    for (const auto& p : params) names += (names.empty() ? "{" : ", {") + p + "}";
    plan.path = EscapeTemplateLiteral(plan.op->path);
    plan.setup = "setup: no create of the document makes " + names + ": put an existing resource's id in the "
                 "path, or add the create that makes it and of: it (until then the scenarios that need its "
                 "resource are not applicable)";
  }

  void Capture(ActionPlan& create, const std::string& param) {
    if (!create.capture_var.empty()) return;
    const auto segments = Segments(create.op->path);
    const std::string noun = SnakeCase(Singular(segments.empty() ? "item" : segments.back()));
    create.capture_var = SnakeCase(param);
    // {id}, or a name the templates already use ({key}, {biz}): the noun's id.
    const auto& builtin = BuiltinTemplateVariables();
    if (Lower(param) == "id" || std::find(builtin.begin(), builtin.end(), create.capture_var) != builtin.end())
      create.capture_var = noun + "_id";
    const Response* ok = create.op->Success();
    std::string at = ok ? FindProperty(ok->schema, param) : "";
    if (at.empty() && ok && Lower(param) != "id") at = FindProperty(ok->schema, "id");
    if (at.empty()) {
      at = "$.id";
      create.confirms.push_back("capture: the answer's schema names no '" + param + "': $.id guessed");
    }
    create.capture_path = at;
  }

  Status WriteHeader(YamlOut& out) {
    if (!options_.schema_ref.empty()) out.Comment("yaml-language-server: $schema=" + options_.schema_ref);
    out.Comment("Generated by `idemproof init` from " + options_.document_label +
                (doc_.version.empty() ? "" : " (OpenAPI " + doc_.version +
                                                 (doc_.title.empty() ? "" : ", \"" + doc_.title + "\"") + ")") +
                ".");
    out.Lit("# Every guess a human must confirm is marked `# CONFIRM:`; what the document\n"
            "# cannot say is listed at the end. Check it with:\n"
            "#   idemproof lint scenarios/ --target THIS_FILE\n");
    for (const auto& note : doc_.notes) out.Comment("CONFIRM: not read from the document: " + note);
    for (const auto& warning : doc_.warnings) out.Comment("CONFIRM: " + warning);
    for (const auto& note : notes_) out.Comment("CONFIRM: " + note);
    std::string name = SnakeCase(doc_.title.empty() ? "target" : doc_.title);
    std::replace(name.begin(), name.end(), '_', '-');
    out.Lit("name: ").Str(name).Lit("\n");
    std::string server_path;
    if (!doc_.servers.empty()) {
      // The path of an absolute or a relative server URL ("/v1" of "https://h/v1").
      const std::string_view url = doc_.servers[0];
      const std::string_view path = url.substr(TargetStart(url));
      if (path.size() > 1 && path.front() == '/') server_path = std::string(path);
      if (!server_path.empty() && server_path.back() == '/') server_path.pop_back();
    }
    if (!options_.base_url.empty()) {
      out.Lit("base_url: ").Str(options_.base_url).Lit("\n");
    } else if (!options_.start.empty()) {
      out.Lit("base_url: ").Str("http://127.0.0.1:{{port}}" + EscapeTemplateLiteral(server_path)).Lit("\n");
    } else if (!doc_.servers.empty() &&
               (doc_.servers[0].rfind("http://", 0) == 0 || doc_.servers[0].rfind("https://", 0) == 0)) {
      out.Lit("base_url: ").Str(EscapeTemplateLiteral(doc_.servers[0]));
      out.Lit("   # CONFIRM: the document's first server (--base-url URL or --start 'CMD' to choose)\n");
    } else {
      out.Lit("base_url: ").Str("http://127.0.0.1:8080" + EscapeTemplateLiteral(server_path));
      out.Lit("   # CONFIRM: where the service runs (--base-url URL or --start 'CMD' to choose)\n");
    }
    // A command only from --start: nothing a document says is ever run.
    if (!options_.start.empty()) {
      auto argv = SplitCommand(options_.start);
      if (!argv.ok()) return argv.status();
      out.Lit("start:\n  argv: [");
      for (std::size_t i = 0; i < argv->size(); ++i) {
        if (i) out.Lit(", ");
        out.Str((*argv)[i]);
      }
      out.Lit("]\n");
      if (options_.start.find("{{port}}") != std::string::npos) {
        out.Lit("  free_port: true   # {{port}} in the command: idemproof picks a free port\n");
      } else {
        out.Lit("  port_from_stdout: '127\\.0\\.0\\.1:(\\d+)'   # CONFIRM: the line the service prints with its port"
                " (or put {{port}} in the command)\n");
      }
      const Operation* health = nullptr;
      for (const auto& op : doc_.operations) {
        const std::string l = Lower(op.path);
        if (!health && op.method == "GET" && op.PathParameters().empty() &&
            (l.find("health") != std::string::npos || l.find("ready") != std::string::npos ||
             l.find("live") != std::string::npos))
          health = &op;
      }
      if (health) {
        out.Lit("  ready: {request: {method: GET, path: ").Str(EscapeTemplateLiteral(health->path));
        out.Lit("}, status: 200, timeout: 15s}\n");
      } else {
        out.Lit("  # CONFIRM: ready: {request: {method: GET, path: ...}} (no health endpoint in the document)\n");
      }
      out.Lit("  start_timeout: 15s\n  stop_timeout: 5s\n");
    }
    return Status::Ok();
  }

  void WriteContract(YamlOut& out) {
    // The statuses and headers the keyed operations document.
    bool key_required = false, key_optional = false;
    std::set<int> statuses;
    std::string replay_header;
    bool retry_after = false, retry_after_required = false;
    for (const auto& plan : plans_) {
      const Operation& op = *plan.op;
      if (plan.key.in != KeyPlace::In::kNone && (plan.role == "create" || plan.role == "pay"))
        (plan.key.required ? key_required : key_optional) = true;
      for (const auto& r : op.responses) {
        statuses.insert(r.status);
        for (const auto& [name, required] : r.headers) {
          if (r.status >= 200 && r.status < 300 && Lower(name).find("replay") != std::string::npos &&
              IsHeaderToken(name))
            replay_header = name;
          if ((r.status == 409 || r.status == 425) && Lower(name) == "retry-after") {
            retry_after = true;
            retry_after_required = retry_after_required || required;
          }
        }
      }
    }
    if (key_in_request_) {
      out.Lit("idempotency:\n  key_header: none   # the operations take their key in different places: each "
              "action's request carries {{key}}\n");
    } else {
      out.Lit("idempotency:\n  key_header: ").Word(key_header_);
      if (key_header_guessed_) out.Lit("   # CONFIRM: no operation declares a key header; the IETF draft's name");
      out.Lit("\n");
    }
    if (key_optional && !key_required) {
      out.Lit("  key: optional   # the key is optional on every create\n");
    } else if (key_required && statuses.count(428)) {
      out.Lit("  missing_key: 428\n");
    } else if (key_required && statuses.count(400)) {
      out.Lit("  missing_key: 400   # CONFIRM: the status without the key (documented: 400)\n");
    }
    if (!replay_header.empty()) {
      out.Lit("  replay: {header: ").Word(replay_header);
      out.Lit(", value: \"true\"}   # CONFIRM: the header's value on a replay\n");
    } else {
      out.Lit("  # CONFIRM: replay: {header: NAME, value: \"true\"}: no answer header names a replay; without it the\n"
              "  # replay-marker checks are skipped and no_false_dedup is not applicable\n");
    }
    if (statuses.count(409)) out.Lit("  in_progress: 409\n");
    else if (statuses.count(425)) out.Lit("  in_progress: 425\n");
    if (statuses.count(422)) out.Lit("  mismatch: 422\n");
    else out.Lit("  # CONFIRM: mismatch: STATUS (the answer to a used key with another body; default 422)\n");
    if (retry_after) {
      if (retry_after_required) out.Lit("  retry_after: required\n");
      else out.Lit("  retry_after: recommended\n");
    }
    const YAML::Node x = doc_.idempotency;
    bool window = false, lease = false;
    if (x.IsMap()) {
      // Copied only when it reads as a duration; else named in a comment.
      const auto copy = [&](const char* key, Fixed line) {
        const YAML::Node v = Child(x, key);
        if (!v.IsScalar()) return false;
        if (!ParseDuration(v.Scalar()).ok()) {
          out.Lit("  ").Comment(std::string("CONFIRM: the document's x-idempotency.") + key + " '" + v.Scalar() +
                                "' is no duration");
          return false;
        }
        out.Lit(line).Str(v.Scalar());
        out.Lit("   # CONFIRM: from the document's x-idempotency: what the started service keeps\n");
        return true;
      };
      window = copy("window", "  window: ");
      lease = copy("lease", "  lease: ");
    }
    if (!window) out.Lit("  # CONFIRM: window: DURATION (how long keys are kept): the window scenarios need it\n");
    if (!lease)
      out.Lit("  # CONFIRM: lease: DURATION (how long an in-progress claim is held): the lease scenarios need it\n");
    out.Lit("  # CONFIRM: path_equivalence: {...} (how the router treats /x/, /X, ?b&a): client/route-spelling needs it\n");
    out.Lit("request_timeout: 10s\n");
    bool location = false;
    for (const auto& plan : plans_)
      if (const Response* ok = plan.op->Success())
        for (const auto& [name, required] : ok->headers) location = location || Lower(name) == "location";
    if (location) out.Lit("compare_headers: [Content-Type, Location]\n");
    else out.Lit("compare_headers: [Content-Type]\n");
  }

  void WriteActions(YamlOut& out) {
    out.Lit("actions:\n");
    for (const auto& plan : plans_) {
      const Operation& op = *plan.op;
      at_ = &op;
      out.Lit("  ").Comment(op.method + " " + op.path + " (" + options_.document_label +
                            (op.line > 0 ? ":" + std::to_string(op.line) : "") + ")");
      for (const auto& c : plan.confirms) out.Lit("  ").Comment("CONFIRM: " + c);
      if (!plan.setup.empty()) out.Lit("  ").Comment("CONFIRM: " + plan.setup);
      if (key_in_request_ && plan.key.in == KeyPlace::In::kNone)
        out.Lit("  # CONFIRM: no key declared: sent under Idempotency-Key (the suite sends every action under a key)\n");
      out.Lit("  ").Word(plan.name).Lit(":\n    role: ").Word(plan.role).Lit("\n");
      if (!plan.of.empty()) out.Lit("    of: ").Word(plan.of).Lit("\n");
      out.Lit("    request: {method: ").Word(op.method).Lit(", path: ").Str(plan.path);
      if (key_in_request_ && (plan.key.in == KeyPlace::In::kHeader || plan.key.in == KeyPlace::In::kNone))
        out.Lit(", headers: {").Str(plan.key.in == KeyPlace::In::kHeader ? plan.key.name : "Idempotency-Key")
            .Lit(": \"{{key}}\"}");
      if (plan.body) WriteBody(out, plan, *plan.body);
      out.Lit("}\n");
      if (plan.other) {
        out.Lit("    other_payload: {");
        WriteBody(out, plan, *plan.other);
        out.Lit("}   ").Comment("CONFIRM: " + plan.other_changed + " changed (same key, another body)");
      }
      if (!plan.records_path.empty()) {
        out.Lit("    records: {request: {method: GET, path: ").Str(plan.records_path);
        out.Lit("}, count: ").Str(plan.records_count).Lit("}\n");
      }
      if (!plan.capture_var.empty())
        out.Lit("    capture: {").Word(plan.capture_var).Lit(": ").Str(plan.capture_path).Lit("}\n");
      if (!plan.slow_param.empty()) {
        out.Lit("    variants:   ");
        out.Comment("CONFIRM: ?" + plan.slow_param +
                    "= slows the request (the document names it); add slow_past_lease, fails_retryably, "
                    "fails_finally, large if the service has a way");
        out.Lit("      slow: {query: {").Str(plan.slow_param).Lit(": \"1500\"}}\n");
      } else if (plan.role == "create" || plan.role == "pay") {
        out.Lit("    # CONFIRM: variants: {slow, slow_past_lease, fails_retryably, fails_finally, large} (how the "
                "service's docs slow, fail or grow one request) unlock the lease, retry and size scenarios\n");
      }
    }
  }

  // ", json: {...}", or a form body with its content type (", " first
  // unless it opens a block).
  static void WriteBody(YamlOut& out, const ActionPlan& plan, const json& body) {
    if (!out.Text().empty() && out.Text().back() != '{') out.Lit(", ");
    if (plan.form) out.Lit("body: ").Str(FormBody(body)).Lit(", content_type: application/x-www-form-urlencoded");
    else out.Lit("json: ").Json(body);
  }

  void WriteProbes(YamlOut& out) {
    YamlOut probes;
    bool any = false;
    for (const auto& plan : plans_) {
      if (plan.role != "create" && plan.role != "pay") continue;
      const Operation& op = *plan.op;
      if (!plan.capture_var.empty()) {
        // GET /orders/{id}: the create's resource.
        for (const auto& get : doc_.operations) {
          const auto params = get.PathParameters();
          if (get.method != "GET" || params.size() != 1 || get.path != op.path + "/{" + params[0] + "}") continue;
          std::string value = "$";
          const Response* ok = get.Success();
          if (ok && ok->schema.IsMap() && Child(ok->schema, "properties").IsMap() && Child(ok->schema, "properties").size() == 1) {
            const YAML::Node props = Child(ok->schema, "properties");
            const auto only = props.begin();
            if (only->second.IsMap() && only->second["properties"]) value = "$." + only->first.Scalar();
          }
          const auto segments = Segments(op.path);
          probes.Lit("  ").Word(Unique(SnakeCase(Singular(segments.empty() ? "item" : segments.back()))));
          probes.Lit(": {role: resource, of: ").Word(plan.name).Lit(", request: {method: GET, path: ");
          probes.Str(TemplatePath(get.path, params[0], plan.capture_var)).Lit("}, value: ").Str(value).Lit("}\n");
          any = true;
          break;
        }
      }
      if (plan.role == "pay" && !plan.records_path.empty()) {
        std::string filter;
        const Operation* listing = Listing(op.path, &filter);
        const std::string array = listing && listing->Success() ? FirstArray(listing->Success()->schema) : "";
        probes.Lit("  # CONFIRM: the service's own record of the charges: narrow value to the downstream's id\n");
        probes.Lit("  ").Word(Unique(plan.name + "_record")).Lit(": {role: record, of: ").Word(plan.name);
        probes.Lit(", request: {method: GET, path: ").Str(plan.records_path);
        probes.Lit("}, value: ").Str(array.empty() ? "$" : "$." + array + "[*]").Lit("}\n");
        any = true;
      }
    }
    if (any) out.Lit("probes:\n").Append(probes);
  }

  void WriteLeftOut(YamlOut& out) {
    out.Lit("# CONFIRM: what an OpenAPI document cannot say, to add by hand when the service has it\n"
            "# (docs/scenario-reference.md): a counter probe its create and delete move (delete-releases-once),\n"
            "# a ledger probe of a pay action (the downstream's record: kill-after-charge), hooks, services\n"
            "# (helpers started with it), egress (downstreams behind the proxy), callers (tenants), messages\n"
            "# and broker (queues), batch (jobs), start.flaw_args.\n");
    for (const auto& note : left_out_) out.Comment("left out: " + note);
  }
  const OpenApiDocument& doc_;
  const Operation* at_ = nullptr;  // the operation being written, for an error's place
  const InitOptions& options_;
  std::string key_header_;
  bool key_header_guessed_ = false;
  std::vector<ActionPlan> plans_;
  InitSummary* summary_;
  std::vector<std::string> left_out_;
  std::vector<std::string> notes_;
  std::vector<InitRow> rows_;
  std::vector<const Operation*> keyless_posts_;  // left out
  bool key_in_request_ = false;  // key_header: none
  std::set<std::string> used_;
};

}  // namespace

Result<std::vector<std::string>> SplitCommand(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == '\'' || c == '"') {
      const std::size_t close = [&] {
        for (std::size_t j = i + 1; j < command.size(); ++j) {
          if (c == '"' && command[j] == '\\' && j + 1 < command.size()) {
            ++j;
            continue;
          }
          if (command[j] == c) return j;
        }
        return std::string::npos;
      }();
      if (close == std::string::npos)
        return Status::InvalidArgument("--start: unbalanced " + std::string(1, c) + " in '" + command + "'");
      for (std::size_t j = i + 1; j < close; ++j) {
        if (c == '"' && command[j] == '\\' && (command[j + 1] == '"' || command[j + 1] == '\\')) ++j;
        word += command[j];
      }
      in_word = true;
      i = close;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  if (words.empty()) return Status::InvalidArgument("--start: an empty command");
  return words;
}

Result<std::string> WriteTarget(const OpenApiDocument& doc, const InitOptions& options, InitSummary* summary) {
  Writer writer(doc, options, summary);
  try {
    return writer.Write();
  } catch (const YAML::Exception& e) {
    // A shape of the document the writer did not expect: an error naming
    // the operation, never an abort.
    const Operation* op = writer.At();
    return Status::InvalidConfig(
        "init could not write " + (op ? op->method + " " + op->path : std::string("the target")) +
            " (please report it): " + e.what(),
        SourceMark{doc.file, op ? op->line : 0, 0});
  }
}

}  // namespace idemproof::init
