#include "init/openapi_document.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <unordered_set>

#include <yaml-cpp/eventhandler.h>

#include "model/console_text.h"

namespace idemproof::init {

namespace {

struct Failure {
  Status status;
};

const char* const kMethods[] = {"get", "put", "post", "delete", "patch"};

// A ref chain longer than this is a cycle the chain check missed (it cannot be).
constexpr int kMaxRefChain = 64;
// How deep an example-like value may nest (a recursion bound of the walks).
constexpr int kMaxValueDepth = 256;
// The longest operationId read as a name (the writer makes an action name of it).
constexpr std::size_t kMaxOperationId = 128;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "Not there": a handle on one shared undefined node (a miss costs no
// allocation). Never assign into a handle that may hold it (`x = y` would
// rebind the shared node): reset() it.
YAML::Node None() {
  static const YAML::Node kNone(YAML::NodeType::Undefined);
  return kNone;
}

// `node[key]` without the traps of yaml-cpp's operator[]: never on a
// scalar (it throws), never non-const (a miss would add a pair). A miss is
// an undefined node. A YAML merge key (`<<: *base`) is looked into.
YAML::Node Child(const YAML::Node& node, const std::string& key, int merges = 0) {
  if (!node.IsMap()) return None();
  const YAML::Node& map = node;
  YAML::Node value = map[key];
  if (value.IsDefined()) return value;
  if (merges > 4 || key == "<<") return None();
  const YAML::Node merge = map["<<"];
  if (!merge.IsDefined()) return None();
  if (merge.IsMap()) return Child(merge, key, merges + 1);
  if (merge.IsSequence())
    for (const auto& part : merge)
      if (YAML::Node found = Child(part, key, merges + 1); found.IsDefined()) return found;
  return None();
}

std::string ScalarOr(const YAML::Node& node, const std::string& fallback = "") {
  return node.IsScalar() ? node.Scalar() : fallback;
}

// A plain scalar that reads as a JSON-like number (what the writer turns
// into one): [-+]digits[.digits][e[-+]digits].
bool LooksNumeric(const std::string& s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const std::size_t digits = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == digits) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const std::size_t exp = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == exp) return false;
  }
  return i == s.size();
}

// The first byte that is not UTF-8 (or a NUL), with its 1-based line and
// column (columns count characters); npos when the text is clean.
struct BadByte {
  std::size_t at = std::string::npos;
  int line = 1;
  int column = 1;
};
BadByte FirstBadUtf8(const std::string& text) {
  BadByte out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\0') break;
    const std::size_t n = Utf8SequenceLength(text, i);  // the console's check: one UTF-8 rule
    if (n == 0) break;
    if (text[i] == '\n') {
      ++out.line;
      out.column = 1;
    } else {
      ++out.column;
    }
    i += n;
  }
  if (i < text.size()) out.at = i;
  return out;
}

// "32 MiB", or "1000 bytes" under a MiB.
std::string SizeText(std::size_t bytes) {
  return bytes >= (1u << 20) && bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                                         : std::to_string(bytes) + " bytes";
}

std::string Hex4(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04X", v);
  return buf;
}

// A JSON text made one yaml-cpp reads as JSON does: a surrogate pair
// escape (\ud83d\ude00, which yaml-cpp refuses) becomes \U0001F600, a lone
// surrogate U+FFFD (as most JSON parsers do; counted in `lone`), a tab
// between tokens a blank. Only for text that starts as JSON does ({ or [):
// in YAML a backslash means something only inside "…", which needs a
// parser to know.
struct LoneSurrogates {
  int count = 0;
  int line = 0;  // the first one's place
  int column = 0;
};
std::string JsonForYamlCpp(const std::string& text, LoneSurrogates& lone) {
  std::string out;
  int line = 1;
  std::size_t line_start = 0;
  out.reserve(text.size());
  bool in_string = false;
  auto hex_at = [&](std::size_t at) -> int {  // the 4 hex digits after \u at `at`, or -1
    if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
    unsigned v = 0;
    for (std::size_t k = at + 2; k < at + 6; ++k) {
      const char c = text[k];
      if (!std::isxdigit(static_cast<unsigned char>(c))) return -1;
      v = v * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10));
    }
    return static_cast<int>(v);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    }
    if (!in_string) {
      if (c == '"') in_string = true;
      out += c == '\t' ? ' ' : c;
      continue;
    }
    if (c == '"') {
      in_string = false;
      out += c;
    } else if (c == '\\' && i + 1 < text.size()) {
      const int high = hex_at(i);
      if (high >= 0xD800 && high <= 0xDBFF) {
        const int low = hex_at(i + 6);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          const unsigned cp = 0x10000u + ((static_cast<unsigned>(high) - 0xD800u) << 10) + (static_cast<unsigned>(low) - 0xDC00u);
          char buf[16];
          std::snprintf(buf, sizeof buf, "\\U%08X", cp);
          out += buf;
          i += 11;
          continue;
        }
      }
      if (high >= 0xD800 && high <= 0xDFFF) {
        out += "\\uFFFD";
        if (lone.count++ == 0) {
          lone.line = line;
          lone.column = static_cast<int>(i - line_start) + 1;
        }
        i += 5;
        continue;
      }
      out += c;
      out += text[++i];  // the escaped character, whatever it is
    } else {
      out += c;
    }
  }
  return out;
}

// Counts the document's nodes as yaml-cpp's parser sees them, before a
// tree is built (yaml-cpp spends ~550 bytes a node): past `max` it stops
// at that place.
class NodeCounter : public YAML::EventHandler {
 public:
  struct TooMany {
    YAML::Mark mark;
  };
  struct Cancelled {};
  NodeCounter(std::size_t max, const std::atomic<bool>* cancel) : max_(max), cancel_(cancel) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { Count(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnMapEnd() override {}

 private:
  void Count(const YAML::Mark& mark) {
    if (++count_ > max_) throw TooMany{mark};
    if ((count_ & 1023) == 0 && cancel_ && cancel_->load()) throw Cancelled{};
  }
  std::size_t max_;
  const std::atomic<bool>* cancel_;
  std::size_t count_ = 0;
};

// A flow (JSON) text's nodes, bounded lexically (yaml-cpp's parser holds a
// flow text's tokens until its end: counting with it would cost what it
// guards): every node after the first follows a `{`, `[`, `:`, `,` or `?`.
// Counted inside strings too (quotes are no guide in YAML's flow style:
// '"' is a string), so it over-counts text: github.json's 5.7 MB, 456 000.
// Past `max`: the place, else npos.
struct TooManyAt {
  std::size_t at = std::string::npos;
  int line = 1;
  int column = 1;
};
TooManyAt CountFlowNodes(const std::string& text, std::size_t max) {
  TooManyAt out;
  std::size_t count = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++out.line;
      line_start = i + 1;
    } else if ((c == '{' || c == '[' || c == ':' || c == ',' || c == '?') && ++count > max) {
      out.at = i;
      out.column = static_cast<int>(i - line_start) + 1;
      return out;
    }
  }
  return out;
}

class Reader {
 public:
  Reader(std::string file, YAML::Node root, const ReadLimits& limits,
         std::chrono::steady_clock::time_point started)
      : file_(std::move(file)), root_(std::move(root)), limits_(limits),
        deadline_(started + limits.max_time) {}

  // A new node in the document's own yaml-cpp memory. yaml-cpp merges the
  // memory pools of two nodes when one is assigned into the other, copying
  // the whole pool's index: built schemas that share the document's values
  // (no copies) and each other must live in its pool. `arena_` is an
  // orphan sequence of that pool (added to the root map and taken out).
  YAML::Node Fresh(YAML::NodeType::value type) {
    if (!arena_.IsDefined()) {
      YAML::Node root = root_;
      YAML::Node slot = root[kArenaKey];
      slot.push_back(0);
      arena_.reset(slot);
      root.remove(kArenaKey);
    }
    YAML::Node node(type);
    arena_.push_back(node);  // merges node's one-node pool into the document's
    return node;
  }
  YAML::Node AnySchema() { return Fresh(YAML::NodeType::Map); }

  SourceMark MarkOf(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    if (m.is_null()) return SourceMark{file_, 0, 0};
    return SourceMark{file_, m.line + 1, m.column + 1};
  }
  std::string Place(const YAML::Node& node) const { return MarkOf(node).ToString(); }
  [[noreturn]] void Fail(const YAML::Node& node, const std::string& message) const {
    throw Failure{Status::InvalidConfig(message, MarkOf(node))};
  }
  void Warn(const YAML::Node& node, const std::string& message) {
    std::string text = Place(node) + ": " + message;
    if (!warned_.insert(text).second) return;
    if (warnings_.size() < limits_.max_warnings) warnings_.push_back(std::move(text));
    else ++dropped_warnings_;
  }
  void Note(std::string text) {
    if (!noted_.insert(text).second) return;
    if (notes_.size() < limits_.max_warnings) notes_.push_back(std::move(text));
    else ++dropped_notes_;
  }

  // One node visited: the whole reading's budget of nodes and time.
  void Tick(const YAML::Node& at) {
    if (++visits_ > limits_.max_visits)
      Fail(at, "reading stopped here: the document expands past " + std::to_string(limits_.max_visits) +
                   " nodes visited (YAML aliases of aliases, or $refs that branch?)");
    if ((visits_ & 255) == 0) {
      if (limits_.cancel && limits_.cancel->load()) throw Failure{Status(StatusCode::kTimeout, "interrupted while reading " + file_)};
      if (std::chrono::steady_clock::now() > deadline_)
        Fail(at, "reading stopped here: it took longer than " + std::to_string(limits_.max_time.count() / 1000.0).substr(0, 4) +
                     " s (YAML aliases of aliases, or $refs that branch?)");
    }
  }

  // The node a `$ref` names: any JSON pointer into this document, cached
  // by its text. A problem is a warning at the `$ref`, the node undefined.
  YAML::Node Target(const YAML::Node& ref, const std::string& text) {
    auto cached = targets_.find(text);
    if (cached == targets_.end()) {
      Resolved r = Point(text);
      cached = targets_.emplace(text, std::move(r)).first;
    }
    if (!cached->second.problem.empty()) {
      Warn(ref, cached->second.problem + "; read as any");
      return None();
    }
    return cached->second.node;
  }
  struct Resolved {
    YAML::Node node;
    std::string problem;
  };
  Resolved Point(const std::string& text) {
    Resolved out;
    if (text.empty() || text[0] != '#') {
      out.problem = "$ref '" + text +
                    "' points into another file, which idemproof init does not follow (bundle the document first, "
                    "e.g. `npx @redocly/cli bundle`)";
      return out;
    }
    YAML::Node at = root_;
    std::size_t from = 1;
    if (text.size() > 1 && text[1] != '/') {
      out.problem = "$ref '" + text + "' is not a JSON pointer (#/...)";
      return out;
    }
    while (from < text.size()) {
      const std::size_t start = from + 1;
      std::size_t end = text.find('/', start);
      if (end == std::string::npos) end = text.size();
      std::string name;
      for (std::size_t i = start; i < end; ++i) {
        const char c = text[i];
        if (c == '%' && i + 2 < end && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
          name += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));  // two hex digits: no throw
          i += 2;
        } else {
          name += c;
        }
      }
      std::string unescaped;  // JSON pointer escapes: ~1 is '/', ~0 is '~'
      for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '~' && i + 1 < name.size() && (name[i + 1] == '0' || name[i + 1] == '1')) {
          unescaped += name[i + 1] == '1' ? '/' : '~';
          ++i;
        } else {
          unescaped += name[i];
        }
      }
      YAML::Node next = None();
      if (at.IsMap()) {
        next.reset(Child(at, unescaped));
      } else if (at.IsSequence() && !unescaped.empty() && unescaped.size() < 10 &&
                 std::all_of(unescaped.begin(), unescaped.end(), ::isdigit)) {
        const std::size_t index = std::strtoul(unescaped.c_str(), nullptr, 10);
        const YAML::Node& seq = at;
        if (index < seq.size()) next.reset(seq[index]);
      }
      if (!next.IsDefined()) {
        out.problem = "$ref '" + text + "' names nothing in this document (no '" + unescaped + "')";
        return out;
      }
      at.reset(next);
      from = end;
    }
    out.node = at;
    return out;
  }

  // `node` with its `$ref` chain followed. Undefined (after a warning) when
  // a `$ref` names nothing, leaves the file or is a cycle.
  YAML::Node Resolve(const YAML::Node& node) {
    if (!node.IsMap()) return node;
    YAML::Node at = node;
    std::vector<std::string> chain;
    while (true) {
      const YAML::Node ref = Child(at, "$ref");
      if (!ref.IsDefined()) return at;
      Tick(ref);
      if (!ref.IsScalar()) {
        Warn(ref, "$ref must be a string; read as any");
        return None();
      }
      const std::string text = ref.Scalar();
      if (std::find(chain.begin(), chain.end(), text) != chain.end() || chain.size() > static_cast<std::size_t>(kMaxRefChain)) {
        Warn(ref, "$ref '" + text + "' is a cycle of $refs naming only each other; read as any");
        return None();
      }
      chain.push_back(text);
      const YAML::Node target = Target(ref, text);
      if (!target.IsDefined()) return target;
      at.reset(target);
    }
  }

  // An example-like value the writer will walk (an example, a default, an
  // enum, x-idempotency): at most max_value_nodes nodes with its aliases
  // expanded, and its plain numbers within a double's range (the writer's
  // std::stod would throw). Else an error at its place.
  // `numbers`: check them (for values the writer turns into JSON); else the
  // size only (any other value copied into a schema).
  void CheckValue(const YAML::Node& value, bool numbers = true) {
    if (!value.IsDefined()) return;
    if (value.IsScalar()) {
      if (numbers) CheckNumber(value);
      return;
    }
    const YAML::Mark m = value.Mark();
    if (!m.is_null() && !checked_.insert(m.pos * 2 + (numbers ? 1 : 0)).second) return;  // the same node, through an alias
    std::size_t count = 0;
    Walk(value, value, 0, count, numbers);
  }
  void Walk(const YAML::Node& node, const YAML::Node& top, int depth, std::size_t& count, bool numbers) {
    Tick(node);
    if (++count > limits_.max_value_nodes)
      Fail(top, "this value expands past " + std::to_string(limits_.max_value_nodes) +
                    " nodes (YAML aliases of aliases?): idemproof init does not read it");
    if (depth > kMaxValueDepth) Fail(node, "this value nests deeper than " + std::to_string(kMaxValueDepth));
    if (node.IsScalar()) {
      if (numbers) CheckNumber(node);
    } else if (node.IsSequence()) {
      for (const auto& item : node) Walk(item, top, depth + 1, count, numbers);
    } else if (node.IsMap()) {
      for (const auto& kv : node) Walk(kv.second, top, depth + 1, count, numbers);
    }
  }
  void CheckNumber(const YAML::Node& scalar) {
    if (scalar.Tag() == "!") return;  // quoted: text
    const std::string& s = scalar.Scalar();
    if (!LooksNumeric(s)) return;
    errno = 0;
    const double v = std::strtod(s.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(v))
      Fail(scalar, "the number " + (s.size() > 40 ? s.substr(0, 40) + "…" : s) +
                       " is out of a double's range (quote it if it is text)");
  }

  // A schema with `$ref`s resolved, `allOf` merged and `oneOf`/`anyOf`'s
  // alternatives' properties merged into it, its properties and items too:
  // a fresh tree (the document is not changed) of at most `max_nodes`
  // nodes and max_schema_depth levels, a `$ref` met again on its own path
  // cut (read as any), each cut a warning. Memoised by the schema's place.
  YAML::Node Schema(const YAML::Node& raw, std::size_t max_nodes, int max_depth) {
    const YAML::Node node = Resolve(raw);
    if (!node.IsDefined()) return AnySchema();
    if (!node.IsMap()) {
      CheckValue(node, false);  // `true` / `false` (3.1) or junk: its size bounded
      return node;
    }
    if (IsLeafSchema(node)) return node;  // nothing to resolve: the document's own node, no copy
    const YAML::Mark m = node.Mark();
    const std::string key = std::to_string(m.pos) + "/" + std::to_string(max_nodes) + "/" + std::to_string(max_depth);
    if (!m.is_null())
      if (auto memo = schemas_.find(key); memo != schemas_.end()) return memo->second;
    Build build;
    build.max_nodes = max_nodes;
    build.max_depth = max_depth;
    YAML::Node out = BuildSchema(node, 0, build);
    // Routine on a big document: counted, one warning in all (at the first).
    if (build.cut_size && cut_size_++ == 0) first_cut_size_ = Place(node);
    // An answer's schema is built only as deep as the writer looks: its
    // cut there is by design, not a warning.
    if (build.cut_depth && max_depth >= limits_.max_schema_depth && cut_depth_++ == 0)
      first_cut_depth_ = Place(node);
    if (!m.is_null()) schemas_.emplace(key, out);
    return out;
  }

  // A schema with no subschema (`{type: string, example: x}`): handed out
  // as it is, its values checked as a built one's are.
  bool IsLeafSchema(const YAML::Node& node) {
    static const std::unordered_set<std::string> kNested = {
        "properties", "items", "additionalProperties", "allOf", "oneOf", "anyOf", "not", "$ref", "<<"};
    for (const auto& kv : node)
      if (!kv.first.IsScalar() || kNested.count(kv.first.Scalar())) return false;
    for (const auto& kv : node) CheckValue(kv.second, IsValueKey(kv.first.Scalar()));
    return true;
  }
  // Schema keys whose values the writer turns into JSON.
  static bool IsValueKey(const std::string& key) {
    return key == "example" || key == "examples" || key == "default" || key == "enum" || key == "const";
  }

  struct Build {
    std::size_t max_nodes = 0;
    int max_depth = 0;
    std::size_t nodes = 0;
    bool cut_size = false;
    bool cut_depth = false;
    std::vector<std::size_t> path;  // places of the schemas being built, outermost first
  };

  YAML::Node ChildSchema(const YAML::Node& raw, int depth, Build& b) {
    const YAML::Node node = Resolve(raw);
    if (!node.IsDefined()) return AnySchema();
    if (!node.IsMap()) {  // `true` / `false` (3.1) or junk: its size bounded
      CheckValue(node, false);
      return node;
    }
    return BuildSchema(node, depth, b);
  }

  YAML::Node BuildSchema(const YAML::Node& node, int depth, Build& b) {
    Tick(node);
    if (++b.nodes > b.max_nodes) {
      b.cut_size = true;
      return AnySchema();
    }
    if (depth > b.max_depth) {
      b.cut_depth = true;
      return AnySchema();
    }
    const YAML::Mark m = node.Mark();
    if (!m.is_null()) {
      if (std::find(b.path.begin(), b.path.end(), m.pos) != b.path.end()) {
        if (recursive_.insert(m.pos).second)
          Warn(node, "this schema contains itself (a recursive $ref or YAML alias): cut where it recurs, read as any there");
        return AnySchema();
      }
      b.path.push_back(m.pos);
    }
    YAML::Node out = Fresh(YAML::NodeType::Map);
    std::vector<std::pair<std::string, YAML::Node>> properties;
    std::unordered_map<std::string, std::size_t> property_at;
    bool has_properties = false;  // `properties: {}` stays (an object with no members)
    std::vector<std::string> required;
    std::unordered_set<std::string> required_seen;

    // `part`'s keys into `out`. `built`: part is a built schema (its values
    // are fresh already). `wins`: its keys replace those already there
    // (allOf parts and the schema itself; an alternative fills in only).
    auto take = [&](const YAML::Node& part, bool built, bool wins, bool properties_only) {
      for (const auto& kv : part) {
        const std::string key = ScalarOr(kv.first);
        if (key == "properties" && kv.second.IsMap()) {
          has_properties = true;
          std::unordered_set<std::string> in_part;  // a duplicate key: the first is read
          for (const auto& p : kv.second) {
            Tick(p.second);
            const std::string name = ScalarOr(p.first);
            if (!in_part.insert(name).second) continue;
            auto at = property_at.find(name);
            if (at != property_at.end() && !wins) continue;
            YAML::Node value = built ? p.second : ChildSchema(p.second, depth + 1, b);
            if (at != property_at.end()) properties[at->second].second.reset(value);
            else {
              property_at.emplace(name, properties.size());
              properties.emplace_back(name, value);
            }
          }
        } else if (properties_only) {
          continue;
        } else if (key == "required" && kv.second.IsSequence()) {
          for (const auto& r : kv.second) {
            Tick(r);
            if (r.IsScalar() && required_seen.insert(r.Scalar()).second) required.push_back(r.Scalar());
          }
        } else if (key == "allOf" || key == "oneOf" || key == "anyOf" || key == "$ref" || key == "not" ||
                   key == "properties" || key == "<<") {
          continue;
        } else if (!wins && Child(out, key).IsDefined()) {
          continue;
        } else if (built) {
          out[key] = kv.second;
        } else if ((key == "items" || key == "additionalProperties") && kv.second.IsMap()) {
          out[key] = ChildSchema(kv.second, depth + 1, b);
        } else {
          // What the writer turns into JSON gets its numbers checked; anything else its size only.
          CheckValue(kv.second, IsValueKey(key));
          out[key] = kv.second;  // shared: the same pool, nothing copied
        }
      }
    };

    // A YAML merge key (`<<: *base`) reads as an allOf part.
    const YAML::Node merge = Child(node, "<<");
    std::vector<YAML::Node> parts;
    if (merge.IsMap()) parts.push_back(merge);
    if (merge.IsSequence())
      for (const auto& p : merge) parts.push_back(p);
    if (const YAML::Node all = Child(node, "allOf"); all.IsSequence())
      for (const auto& p : all) parts.push_back(p);
    for (const auto& part : parts) {
      const YAML::Node built = ChildSchema(part, depth + 1, b);
      if (built.IsMap()) take(built, true, true, false);
    }
    for (const char* alt : {"oneOf", "anyOf"}) {
      const YAML::Node alternatives = Child(node, alt);
      if (!alternatives.IsSequence() || alternatives.size() == 0) continue;
      Note(std::string(alt) + " at " + Place(alternatives) + ": " + std::to_string(alternatives.size()) +
           " alternative(s); their properties merged, the rest (required, type) from the first");
      bool first = true;
      for (const auto& a : alternatives) {
        const YAML::Node built = ChildSchema(a, depth + 1, b);
        if (built.IsMap()) take(built, true, false, !first);
        first = false;
      }
    }
    take(node, false, true, false);
    if (has_properties) {
      YAML::Node props = Fresh(YAML::NodeType::Map);
      for (auto& [name, value] : properties) props.force_insert(name, value);
      out["properties"] = props;
    }
    if (!required.empty()) {
      YAML::Node r = Fresh(YAML::NodeType::Sequence);
      for (const auto& name : required) r.push_back(name);
      out["required"] = r;
    }
    if (!m.is_null()) b.path.pop_back();
    return out;
  }

  // The JSON media type's entry of a `content:` map (application/json, or
  // any +json / json type), or an undefined node.
  YAML::Node JsonMedia(const YAML::Node& content) {
    if (!content.IsMap()) return None();
    for (const auto& kv : content) {
      const std::string type = Lower(ScalarOr(kv.first));
      if (type.find("json") != std::string::npos) return Resolve(kv.second);
    }
    return None();
  }
  // The form media type's entry (application/x-www-form-urlencoded, else
  // multipart/form-data), or an undefined node.
  YAML::Node FormMedia(const YAML::Node& content) {
    if (!content.IsMap()) return None();
    for (const char* type : {"application/x-www-form-urlencoded", "multipart/form-data"})
      for (const auto& kv : content)
        if (Lower(ScalarOr(kv.first)).rfind(type, 0) == 0) return Resolve(kv.second);
    return None();
  }

  // A parameter, or nothing (after a warning) when its `$ref` leads nowhere
  // or it has no name / in.
  std::optional<Parameter> ReadParameter(const YAML::Node& raw) {
    Tick(raw);
    const YAML::Node p = Resolve(raw);
    if (!p.IsDefined()) return std::nullopt;
    if (!p.IsMap() || !Child(p, "name").IsScalar() || !Child(p, "in").IsScalar()) {
      Warn(raw, "a parameter needs `name` and `in`; left out");
      return std::nullopt;
    }
    Parameter out;
    out.name = Child(p, "name").Scalar();
    out.in = Child(p, "in").Scalar();
    out.description = ScalarOr(Child(p, "description"));
    out.required = ScalarOr(Child(p, "required")) == "true";
    YAML::Node schema = Child(p, "schema");
    if (!schema.IsDefined()) {  // `content: {media: {schema}}` instead of `schema`
      const YAML::Node content = Child(p, "content");
      if (content.IsMap() && content.size() > 0) schema.reset(Child(Resolve(content.begin()->second), "schema"));
    }
    if (schema.IsDefined()) out.schema.reset(Schema(schema, limits_.max_schema_nodes, limits_.max_schema_depth));
    const YAML::Node example = Child(p, "example");
    if (example.IsDefined()) {
      CheckValue(example);
      out.example.reset(example);
    } else if (const YAML::Node from = Child(out.schema, "example"); from.IsDefined()) {
      out.example.reset(from);
    }
    return out;
  }

  static std::string ParameterKey(const std::string& in, const std::string& name) {
    return in + "\n" + (in == "header" ? Lower(name) : name);
  }

  void AddParameter(Operation& op, Parameter p) {
    const std::string key = ParameterKey(p.in, p.name);
    auto at = op.parameter_index.find(key);
    if (at != op.parameter_index.end()) {
      op.parameters[at->second] = std::move(p);
    } else {
      op.parameter_index.emplace(key, op.parameters.size());
      op.parameters.push_back(std::move(p));
    }
  }

  void ReadBody(const YAML::Node& raw, Operation& out, const std::string& what) {
    const YAML::Node body = Resolve(raw);
    if (!body.IsMap()) return;
    const YAML::Node content = Child(body, "content");
    YAML::Node media = JsonMedia(content);
    if (media.IsMap()) {
      out.request_media = "json";
    } else {
      media.reset(FormMedia(content));
      if (media.IsMap()) out.request_media = "form";
    }
    if (!media.IsMap()) {
      if (content.IsMap() && content.size() > 0)
        Note(what + ": the request body has no JSON or form media type; not read");
      return;
    }
    if (const YAML::Node schema = Child(media, "schema"); schema.IsDefined())
      out.request_schema.reset(Schema(schema, limits_.max_schema_nodes, limits_.max_schema_depth));
    if (const YAML::Node example = Child(media, "example"); example.IsDefined()) {
      CheckValue(example);
      out.request_examples.push_back(example);
    }
    if (const YAML::Node examples = Child(media, "examples"); examples.IsMap()) {
      for (const auto& kv : examples) {
        Tick(kv.second);
        const YAML::Node ex = Resolve(kv.second);
        if (const YAML::Node value = Child(ex, "value"); value.IsDefined()) {
          CheckValue(value);
          out.request_examples.push_back(value);
        } else if (Child(ex, "externalValue").IsDefined()) {
          Note(what + ": example '" + ScalarOr(kv.first) + "' is an externalValue, not read");
        }
      }
    }
    // The schema's own (already checked when the schema was built).
    if (out.request_examples.empty())
      if (const YAML::Node example = Child(out.request_schema, "example"); example.IsDefined())
        out.request_examples.push_back(example);
    if (out.request_examples.empty())
      if (const YAML::Node examples = Child(out.request_schema, "examples"); examples.IsSequence())
        for (const auto& ex : examples) out.request_examples.push_back(ex);
  }

  Operation ReadOperation(const std::string& method, const std::string& path, const YAML::Node& raw,
                          const std::vector<Parameter>& shared) {
    Operation out;
    out.method = method;
    std::transform(out.method.begin(), out.method.end(), out.method.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out.path = path;
    const std::string what = out.method + " " + path;
    const YAML::Node op = Resolve(raw);
    out.line = MarkOf(raw).line;
    if (!op.IsMap()) {
      if (op.IsDefined()) Warn(raw, what + ": an operation must be a map; read as one without parameters or body");
      for (const auto& p : shared) AddParameter(out, p);
      return out;
    }
    out.operation_id = ScalarOr(Child(op, "operationId"));
    if (out.operation_id.size() > kMaxOperationId) {  // no name: the writer names it from its method and path
      Warn(Child(op, "operationId"), what + ": operationId is " + std::to_string(out.operation_id.size()) +
                                         " bytes long, more than the " + std::to_string(kMaxOperationId) +
                                         " of a name; not used");
      out.operation_id.clear();
    }
    out.summary = ScalarOr(Child(op, "summary"));
    out.description = ScalarOr(Child(op, "description"));
    if (const YAML::Node tags = Child(op, "tags"); tags.IsSequence())
      for (const auto& t : tags)
        if (t.IsScalar()) out.tags.push_back(t.Scalar());
    const YAML::Node params = Child(op, "parameters");
    // Sized once: grown by doubling, 100 000 parameters held 1.5 copies at the move.
    const std::size_t most = shared.size() + (params.IsSequence() ? params.size() : 0);
    out.parameters.reserve(most);
    out.parameter_index.reserve(most);
    for (const auto& p : shared) AddParameter(out, p);
    if (params.IsSequence())
      for (const auto& raw_param : params)
        if (auto p = ReadParameter(raw_param)) AddParameter(out, std::move(*p));
    if (const YAML::Node body = Child(op, "requestBody"); body.IsDefined()) ReadBody(body, out, what);
    if (const YAML::Node responses = Child(op, "responses"); responses.IsMap()) {
      std::unordered_set<std::string> seen_codes;  // a duplicate key: the first is read
      for (const auto& kv : responses) {
        Tick(kv.second);
        const std::string code = ScalarOr(kv.first);
        if (!seen_codes.insert(code).second) continue;
        Response r;
        if (code == "default") {
          r.status = 0;
        } else if (code.size() == 3 && std::all_of(code.begin(), code.end(), ::isdigit)) {
          r.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
        } else {
          Note(what + ": response '" + code + "' (a range) not read");
          continue;
        }
        const YAML::Node answer = Resolve(kv.second);
        if (answer.IsMap()) {
          // The schema of a 2xx answer only: the writer reads the success's (records, captures).
          const YAML::Node media = r.status >= 200 && r.status < 300 ? JsonMedia(Child(answer, "content")) : None();
          if (const YAML::Node schema = Child(media, "schema"); schema.IsDefined())
            r.schema.reset(Schema(schema, limits_.max_response_schema_nodes, limits_.max_response_schema_depth));
          if (const YAML::Node headers = Child(answer, "headers"); headers.IsMap()) {
            for (const auto& h : headers) {
              Tick(h.second);
              const YAML::Node header = Resolve(h.second);
              r.headers[ScalarOr(h.first)] = ScalarOr(Child(header, "required")) == "true";
            }
          }
        }
        out.responses.push_back(std::move(r));
      }
    }
    if (const YAML::Node x = Child(op, "x-idempotency"); x.IsDefined()) {
      CheckValue(x);
      out.idempotency.reset(x);
    }
    return out;
  }

  // Duplicate keys: yaml-cpp keeps both and finds the first; said as a
  // warning. One walk over the document's nodes (each once, aliases not
  // expanded).
  void WarnDuplicateKeys() {
    std::unordered_set<std::size_t> seen;
    std::vector<YAML::Node> stack{root_};
    while (!stack.empty()) {
      YAML::Node node = stack.back();
      stack.pop_back();
      if (!node.IsMap() && !node.IsSequence()) continue;
      const YAML::Mark m = node.Mark();
      if (!m.is_null() && !seen.insert(m.pos).second) continue;
      Tick(node);
      if (node.IsSequence()) {
        for (const auto& item : node) stack.push_back(item);
        continue;
      }
      // Small maps (nearly all) compared pairwise, big ones through a hash.
      std::vector<std::pair<std::string, YAML::Node>> keys;
      std::unordered_map<std::string, std::size_t> index;
      const bool big = node.size() > 16;
      for (const auto& kv : node) {
        stack.push_back(kv.second);
        if (!kv.first.IsScalar()) continue;
        const std::string& name = kv.first.Scalar();
        std::size_t first = keys.size();
        if (big) {
          first = index.emplace(name, keys.size()).first->second;
        } else {
          for (std::size_t k = 0; k < keys.size(); ++k)
            if (keys[k].first == name) first = k;
        }
        if (first == keys.size()) keys.emplace_back(name, kv.first);
        else
          Warn(kv.first, "duplicate key '" + name + "' (first at " + Place(keys[first].second) +
                             "): the first is read, this one is not");
      }
    }
  }

  OpenApiDocument Read() {
    if (!root_.IsMap()) Fail(root_, "not an OpenAPI document: the top level must be a map");
    OpenApiDocument doc;
    doc.file = file_;
    if (const YAML::Node swagger = Child(root_, "swagger"); swagger.IsDefined())
      Fail(swagger,
           "Swagger/OpenAPI 2.0 is not read: idemproof init reads OpenAPI 3.0 and 3.1. Convert the document first: "
           "`npx swagger2openapi " + file_ + " -o openapi.yaml`, or the Swagger Editor's Edit > Convert to OpenAPI 3");
    const YAML::Node version = Child(root_, "openapi");
    if (!version.IsScalar()) Fail(root_, "not an OpenAPI document: no `openapi:` version (3.0.x or 3.1.x)");
    doc.version = version.Scalar();
    if (doc.version.rfind("3.0", 0) != 0 && doc.version.rfind("3.1", 0) != 0)
      Fail(version, "OpenAPI " + doc.version + " is not read: idemproof init reads 3.0.x and 3.1.x");
    WarnDuplicateKeys();
    doc.title = ScalarOr(Child(Child(root_, "info"), "title"));
    if (const YAML::Node servers = Child(root_, "servers"); servers.IsSequence())
      for (const auto& s : servers)
        if (const YAML::Node url = Child(s, "url"); url.IsScalar()) doc.servers.push_back(url.Scalar());
    if (const YAML::Node x = Child(root_, "x-idempotency"); x.IsDefined()) {
      CheckValue(x);
      doc.idempotency.reset(x);
    }
    if (const YAML::Node schemes = Child(Child(root_, "components"), "securitySchemes"); schemes.IsMap())
      for (const auto& kv : schemes) {
        const YAML::Node scheme = Resolve(kv.second);
        if (ScalarOr(Child(scheme, "type")) == "apiKey" && ScalarOr(Child(scheme, "in")) == "header" &&
            Child(scheme, "name").IsScalar())
          doc.security_headers.push_back(Lower(Child(scheme, "name").Scalar()));
      }
    const YAML::Node paths = Child(root_, "paths");
    if (!paths.IsMap() || paths.size() == 0)
      Fail(paths.IsDefined() ? paths : root_, "the document has no `paths:`: nothing to describe");
    std::unordered_set<std::string> seen_paths;  // a duplicate key: the first is read
    for (const auto& kv : paths) {
      Tick(kv.second);
      const std::string path = ScalarOr(kv.first);
      if (path.rfind("x-", 0) == 0 || !seen_paths.insert(path).second) continue;  // an extension, a duplicate
      if (path.empty() || path[0] != '/') Fail(kv.first, "a path must start with '/': '" + path + "'");
      const YAML::Node item = Resolve(kv.second);
      if (!item.IsMap()) {
        if (item.IsDefined()) Warn(kv.second, "path '" + path + "' must be a map of operations; left out");
        continue;
      }
      std::vector<Parameter> shared;
      if (const YAML::Node params = Child(item, "parameters"); params.IsSequence())
        for (const auto& raw : params)
          if (auto p = ReadParameter(raw)) shared.push_back(std::move(*p));
      for (const char* method : kMethods)
        if (const YAML::Node op = Child(item, method); op.IsDefined())
          doc.operations.push_back(ReadOperation(method, path, op, shared));
      for (const auto& m : item) {
        const std::string name = ScalarOr(m.first);
        if (name == "head" || name == "options" || name == "trace") Note(path + ": " + name + " not read");
      }
    }
    if (cut_size_ > 0)
      warnings_.insert(warnings_.begin(), first_cut_size_ + ": " + std::to_string(cut_size_) +
                                              " schema(s), the first here, expand past their bound (" +
                                              std::to_string(limits_.max_schema_nodes) + " nodes, a 2xx answer's " +
                                              std::to_string(limits_.max_response_schema_nodes) +
                                              "; large, branching $refs, or YAML aliases): read down to there, the rest as any");
    if (cut_depth_ > 0)
      warnings_.insert(warnings_.begin(), first_cut_depth_ + ": " + std::to_string(cut_depth_) +
                                              " schema(s), the first here, nest deeper than " +
                                              std::to_string(limits_.max_schema_depth) +
                                              " levels: read down to there, the rest as any");
    doc.notes = std::move(notes_);
    if (dropped_notes_ > 0) doc.notes.push_back(std::to_string(dropped_notes_) + " more notes like these");
    doc.warnings = std::move(warnings_);
    if (dropped_warnings_ > 0)
      doc.warnings.push_back(file_ + ": " + std::to_string(dropped_warnings_) + " more warnings like these");
    return doc;
  }

 private:
  static constexpr const char* kArenaKey = "\x01idemproof-init-arena";
  std::string file_;
  YAML::Node root_;
  YAML::Node arena_{YAML::NodeType::Undefined};
  ReadLimits limits_;
  std::chrono::steady_clock::time_point deadline_;
  std::size_t visits_ = 0;
  std::unordered_map<std::string, Resolved> targets_;
  std::unordered_map<std::string, YAML::Node> schemas_;
  std::unordered_set<std::size_t> checked_;
  std::unordered_set<std::size_t> recursive_;
  std::vector<std::string> warnings_, notes_;
  std::unordered_set<std::string> warned_, noted_;
  std::size_t dropped_warnings_ = 0, dropped_notes_ = 0;
  std::size_t cut_size_ = 0, cut_depth_ = 0;
  std::string first_cut_size_, first_cut_depth_;
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
  if (!parameter_index.empty()) {
    auto at = parameter_index.find(in + "\n" + (in == "header" ? Lower(name) : name));
    return at == parameter_index.end() || at->second >= parameters.size() ? nullptr : &parameters[at->second];
  }
  for (const auto& p : parameters) {
    if (p.in != in) continue;
    // Header names compare case-insensitively.
    if (in == "header" ? Lower(p.name) == Lower(name) : p.name == name) return &p;
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

namespace {

// A read-only stream over a string, without a copy of it (YAML::Load of a
// string copies it into a stringstream).
class StringViewBuf : public std::streambuf {
 public:
  explicit StringViewBuf(const std::string& text) {
    char* begin = const_cast<char*>(text.data());  // only read: the get area
    setg(begin, begin, begin + text.size());
  }
};

Status TooBig(std::size_t size, const std::string& file, const ReadLimits& limits) {
  return Status::InvalidConfig("the document is " + std::to_string(size) + " bytes, more than the " +
                                   SizeText(limits.max_bytes) + " idemproof init reads",
                               SourceMark{file, 0, 0});
}

// The reading of `text`, which it owns: every copy of the text is released
// before the reader walks the tree (peak memory: the tree and the reader's
// results, not the text besides; issue 43).
Result<OpenApiDocument> ParseOwnedText(std::string text, const std::string& file, const ReadLimits& limits) {
  const auto started = std::chrono::steady_clock::now();
  if (text.size() > limits.max_bytes) return TooBig(text.size(), file, limits);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // a UTF-8 byte order mark
  if (const BadByte bad = FirstBadUtf8(text); bad.at != std::string::npos) {
    const unsigned byte = static_cast<unsigned char>(text[bad.at]);
    return Status::InvalidConfig(byte == 0 ? std::string("a NUL byte: the document is not text")
                                           : "byte 0x" + Hex4(byte).substr(2) +
                                                 " is not UTF-8: the document must be UTF-8 (convert it, e.g. "
                                                 "`iconv -f latin1 -t utf-8`)",
                                 SourceMark{file, bad.line, bad.column});
  }
  LoneSurrogates lone_surrogates;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && (text[first] == '{' || text[first] == '[');
  auto too_many = [&](int line, int column) {
    return Status::InvalidConfig("the document has more than " + std::to_string(limits.max_document_nodes) +
                                     " nodes (keys and values); idemproof init reads at most that many",
                                 SourceMark{file, line, column});
  };
  if (json) {
    if (const TooManyAt past = CountFlowNodes(text, limits.max_document_nodes); past.at != std::string::npos)
      return too_many(past.line, past.column);
    text = JsonForYamlCpp(text, lone_surrogates);
  }
  YAML::Node root;
  try {
    // Block YAML: yaml-cpp's parser streams it. A node takes a byte at least.
    if (!json && text.size() > limits.max_document_nodes) {
      StringViewBuf counted(text);
      std::istream in(&counted);
      YAML::Parser parser(in);
      NodeCounter counter(limits.max_document_nodes, limits.cancel);
      parser.HandleNextDocument(counter);
    }
    StringViewBuf buffer(text);
    std::istream in(&buffer);
    root = YAML::Load(in);
  } catch (const NodeCounter::TooMany& e) {
    return too_many(e.mark.line + 1, e.mark.column + 1);
  } catch (const NodeCounter::Cancelled&) {
    return Status(StatusCode::kTimeout, "interrupted while reading " + file);
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig("not YAML or JSON: " + e.msg, SourceMark{file, e.mark.line + 1, e.mark.column + 1});
  }
  std::string().swap(text);  // the tree holds what is read: the text goes
  try {
    OpenApiDocument doc = Reader(file, root, limits, started).Read();
    if (lone_surrogates.count > 0)
      doc.warnings.push_back(SourceMark{file, lone_surrogates.line, lone_surrogates.column}.ToString() + ": " +
                             std::to_string(lone_surrogates.count) +
                             " lone UTF-16 surrogate escape(s) (\\uD800-\\uDFFF), the first here, read as U+FFFD");
    return doc;
  } catch (const Failure& f) {
    return f.status;
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig(e.msg, SourceMark{file, e.mark.line + 1, e.mark.column + 1});
  } catch (const std::exception& e) {  // out of memory, or a bug: an error, never an abort
    return Status::InvalidConfig(std::string("could not read the document: ") + e.what(), SourceMark{file, 0, 0});
  }
}

}  // namespace

Result<OpenApiDocument> ParseOpenApi(const std::string& text, const std::string& file, const ReadLimits& limits) {
  if (text.size() > limits.max_bytes) return TooBig(text.size(), file, limits);  // refused without a copy
  return ParseOwnedText(text, file, limits);
}

Result<OpenApiDocument> LoadOpenApi(const std::string& path, const ReadLimits& limits) {
  const Status missing = Status::NotFound(path + ": cannot read the OpenAPI document (no such file, or not readable)");
  auto not_regular = [&](const struct stat& st) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return Status::InvalidConfig(std::string("this is ") + kind +
                                     ", not a regular file: idemproof init reads the document from a file "
                                     "(save a piped one first)",
                                 SourceMark{path, 0, 0});
  };
  auto too_big = [&](std::size_t size) { return TooBig(size, path, limits); };
  // Looked at before it is opened: opening a FIFO or a device may block or act.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return missing;
  if (!S_ISREG(st.st_mode)) return not_regular(st);
  if (static_cast<std::size_t>(st.st_size) > limits.max_bytes) return too_big(static_cast<std::size_t>(st.st_size));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return missing;
  // The file may have been swapped between the stat and the open.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const Status s = not_regular(st);
    ::close(fd);
    return s;
  }
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::IoError(path + ": reading failed: " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > limits.max_bytes) {  // it grew since the stat
      ::close(fd);
      return too_big(text.size());
    }
  }
  ::close(fd);
  return ParseOwnedText(std::move(text), path, limits);
}

}  // namespace idemproof::init
