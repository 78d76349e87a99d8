#include "init/openapi_document.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace idemproof::init {

namespace {

struct Failure {
  Status status;
};

// How deep `$ref` chains and nested schemas are followed: a cycle
// (a tree node whose children are tree nodes) stops here, not in a stack overflow.
constexpr int kMaxDepth = 12;

const char* const kMethods[] = {"get", "put", "post", "delete", "patch"};

class Reader {
 public:
  Reader(std::string file, YAML::Node root) : file_(std::move(file)), root_(std::move(root)) {}

  SourceMark MarkOf(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    if (m.is_null()) return SourceMark{file_, 0, 0};
    return SourceMark{file_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void Fail(const YAML::Node& node, const std::string& message) const {
    throw Failure{Status::InvalidConfig(message, MarkOf(node))};
  }

  // `node` with its `$ref` chain followed (same file only).
  YAML::Node Resolve(const YAML::Node& node, int depth = 0) const {
    if (!node.IsMap() || !node["$ref"]) return node;
    if (depth > kMaxDepth) Fail(node, "$ref chain deeper than " + std::to_string(kMaxDepth) + " (a cycle?)");
    const YAML::Node ref = node["$ref"];
    if (!ref.IsScalar()) Fail(ref, "$ref must be a string");
    const std::string text = ref.Scalar();
    if (text.rfind("#/", 0) != 0)
      Fail(ref, "$ref '" + text + "' leaves this document: idemproof init follows only references inside it (#/...)");
    YAML::Node at = root_;
    std::stringstream parts(text.substr(2));
    std::string part;
    while (std::getline(parts, part, '/')) {
      std::string name;  // JSON pointer escapes: ~1 is '/', ~0 is '~'
      for (std::size_t i = 0; i < part.size(); ++i) {
        if (part[i] == '~' && i + 1 < part.size() && (part[i + 1] == '0' || part[i + 1] == '1')) {
          name += part[i + 1] == '1' ? '/' : '~';
          ++i;
        } else {
          name += part[i];
        }
      }
      YAML::Node next;
      if (at.IsMap() && at[name]) next.reset(at[name]);
      else Fail(ref, "$ref '" + text + "' names nothing in this document (no '" + name + "')");
      at.reset(next);
    }
    return Resolve(at, depth + 1);
  }

  // A schema with `$ref`s resolved and `allOf` merged, its properties and
  // items too (a fresh node: the document is not changed).
  YAML::Node Schema(const YAML::Node& raw, int depth, std::vector<std::string>& notes) const {
    YAML::Node node = Resolve(raw);
    if (!node.IsMap() || depth > kMaxDepth) return node;
    YAML::Node out(YAML::NodeType::Map);
    std::vector<std::string> required;
    YAML::Node properties(YAML::NodeType::Map);
    auto take = [&](const YAML::Node& part) {
      for (const auto& kv : part) {
        const std::string key = kv.first.Scalar();
        if (key == "properties" && kv.second.IsMap()) {
          for (const auto& p : kv.second) properties[p.first.Scalar()] = Schema(p.second, depth + 1, notes);
        } else if (key == "required" && kv.second.IsSequence()) {
          for (const auto& r : kv.second)
            if (std::find(required.begin(), required.end(), r.Scalar()) == required.end())
              required.push_back(r.Scalar());
        } else if (key == "items") {
          out["items"] = Schema(kv.second, depth + 1, notes);
        } else if (key != "allOf" && key != "oneOf" && key != "anyOf" && key != "$ref") {
          out[key] = YAML::Clone(kv.second);
        }
      }
    };
    if (node["allOf"] && node["allOf"].IsSequence())
      for (const auto& part : node["allOf"]) take(Schema(part, depth + 1, notes));
    for (const char* alt : {"oneOf", "anyOf"}) {
      if (node[alt] && node[alt].IsSequence() && node[alt].size() > 0) {
        notes.push_back(std::string(alt) + " at " + MarkOf(node[alt]).ToString() +
                        ": the first alternative was used");
        take(Schema(node[alt][0], depth + 1, notes));
      }
    }
    take(node);
    if (properties.size() > 0) out["properties"] = properties;
    if (!required.empty()) {
      YAML::Node r(YAML::NodeType::Sequence);
      for (const auto& name : required) r.push_back(name);
      out["required"] = r;
    }
    return out;
  }

  // The JSON media type's entry of a `content:` map (application/json, or
  // any +json / json type), or a null node.
  YAML::Node JsonMedia(const YAML::Node& content) const {
    if (!content.IsDefined() || !content.IsMap()) return YAML::Node();
    for (const auto& kv : content) {
      const std::string type = kv.first.Scalar();
      if (type == "application/json" || type.find("json") != std::string::npos) return Resolve(kv.second);
    }
    return YAML::Node();
  }
  // The form media type's entry (application/x-www-form-urlencoded, else
  // multipart/form-data), or a null node.
  YAML::Node FormMedia(const YAML::Node& content) const {
    if (!content.IsDefined() || !content.IsMap()) return YAML::Node();
    for (const char* type : {"application/x-www-form-urlencoded", "multipart/form-data"})
      for (const auto& kv : content)
        if (kv.first.Scalar().rfind(type, 0) == 0) return Resolve(kv.second);
    return YAML::Node();
  }

  Parameter ReadParameter(const YAML::Node& raw, std::vector<std::string>& notes) const {
    const YAML::Node p = Resolve(raw);
    if (!p.IsMap() || !p["name"] || !p["in"]) Fail(raw, "a parameter needs `name` and `in`");
    Parameter out;
    out.name = p["name"].Scalar();
    out.in = p["in"].Scalar();
    if (p["description"] && p["description"].IsScalar()) out.description = p["description"].Scalar();
    out.required = p["required"] && p["required"].IsScalar() && p["required"].Scalar() == "true";
    if (p["schema"]) out.schema = Schema(p["schema"], 0, notes);
    if (p["example"]) out.example = p["example"];
    else if (out.schema.IsMap() && out.schema["example"]) out.example = out.schema["example"];
    return out;
  }

  Operation ReadOperation(const std::string& method, const std::string& path, const YAML::Node& op,
                          const std::vector<Parameter>& shared, std::vector<std::string>& notes) const {
    if (!op.IsMap()) Fail(op, method + " " + path + ": an operation must be a map");
    Operation out;
    out.method = method;
    std::transform(out.method.begin(), out.method.end(), out.method.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out.path = path;
    out.line = MarkOf(op).line;
    if (op["operationId"]) out.operation_id = op["operationId"].Scalar();
    if (op["summary"] && op["summary"].IsScalar()) out.summary = op["summary"].Scalar();
    if (op["description"] && op["description"].IsScalar()) out.description = op["description"].Scalar();
    if (op["tags"] && op["tags"].IsSequence())
      for (const auto& t : op["tags"])
        if (t.IsScalar()) out.tags.push_back(t.Scalar());
    out.parameters = shared;
    if (op["parameters"] && op["parameters"].IsSequence()) {
      for (const auto& raw : op["parameters"]) {
        Parameter p = ReadParameter(raw, notes);
        auto same = std::find_if(out.parameters.begin(), out.parameters.end(),
                                 [&](const Parameter& q) { return q.in == p.in && q.name == p.name; });
        if (same != out.parameters.end()) *same = std::move(p);
        else out.parameters.push_back(std::move(p));
      }
    }
    if (op["requestBody"]) {
      const YAML::Node body = Resolve(op["requestBody"]);
      YAML::Node media = body.IsMap() ? JsonMedia(body["content"]) : YAML::Node();
      if (media.IsMap()) {
        out.request_media = "json";
      } else if (body.IsMap()) {
        media = FormMedia(body["content"]);
        if (media.IsMap()) out.request_media = "form";
      }
      if (media.IsMap()) {
        if (media["schema"]) out.request_schema = Schema(media["schema"], 0, notes);
        if (media["example"]) out.request_examples.push_back(media["example"]);
        if (media["examples"] && media["examples"].IsMap()) {
          for (const auto& kv : media["examples"]) {
            const YAML::Node ex = Resolve(kv.second);
            if (ex.IsMap() && ex["value"]) out.request_examples.push_back(ex["value"]);
            else if (ex.IsMap() && ex["externalValue"])
              notes.push_back(method + " " + path + ": example '" + kv.first.Scalar() +
                              "' is an externalValue, not read");
          }
        }
        if (out.request_examples.empty() && out.request_schema.IsMap() && out.request_schema["example"])
          out.request_examples.push_back(out.request_schema["example"]);
        if (out.request_examples.empty() && out.request_schema.IsMap() && out.request_schema["examples"] &&
            out.request_schema["examples"].IsSequence())
          for (const auto& ex : out.request_schema["examples"]) out.request_examples.push_back(ex);
      } else if (body.IsMap() && body["content"]) {
        notes.push_back(method + " " + path + ": the request body has no JSON or form media type; not read");
      }
    }
    if (op["responses"] && op["responses"].IsMap()) {
      for (const auto& kv : op["responses"]) {
        const std::string code = kv.first.Scalar();
        Response r;
        if (code == "default") {
          r.status = 0;
        } else if (code.size() == 3 && std::all_of(code.begin(), code.end(), ::isdigit)) {
          r.status = std::stoi(code);
        } else {
          notes.push_back(method + " " + path + ": response '" + code + "' (a range) not read");
          continue;
        }
        const YAML::Node answer = Resolve(kv.second);
        if (answer.IsMap()) {
          const YAML::Node media = JsonMedia(answer["content"]);
          if (media.IsMap() && media["schema"]) r.schema = Schema(media["schema"], 0, notes);
          if (answer["headers"] && answer["headers"].IsMap()) {
            for (const auto& h : answer["headers"]) {
              const YAML::Node header = Resolve(h.second);
              r.headers[h.first.Scalar()] =
                  header.IsMap() && header["required"] && header["required"].Scalar() == "true";
            }
          }
        }
        out.responses.push_back(std::move(r));
      }
    }
    if (op["x-idempotency"]) out.idempotency = op["x-idempotency"];
    return out;
  }

  OpenApiDocument Read() const {
    if (!root_.IsMap()) Fail(root_, "not an OpenAPI document: the top level must be a map");
    OpenApiDocument doc;
    doc.file = file_;
    if (root_["swagger"])
      Fail(root_["swagger"], "Swagger/OpenAPI 2.0 is not read: idemproof init reads OpenAPI 3.0 and 3.1");
    const YAML::Node version = root_["openapi"];
    if (!version || !version.IsScalar())
      Fail(root_, "not an OpenAPI document: no `openapi:` version (3.0.x or 3.1.x)");
    doc.version = version.Scalar();
    if (doc.version.rfind("3.0", 0) != 0 && doc.version.rfind("3.1", 0) != 0)
      Fail(version, "OpenAPI " + doc.version + " is not read: idemproof init reads 3.0.x and 3.1.x");
    if (root_["info"] && root_["info"]["title"]) doc.title = root_["info"]["title"].Scalar();
    if (root_["servers"] && root_["servers"].IsSequence())
      for (const auto& s : root_["servers"])
        if (s.IsMap() && s["url"]) doc.servers.push_back(s["url"].Scalar());
    if (root_["x-idempotency"]) doc.idempotency = root_["x-idempotency"];
    if (root_["components"] && root_["components"].IsMap() && root_["components"]["securitySchemes"] &&
        root_["components"]["securitySchemes"].IsMap())
      for (const auto& kv : root_["components"]["securitySchemes"]) {
        const YAML::Node scheme = Resolve(kv.second);
        if (scheme.IsMap() && scheme["type"] && scheme["type"].Scalar() == "apiKey" && scheme["in"] &&
            scheme["in"].Scalar() == "header" && scheme["name"] && scheme["name"].IsScalar()) {
          std::string name = scheme["name"].Scalar();
          std::transform(name.begin(), name.end(), name.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
          doc.security_headers.push_back(name);
        }
      }
    const YAML::Node paths = root_["paths"];
    if (!paths || !paths.IsMap() || paths.size() == 0)
      Fail(paths ? paths : root_, "the document has no `paths:`: nothing to describe");
    for (const auto& kv : paths) {
      const std::string path = kv.first.Scalar();
      if (path.empty() || path[0] != '/') Fail(kv.first, "a path must start with '/': '" + path + "'");
      const YAML::Node item = Resolve(kv.second);
      if (!item.IsMap()) Fail(kv.second, "path '" + path + "' must be a map");
      std::vector<Parameter> shared;
      if (item["parameters"] && item["parameters"].IsSequence())
        for (const auto& raw : item["parameters"]) shared.push_back(ReadParameter(raw, doc.notes));
      for (const char* method : kMethods)
        if (item[method]) doc.operations.push_back(ReadOperation(method, path, item[method], shared, doc.notes));
      for (const auto& m : item) {
        const std::string name = m.first.Scalar();
        if (name == "head" || name == "options" || name == "trace")
          doc.notes.push_back(path + ": " + name + " not read");
      }
    }
    return doc;
  }

 private:
  std::string file_;
  YAML::Node root_;
};

}  // namespace

std::vector<std::string> Operation::PathParameters() const {
  std::vector<std::string> out;
  for (std::size_t open = path.find('{'); open != std::string::npos; open = path.find('{', open + 1)) {
    const std::size_t close = path.find('}', open);
    if (close == std::string::npos) break;
    out.push_back(path.substr(open + 1, close - open - 1));
  }
  return out;
}

const Parameter* Operation::FindParameter(const std::string& in, const std::string& name) const {
  for (const auto& p : parameters) {
    if (p.in != in) continue;
    // Header names compare case-insensitively.
    if (in == "header" ? std::equal(p.name.begin(), p.name.end(), name.begin(), name.end(),
                                    [](char a, char b) { return std::tolower(a) == std::tolower(b); })
                       : p.name == name)
      return &p;
  }
  return nullptr;
}

bool Operation::Documents(int status) const {
  return std::any_of(responses.begin(), responses.end(), [&](const Response& r) { return r.status == status; });
}

const Response* Operation::Success() const {
  for (const auto& r : responses)
    if (r.status >= 200 && r.status < 300) return &r;
  return nullptr;
}

Result<OpenApiDocument> ParseOpenApi(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig("not YAML or JSON: " + e.msg, SourceMark{file, e.mark.line + 1, e.mark.column + 1});
  }
  try {
    return Reader(file, root).Read();
  } catch (const Failure& f) {
    return f.status;
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig(e.msg, SourceMark{file, e.mark.line + 1, e.mark.column + 1});
  }
}

Result<OpenApiDocument> LoadOpenApi(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the OpenAPI document (no such file, or not readable)");
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return Status::IoError(path + ": reading failed");
  return ParseOpenApi(text.str(), path);
}

}  // namespace idemproof::init
