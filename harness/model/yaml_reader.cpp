#include "model/yaml_reader.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include <yaml-cpp/eventhandler.h>

#include "model/console_text.h"
#include "model/template.h"

namespace idemproof::yaml {
namespace {

std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string NodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    default: return "an undefined node";
  }
}

SourceMark MarkAt(const std::string& file, const YAML::Mark& mk) {
  SourceMark m;
  m.file = file;
  if (!mk.is_null()) {
    m.line = mk.line + 1;
    m.column = mk.column + 1;
  }
  return m;
}

// The line:column (1-based, in bytes) of offset `at` in `text`.
SourceMark MarkOfOffset(const std::string& file, const std::string& text, std::size_t at) {
  SourceMark m{file, 1, 1};
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++m.line;
      m.column = 1;
    } else {
      ++m.column;
    }
  }
  return m;
}

// Walks the parser's events before any node is built: a second document, a
// key given twice in one map, and aliases that would expand past
// kMaxExpandedNodes (a "billion laughs" bomb: yaml-cpp shares aliased nodes,
// but every reader that walks them -- JSON bodies, templates -- expands them).
class StructureCheck : public YAML::EventHandler {
 public:
  explicit StructureCheck(std::string file) : file_(std::move(file)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor, "~", false); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchor_sizes_.find(anchor);
    Node(mark, false, "");
    Add(mark, it == anchor_sizes_.end() ? 1 : it->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf(mark, anchor, value, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, true);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    bool map = false;
    bool expecting_key = true;
    YAML::anchor_t anchor = 0;
    std::uint64_t start = 0;  // expanded_ when it opened
    std::set<std::string> keys;
  };

  [[noreturn]] void FailAt(const YAML::Mark& mark, const std::string& message) const {
    throw ConfigError{Status::InvalidConfig(message, MarkAt(file_, mark))};
  }

  // A node begins inside the innermost container: in a map it is a key or a value.
  void Node(const YAML::Mark& mark, bool scalar, const std::string& value) {
    if (stack_.empty() || !stack_.back().map) return;
    Frame& parent = stack_.back();
    const bool key = parent.expecting_key;
    parent.expecting_key = !parent.expecting_key;
    if (key && scalar && !parent.keys.insert(value).second)
      FailAt(mark, "duplicate key '" + value + "' in one map (YAML keys must be unique)");
  }

  void Add(const YAML::Mark& mark, std::uint64_t n) {
    expanded_ += n;
    if (expanded_ > kMaxExpandedNodes)
      FailAt(mark, "the document expands to more than " + std::to_string(kMaxExpandedNodes) +
                       " nodes (aliases of aliases?); refused");
  }

  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& value, bool scalar) {
    Node(mark, scalar, value);
    Add(mark, 1);
    if (anchor != 0) anchor_sizes_[anchor] = 1;
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    Node(mark, false, "");
    const std::uint64_t start = expanded_;
    Add(mark, 1);
    Frame f;
    f.map = map;
    f.anchor = anchor;
    f.start = start;
    stack_.push_back(std::move(f));
  }

  void Close() {
    if (stack_.empty()) return;
    const Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.anchor != 0) anchor_sizes_[f.anchor] = expanded_ - f.start;
  }

  std::string file_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::uint64_t> anchor_sizes_;
  std::uint64_t expanded_ = 0;
};

// A second document is an error at its start (the loaders read one).
class DocumentStart : public YAML::EventHandler {
 public:
  YAML::Mark mark = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& m) override {
    if (mark.is_null()) mark = m;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { First(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { First(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { First(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    First(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    First(m);
  }
  void OnMapEnd() override {}

 private:
  void First(const YAML::Mark& m) {
    if (mark.is_null()) mark = m;
  }
};

}  // namespace

Status CheckYamlText(const std::string& text, const std::string& file) {
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0') {
      return Status::InvalidConfig("a NUL byte: this is a binary file (or UTF-16), not YAML text",
                                   MarkOfOffset(file, text, i));
    }
    const std::size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return Status::InvalidConfig("invalid UTF-8 byte sequence", MarkOfOffset(file, text, i));
    i += n;
  }
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    StructureCheck check(file);
    if (!parser.HandleNextDocument(check)) return Status::Ok();
    DocumentStart second;
    if (parser.HandleNextDocument(second)) {
      return Status::InvalidConfig("a second YAML document ('---'): the file must hold exactly one",
                                   MarkAt(file, second.mark));
    }
  } catch (const ConfigError& e) {
    return e.status;
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig("YAML syntax error: " + e.msg, MarkAt(file, e.mark));
  }
  return Status::Ok();
}

std::string ClosestWord(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    std::size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= limit ? best : "";
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string c = ClosestWord(word, candidates);
  return c.empty() ? "" : " (did you mean '" + c + "'?)";
}

SourceMark Reader::MarkOf(const YAML::Node& node) const {
  SourceMark m;
  m.file = file_;
  if (node.IsDefined()) {
    YAML::Mark mk = node.Mark();
    if (!mk.is_null()) {
      m.line = mk.line + 1;
      m.column = mk.column + 1;
    }
  }
  return m;
}

void Reader::Fail(const YAML::Node& node, const std::string& message) const {
  FailAt(MarkOf(node), message);
}

void Reader::FailAt(const SourceMark& mark, const std::string& message) const {
  throw ConfigError{Status::InvalidConfig(message, mark)};
}

YAML::Node Reader::Load(const std::string& text) const {
  if (Status st = CheckYamlText(text, file_); !st.ok()) throw ConfigError{st};
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourceMark m;
    m.file = file_;
    if (!e.mark.is_null()) {
      m.line = e.mark.line + 1;
      m.column = e.mark.column + 1;
    }
    FailAt(m, "YAML syntax error: " + e.msg);
  }
}

void Reader::ExpectMap(const YAML::Node& node, const std::string& what) const {
  if (!node.IsMap()) Fail(node, what + " must be a map, found " + NodeKind(node));
}

namespace {
std::atomic<KeyTableRecorder> key_table_recorder{nullptr};
}  // namespace

void SetKeyTableRecorder(KeyTableRecorder recorder) { key_table_recorder.store(recorder); }

void Reader::CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
                       const std::string& what) const {
  if (KeyTableRecorder record = key_table_recorder.load(std::memory_order_relaxed)) record(what, allowed);
  ExpectMap(map, what);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) Fail(it->first, what + ": keys must be plain names");
    std::string key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string known;
      for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      Fail(it->first, "unknown key '" + key + "' in " + what + DidYouMean(key, allowed) +
                          "; known keys: " + known);
    }
  }
}

YAML::Node Reader::Required(const YAML::Node& map, const std::string& key, const std::string& what) const {
  YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) Fail(map, what + ": missing required key '" + key + "'");
  return n;
}

std::string Reader::String(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) Fail(node, what + " must be a string, found " + NodeKind(node));
  return node.Scalar();
}

long long Reader::Int(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) Fail(node, what + " must be an integer, found " + NodeKind(node));
  const std::string& s = node.Scalar();
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used, 10);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  Fail(node, what + " must be an integer, found '" + s + "'");
}

bool Reader::Bool(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) Fail(node, what + " must be true or false, found " + NodeKind(node));
  const std::string& s = node.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  Fail(node, what + " must be true or false, found '" + s + "'");
}

Duration Reader::DurationOf(const YAML::Node& node, const std::string& what) const {
  std::string s = String(node, what);
  auto d = ParseDuration(s);
  if (!d.ok()) Fail(node, what + ": " + d.status().message());
  if (*d > kMaxDuration)
    Fail(node, what + ": '" + s + "' is longer than the longest duration a file may give (24h)");
  return *d;
}

Duration Reader::Timeout(const YAML::Node& node, const std::string& what) const {
  Duration d = DurationOf(node, what);
  if (d <= Duration::zero())
    Fail(node, what + " must be longer than 0 (every wait has a deadline; there is no 'no timeout')");
  return d;
}

int Reader::HttpStatus(const YAML::Node& node, const std::string& what) const {
  long long v = Int(node, what);
  if (v < 100 || v > 599) Fail(node, what + " must be an HTTP status (100-599), found " + std::to_string(v));
  return static_cast<int>(v);
}

JsonPath Reader::Path(const YAML::Node& node, const std::string& what) const {
  std::string s = String(node, what);
  auto p = JsonPath::Parse(s);
  if (!p.ok()) Fail(node, what + ": " + p.status().message());
  return *p;
}

std::vector<std::string> Reader::StringList(const YAML::Node& node, const std::string& what) const {
  if (!node.IsSequence()) Fail(node, what + " must be a list, found " + NodeKind(node));
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(String(item, what + " item"));
  return out;
}

std::vector<std::pair<std::string, std::string>> Reader::StringPairs(const YAML::Node& node,
                                                                     const std::string& what) const {
  ExpectMap(node, what);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string k = String(it->first, what + " key");
    out.emplace_back(k, String(it->second, what + " value '" + k + "'"));
  }
  return out;
}

nlohmann::json Reader::Json(const YAML::Node& node) const {
  switch (node.Type()) {
    case YAML::NodeType::Null: return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& item : node) a.push_back(Json(item));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (auto it = node.begin(); it != node.end(); ++it) o[String(it->first, "JSON key")] = Json(it->second);
      return o;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted: always a string
      if (s == "null" || s == "~") return nullptr;
      if (s == "true") return true;
      if (s == "false") return false;
      try {
        std::size_t used = 0;
        long long v = std::stoll(s, &used, 10);
        if (used == s.size()) return v;
      } catch (const std::exception&) {
      }
      try {
        std::size_t used = 0;
        double v = std::stod(s, &used);
        if (used == s.size() && !s.empty() && (std::isdigit(static_cast<unsigned char>(s.back())))) return v;
      } catch (const std::exception&) {
      }
      return s;
    }
    default: Fail(node, "undefined YAML node");
  }
}

void Reader::CheckTemplate(const YAML::Node& node, const std::string& text,
                           const std::vector<std::string>& known) const {
  auto vars = TemplateVariables(text);
  if (!vars.ok()) Fail(node, vars.status().message());
  if (known.empty()) return;
  for (const auto& v : *vars) {
    if (std::find(known.begin(), known.end(), v) == known.end()) {
      Fail(node, "unknown template variable '{{" + v + "}}'" + DidYouMean(v, known));
    }
  }
}

}  // namespace idemproof::yaml
