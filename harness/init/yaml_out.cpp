#include "init/yaml_out.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace idemproof::init {

namespace {

// The code point at text[i] and its length in bytes; length 0 when the
// bytes there are not UTF-8 (overlong, surrogate, past U+10FFFF, cut short).
std::size_t Decode(std::string_view text, std::size_t i, char32_t* cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  std::size_t len = 0;
  char32_t value = 0, min = 0;
  if ((b & 0xE0) == 0xC0) len = 2, value = b & 0x1F, min = 0x80;
  else if ((b & 0xF0) == 0xE0) len = 3, value = b & 0x0F, min = 0x800;
  else if ((b & 0xF8) == 0xF0) len = 4, value = b & 0x07, min = 0x10000;
  else return 0;
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  if (value < min || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *cp = value;
  return len;
}

// What YAML readers (yaml-cpp, PyYAML, editors) may read as a break, refuse
// as non-printable, or drop: written escaped in a quoted scalar.
bool NeedsEscape(char32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF;
}

// Bidi embedding, override and isolate controls: they reorder what an
// editor shows of a comment.
bool IsBidiControl(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C;
}

bool IsPlainWord(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  std::string lower;
  for (const char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // YAML 1.1 readers (PyYAML) take these for booleans or null.
  for (const char* special : {"true", "false", "yes", "no", "on", "off", "y", "n", "null"})
    if (lower == special) return false;
  return true;
}

}  // namespace

Result<std::string> QuoteYaml(std::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = Decode(text, i, &cp);
    if (len == 0) {
      return Status::InvalidArgument("a value is not UTF-8 (byte " + std::to_string(i) + " of '" +
                                     CommentText(text.substr(0, 200)) + "')");
    }
    if (cp == '"') {
      out += "\\\"";
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (NeedsEscape(cp)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  out += '"';
  return out;
}

std::string CommentText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = Decode(text, i, &cp);
    if (len == 0) {
      out += ' ';
      ++i;
      continue;
    }
    if (NeedsEscape(cp) || IsBidiControl(cp)) out += ' ';
    else out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

YamlOut& YamlOut::Lit(Fixed text) {
  out_.append(text.text());
  return *this;
}

YamlOut& YamlOut::Str(std::string_view value) {
  auto quoted = QuoteYaml(value);
  if (quoted.ok()) {
    out_ += *quoted;
  } else {
    if (error_.ok()) error_ = quoted.status();
    out_ += "\"\"";
  }
  return *this;
}

YamlOut& YamlOut::Word(std::string_view value) {
  if (IsPlainWord(value)) {
    out_.append(value);
    return *this;
  }
  return Str(value);
}

YamlOut& YamlOut::Int(long long value) {
  out_ += std::to_string(value);
  return *this;
}

YamlOut& YamlOut::Json(const nlohmann::ordered_json& value) {
  if (value.is_object()) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, item] : value.items()) {
      if (!first) out_ += ", ";
      Str(k);
      out_ += ": ";
      Json(item);
      first = false;
    }
    out_ += '}';
  } else if (value.is_array()) {
    out_ += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i) out_ += ", ";
      Json(value[i]);
    }
    out_ += ']';
  } else if (value.is_string()) {
    Str(value.get_ref<const std::string&>());
  } else if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    // JSON has no infinity; dump() would write null.
    Str(value.get<double>() > 0 ? "Infinity" : "-Infinity");
  } else {
    // numbers, booleans, null: their JSON spelling is plain YAML.
    out_ += value.dump();
  }
  return *this;
}

YamlOut& YamlOut::Comment(std::string_view text) {
  out_ += "# ";
  out_ += CommentText(text);
  out_ += '\n';
  return *this;
}

YamlOut& YamlOut::Append(const YamlOut& other) {
  out_ += other.out_;
  if (error_.ok()) error_ = other.error_;
  return *this;
}

}  // namespace idemproof::init
