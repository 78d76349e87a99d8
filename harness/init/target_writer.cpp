#include "init/target_writer.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/http_message.h"
#include "model/pattern.h"
#include "model/roles.h"

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
  if (word.size() > 1 && word.ends_with("s") && !word.ends_with("ss")) word.pop_back();
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
      if (kNum.FullMatch(s)) return std::stod(s);
      return s;
    }
    default:
      return nullptr;
  }
}

// JSON written as a YAML flow node ("key": value, with blanks after the
// separators: YAML needs them where JSON does not).
std::string Flow(const json& v) {
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, item] : v.items()) {
      out += (first ? "" : ", ") + json(k).dump() + ": " + Flow(item);
      first = false;
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + Flow(v[i]);
    return out + "]";
  }
  return v.dump();
}

std::string Quote(const std::string& s) { return json(s).dump(); }

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
    const YAML::Node props = schema["properties"];
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
    if (needs_one || schema["items"]) out.push_back(BuildFromSchema(schema["items"], depth + 1));
    return out;
  }
  if (type == "integer") return schema["minimum"] ? std::max<long long>(1, schema["minimum"].as<long long>(1)) : 1;
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
std::string BizField(const json& body, const std::string& preferred) {
  if (!body.is_object()) return "";
  if (!preferred.empty() && body.contains(preferred) && body[preferred].is_string()) return preferred;
  for (const auto& [k, v] : body.items())
    if (v.is_string() && LooksLikeIdentifier(k)) return k;
  for (const auto& [k, v] : body.items())
    if (v.is_string()) return k;
  return "";
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

bool IsKeyHeaderName(const std::string& name) {
  const std::string l = Lower(name);
  return l.find("idempoten") != std::string::npos;
}

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
};

class Writer {
 public:
  Writer(const OpenApiDocument& doc, const InitOptions& options) : doc_(doc), options_(options) {}

  Result<std::string> Write() {
    ChooseKeyHeader();
    for (const auto& op : doc_.operations) {
      if (op.method == "GET") continue;
      Marking mark;
      if (Status s = ReadMarking(op, mark); !s.ok()) return s;
      const bool keyed = mark.present ? mark.keyed : op.FindParameter("header", key_header_) != nullptr;
      if (!keyed && op.method == "POST") {
        left_out_.push_back(op.method + " " + op.path + ": declares no " + key_header_ +
                            " header and no x-idempotency (a POST is not idempotent by itself: the suite would "
                            "judge a promise the service never made). CONFIRM: add it as an action if the service "
                            "deduplicates it (a callback: role callback, of: its create)");
        continue;
      }
      ActionPlan plan;
      plan.op = &op;
      plan.name = Unique(op.operation_id.empty() ? SnakeCase(Lower(op.method) + "_" + op.path) : SnakeCase(op.operation_id));
      if (!keyed)
        plan.confirms.push_back("declares no " + key_header_ + " header: kept as an action since " + op.method +
                                " is idempotent by its method; the suite sends it under a key anyway");
      if (!mark.role.empty()) {
        plan.role = mark.role;
      } else {
        GuessRole(op, plan);
      }
      plan.of = mark.of;
      plans_.push_back(std::move(plan));
    }
    if (plans_.empty()) {
      return Status::InvalidConfig(
          "no POST, PUT, PATCH or DELETE operation to make an action of (GET endpoints alone cannot be tested "
          "for idempotency)",
          SourceMark{doc_.file, 0, 0});
    }
    // Creates first: their captures are what the others' paths need.
    for (auto& plan : plans_)
      if (plan.role == "create" || plan.role == "pay") FillCreate(plan);
    for (auto& plan : plans_)
      if (plan.role != "create" && plan.role != "pay") FillDependent(plan);
    // Those no create's capture could place are left out (noted).
    std::erase_if(plans_, [](const ActionPlan& plan) { return plan.path.empty(); });
    std::ostringstream out;
    if (Status s = WriteHeader(out); !s.ok()) return s;
    WriteContract(out);
    WriteActions(out);
    WriteProbes(out);
    WriteLeftOut(out);
    return out.str();
  }

 private:
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

  void ChooseKeyHeader() {
    for (const auto& op : doc_.operations) {
      if (op.idempotency.IsMap() && op.idempotency["key_header"]) {
        key_header_ = op.idempotency["key_header"].Scalar();
        return;
      }
      for (const auto& p : op.parameters) {
        if (p.in == "header" && IsKeyHeaderName(p.name)) {
          key_header_ = p.name;
          return;
        }
      }
    }
    key_header_ = "Idempotency-Key";
    key_header_guessed_ = true;
  }

  std::string Unique(const std::string& name) {
    std::string out = name;
    for (int i = 2; used_.count(out); ++i) out = name + "_" + std::to_string(i);
    used_.insert(out);
    return out;
  }

  void GuessRole(const Operation& op, ActionPlan& plan) {
    const auto segments = Segments(op.path);
    const bool on_item = std::any_of(segments.begin(), segments.end(), IsParam);
    if (op.method == "POST" && !on_item) {
      plan.role = "create";
      plan.confirms.push_back("role create (a POST that makes a record); pay if it charges an external system, "
                              "callback if an external system sends it (x-idempotency: {role: ...} says so in the document)");
    } else if (op.method == "DELETE") {
      plan.role = "delete";
    } else if (op.method == "PUT" || op.method == "PATCH") {
      plan.role = "put";
      if (op.method == "PATCH")
        plan.confirms.push_back("role put: a PATCH that SETS a state (an increment is no put)");
    } else {
      const std::string last = Lower(segments.empty() ? "" : segments.back());
      static const std::set<std::string> kEnding = {"cancel", "cancellation", "void", "close", "delete",
                                                    "archive", "revoke", "deactivate"};
      plan.role = kEnding.count(last) ? "delete" : "put";
      plan.confirms.push_back("role " + plan.role + " from the path's last segment '" + last +
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

  void FillCreate(ActionPlan& plan) {
    const Operation& op = *plan.op;
    plan.path = op.path;
    std::string filter;
    const Operation* listing = Listing(op.path, &filter);
    json body = nullptr;
    bool from_example = false;
    if (!op.request_examples.empty()) {
      body = ToJson(op.request_examples[0]);
      from_example = true;
    } else if (op.request_schema.IsMap()) {
      body = BuildFromSchema(op.request_schema, 0);
    }
    if (body.is_object()) {
      // The listing's filter names the business id when the body has it.
      std::string preferred;
      if (listing)
        for (const auto& q : QueryNames(*listing))
          if (body.contains(q) && body[q].is_string()) preferred = q;
      plan.biz_field = BizField(body, preferred);
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
      plan.records_path = op.path + "?" + filter + "={{biz}}";
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
    if (params.empty()) {
      plan.path = op.path;
      if (plan.role == "put" || plan.role == "delete")
        plan.confirms.push_back("a " + plan.role + " works on a create's resource (of:): none found in its path");
      return;
    }
    if (params.size() > 1) {
      left_out_.push_back(op.method + " " + op.path + ": more than one path parameter; CONFIRM: add it by hand");
      plan.path.clear();
      return;
    }
    const std::string param = params[0];
    const std::string prefix = op.path.substr(0, op.path.find("/{" + param + "}"));
    ActionPlan* create = nullptr;
    for (auto& c : plans_)
      if ((c.role == "create") && c.op->path == prefix && (plan.of.empty() || plan.of == c.name)) create = &c;
    if (!create) {
      left_out_.push_back(op.method + " " + op.path + ": no create (POST " + prefix +
                          ") makes its {" + param + "}; CONFIRM: add it by hand");
      plan.path.clear();
      return;
    }
    Capture(*create, param);
    plan.of = create->name;
    plan.path = op.path;
    const std::string braces = "{" + param + "}";
    plan.path.replace(plan.path.find(braces), braces.size(), "{{" + create->capture_var + "}}");
    // A put or delete with a JSON body: its example or schema.
    if (!op.request_examples.empty()) plan.body = ToJson(op.request_examples[0]);
    else if (op.request_schema.IsMap()) plan.body = BuildFromSchema(op.request_schema, 0);
  }

  void Capture(ActionPlan& create, const std::string& param) {
    if (!create.capture_var.empty()) return;
    const auto segments = Segments(create.op->path);
    const std::string noun = SnakeCase(Singular(segments.empty() ? "item" : segments.back()));
    create.capture_var = Lower(param) == "id" ? noun + "_id" : SnakeCase(param);
    const Response* ok = create.op->Success();
    std::string at = ok ? FindProperty(ok->schema, param) : "";
    if (at.empty() && ok && Lower(param) != "id") at = FindProperty(ok->schema, "id");
    if (at.empty()) {
      at = "$.id";
      create.confirms.push_back("capture: the answer's schema names no '" + param + "': $.id guessed");
    }
    create.capture_path = at;
  }

  Status WriteHeader(std::ostringstream& out) {
    if (!options_.schema_ref.empty()) out << "# yaml-language-server: $schema=" << options_.schema_ref << "\n";
    out << "# Generated by `idemproof init` from " << options_.document_label << " (OpenAPI " << doc_.version
        << (doc_.title.empty() ? "" : ", \"" + doc_.title + "\"") << ").\n"
        << "# Every guess a human must confirm is marked `# CONFIRM:`; what the document\n"
        << "# cannot say is listed at the end. Check it with:\n"
        << "#   idemproof lint scenarios/ --target THIS_FILE\n";
    for (const auto& note : doc_.notes) out << "# CONFIRM: not read from the document: " << note << "\n";
    std::string name = SnakeCase(doc_.title.empty() ? "target" : doc_.title);
    std::replace(name.begin(), name.end(), '_', '-');
    out << "name: " << Quote(name) << "\n";
    std::string server_path;
    if (!doc_.servers.empty()) {
      // The path of an absolute or a relative server URL ("/v1" of "https://h/v1").
      const std::string_view url = doc_.servers[0];
      const std::string_view path = url.substr(TargetStart(url));
      if (path.size() > 1 && path.front() == '/') server_path = std::string(path);
      if (!server_path.empty() && server_path.back() == '/') server_path.pop_back();
    }
    if (!options_.base_url.empty()) {
      out << "base_url: " << Quote(options_.base_url) << "\n";
    } else if (!options_.start.empty()) {
      out << "base_url: " << Quote("http://127.0.0.1:{{port}}" + server_path) << "\n";
    } else if (!doc_.servers.empty() && doc_.servers[0].rfind("http", 0) == 0) {
      out << "base_url: " << Quote(doc_.servers[0])
          << "   # CONFIRM: the document's first server (--base-url URL or --start 'CMD' to choose)\n";
    } else {
      out << "base_url: \"http://127.0.0.1:8080" << server_path
          << "\"   # CONFIRM: where the service runs (--base-url URL or --start 'CMD' to choose)\n";
    }
    if (!options_.start.empty()) {
      auto argv = SplitCommand(options_.start);
      if (!argv.ok()) return argv.status();
      out << "start:\n  argv: [";
      for (std::size_t i = 0; i < argv->size(); ++i) out << (i ? ", " : "") << Quote((*argv)[i]);
      out << "]\n";
      if (options_.start.find("{{port}}") != std::string::npos) {
        out << "  free_port: true   # {{port}} in the command: idemproof picks a free port\n";
      } else {
        out << "  port_from_stdout: '127\\.0\\.0\\.1:(\\d+)'   # CONFIRM: the line the service prints with its port"
               " (or put {{port}} in the command)\n";
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
        out << "  ready: {request: {method: GET, path: " << Quote(health->path) << "}, status: 200, timeout: 15s}\n";
      } else {
        out << "  # CONFIRM: ready: {request: {method: GET, path: ...}} (no health endpoint in the document)\n";
      }
      out << "  start_timeout: 15s\n  stop_timeout: 5s\n";
    }
    return Status::Ok();
  }

  void WriteContract(std::ostringstream& out) {
    // The statuses and headers the keyed operations document.
    bool key_required = false, key_optional = false;
    std::set<int> statuses;
    std::string replay_header;
    bool retry_after = false, retry_after_required = false;
    for (const auto& plan : plans_) {
      const Operation& op = *plan.op;
      if (const Parameter* p = op.FindParameter("header", key_header_)) {
        if (plan.role == "create" || plan.role == "pay") (p->required ? key_required : key_optional) = true;
      }
      for (const auto& r : op.responses) {
        statuses.insert(r.status);
        for (const auto& [name, required] : r.headers) {
          if (r.status >= 200 && r.status < 300 && Lower(name).find("replay") != std::string::npos)
            replay_header = name;
          if ((r.status == 409 || r.status == 425) && Lower(name) == "retry-after") {
            retry_after = true;
            retry_after_required = retry_after_required || required;
          }
        }
      }
    }
    out << "idempotency:\n  key_header: " << key_header_;
    if (key_header_guessed_)
      out << "   # CONFIRM: no operation declares a key header; the IETF draft's name";
    out << "\n";
    if (key_optional && !key_required) {
      out << "  key: optional   # the key header is optional on every create\n";
    } else if (key_required && statuses.count(428)) {
      out << "  missing_key: 428\n";
    } else if (key_required && statuses.count(400)) {
      out << "  missing_key: 400   # CONFIRM: the status without the key (documented: 400)\n";
    }
    if (!replay_header.empty()) {
      out << "  replay: {header: " << replay_header << ", value: \"true\"}   # CONFIRM: the header's value on a replay\n";
    } else {
      out << "  # CONFIRM: replay: {header: NAME, value: \"true\"}: no answer header names a replay; without it the\n"
             "  # replay-marker checks are skipped and no_false_dedup is not applicable\n";
    }
    if (statuses.count(409)) out << "  in_progress: 409\n";
    else if (statuses.count(425)) out << "  in_progress: 425\n";
    if (statuses.count(422)) out << "  mismatch: 422\n";
    else out << "  # CONFIRM: mismatch: STATUS (the answer to a used key with another body; default 422)\n";
    if (retry_after) out << "  retry_after: " << (retry_after_required ? "required" : "recommended") << "\n";
    const YAML::Node x = doc_.idempotency;
    bool window = false, lease = false;
    if (x.IsMap()) {
      for (const char* key : {"window", "lease"}) {
        if (x[key] && x[key].IsScalar()) {
          out << "  " << key << ": " << x[key].Scalar()
              << "   # CONFIRM: from the document's x-idempotency: what the started service keeps\n";
          (std::string(key) == "window" ? window : lease) = true;
        }
      }
    }
    if (!window)
      out << "  # CONFIRM: window: DURATION (how long keys are kept): the window scenarios need it\n";
    if (!lease)
      out << "  # CONFIRM: lease: DURATION (how long an in-progress claim is held): the lease scenarios need it\n";
    out << "  # CONFIRM: path_equivalence: {...} (how the router treats /x/, /X, ?b&a): client/route-spelling needs it\n";
    out << "request_timeout: 10s\n";
    std::set<std::string> compare = {"Content-Type"};
    for (const auto& plan : plans_)
      if (const Response* ok = plan.op->Success())
        for (const auto& [name, required] : ok->headers)
          if (Lower(name) == "location") compare.insert("Location");
    out << "compare_headers: [";
    bool first = true;
    for (const auto& h : compare) {
      out << (first ? "" : ", ") << h;
      first = false;
    }
    out << "]\n";
  }

  void WriteActions(std::ostringstream& out) {
    out << "actions:\n";
    for (const auto& plan : plans_) {
      const Operation& op = *plan.op;
      out << "  # " << op.method << " " << op.path << " (" << options_.document_label << ":" << op.line << ")\n";
      for (const auto& c : plan.confirms) out << "  # CONFIRM: " << c << "\n";
      out << "  " << plan.name << ":\n    role: " << plan.role << "\n";
      if (!plan.of.empty()) out << "    of: " << plan.of << "\n";
      out << "    request: {method: " << op.method << ", path: " << Quote(plan.path);
      if (plan.body) out << ", json: " << Flow(*plan.body);
      out << "}\n";
      if (plan.other)
        out << "    other_payload: {json: " << Flow(*plan.other) << "}   # CONFIRM: " << plan.other_changed
            << " changed (same key, another body)\n";
      if (!plan.records_path.empty())
        out << "    records: {request: {method: GET, path: " << Quote(plan.records_path)
            << "}, count: " << Quote(plan.records_count) << "}\n";
      if (!plan.capture_var.empty())
        out << "    capture: {" << plan.capture_var << ": " << Quote(plan.capture_path) << "}\n";
      if (!plan.slow_param.empty()) {
        out << "    variants:   # CONFIRM: ?" << plan.slow_param
            << "= slows the request (the document names it); add slow_past_lease, fails_retryably, "
               "fails_finally, large if the service has a way\n"
            << "      slow: {query: {" << plan.slow_param << ": \"1500\"}}\n";
      } else if (plan.role == "create" || plan.role == "pay") {
        out << "    # CONFIRM: variants: {slow, slow_past_lease, fails_retryably, fails_finally, large} (how the "
               "service's docs slow, fail or grow one request) unlock the lease, retry and size scenarios\n";
      }
    }
  }

  void WriteProbes(std::ostringstream& out) {
    std::ostringstream probes;
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
          std::string path = get.path;
          path.replace(path.find("{" + params[0] + "}"), params[0].size() + 2, "{{" + plan.capture_var + "}}");
          const auto segments = Segments(op.path);
          probes << "  " << Unique(SnakeCase(Singular(segments.empty() ? "item" : segments.back())))
                 << ": {role: resource, of: " << plan.name << ", request: {method: GET, path: " << Quote(path)
                 << "}, value: " << Quote(value) << "}\n";
          break;
        }
      }
      if (plan.role == "pay" && !plan.records_path.empty()) {
        std::string filter;
        const Operation* listing = Listing(op.path, &filter);
        const std::string array = listing && listing->Success() ? FirstArray(listing->Success()->schema) : "";
        probes << "  # CONFIRM: the service's own record of the charges: narrow value to the downstream's id\n"
               << "  " << Unique(plan.name + "_record") << ": {role: record, of: " << plan.name
               << ", request: {method: GET, path: " << Quote(plan.records_path)
               << "}, value: " << Quote(array.empty() ? "$" : "$." + array + "[*]") << "}\n";
      }
    }
    if (!probes.str().empty()) out << "probes:\n" << probes.str();
  }

  void WriteLeftOut(std::ostringstream& out) {
    out << "# CONFIRM: what an OpenAPI document cannot say, to add by hand when the service has it\n"
           "# (docs/scenario-reference.md): a counter probe its create and delete move (delete-releases-once),\n"
           "# a ledger probe of a pay action (the downstream's record: kill-after-charge), hooks, services\n"
           "# (helpers started with it), egress (downstreams behind the proxy), callers (tenants), messages\n"
           "# and broker (queues), batch (jobs), start.flaw_args.\n";
    for (const auto& note : left_out_) out << "# left out: " << note << "\n";
  }

  const OpenApiDocument& doc_;
  const InitOptions& options_;
  std::string key_header_;
  bool key_header_guessed_ = false;
  std::vector<ActionPlan> plans_;
  std::vector<std::string> left_out_;
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

Result<std::string> WriteTarget(const OpenApiDocument& doc, const InitOptions& options) {
  return Writer(doc, options).Write();
}

}  // namespace idemproof::init
