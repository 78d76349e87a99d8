#include "injectors/yaml_options.h"

#include <charconv>

#include "base/duration.h"

namespace idemproof::injectors {

Status error_at(const YAML::Node& node, const std::string& message) {
  const YAML::Mark mark = node.Mark();
  const bool known = mark.line >= 0 && mark.column >= 0;
  if (!known) return Status(StatusCode::kInvalidConfig, message);
  return Status(StatusCode::kInvalidConfig, message, SourceMark{"", mark.line + 1, mark.column + 1});
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  auto d = ParseDuration(text);
  if (!d.ok()) {
    return Status(StatusCode::kInvalidConfig,
                  "not a duration: '" + std::string(text) + "' (an integer and one unit: us, ms, s, m, h)");
  }
  return *d;
}

YamlOptions::YamlOptions(const YAML::Node& node, std::string what, const YAML::Node& anchor)
    : node_(node), anchor_(anchor), what_(std::move(what)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    first_error_ = error_at(node_, what_ + ": options must be a map");
  }
}

std::optional<YAML::Node> YamlOptions::lookup(const char* key) {
  known_.insert(key);
  if (!first_error_.ok() || !node_.IsDefined() || !node_.IsMap()) return std::nullopt;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) return it->second;
  }
  return std::nullopt;
}

void YamlOptions::fail_at(const char* key, const std::string& message) {
  std::optional<YAML::Node> n = lookup(key);
  const YAML::Node at = n ? *n : (node_.IsDefined() && !node_.IsNull() ? node_ : anchor_);
  fail(error_at(at, what_ + "." + key + ": " + message));
}

void YamlOptions::require(const char* key) {
  const YAML::Node& at = node_.IsDefined() && !node_.IsNull() ? node_ : anchor_;
  fail(error_at(at, what_ + ": '" + key + "' is required"));
}

void YamlOptions::fail(Status error) {
  if (first_error_.ok()) first_error_ = std::move(error);
}

std::optional<std::string> YamlOptions::string(const char* key) {
  std::optional<YAML::Node> found = lookup(key);
  if (!found) return std::nullopt;
  const YAML::Node& n = *found;
  if (!n.IsScalar()) {
    fail(error_at(n, what_ + "." + key + ": expected a string"));
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<std::int64_t> YamlOptions::integer(const char* key, std::int64_t min,
                                                 std::int64_t max) {
  std::optional<YAML::Node> found = lookup(key);
  if (!found) return std::nullopt;
  const YAML::Node& n = *found;
  std::int64_t v = 0;
  const std::string& s = n.IsScalar() ? n.Scalar() : std::string();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!n.IsScalar() || ec != std::errc() || p != s.data() + s.size()) {
    fail(error_at(n, what_ + "." + key + ": expected an integer"));
    return std::nullopt;
  }
  if (v < min || v > max) {
    fail(error_at(n, what_ + "." + key + ": " + s + " is out of range [" + std::to_string(min) +
                         ", " + std::to_string(max) + "]"));
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlOptions::number(const char* key, double min, double max) {
  std::optional<YAML::Node> found = lookup(key);
  if (!found) return std::nullopt;
  const YAML::Node& n = *found;
  double v = 0;
  try {
    if (!n.IsScalar()) throw YAML::Exception(n.Mark(), "not a scalar");
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    fail(error_at(n, what_ + "." + key + ": expected a number"));
    return std::nullopt;
  }
  if (!(v >= min && v <= max)) {
    fail(error_at(n, what_ + "." + key + ": " + n.Scalar() + " is out of range"));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlOptions::boolean(const char* key) {
  std::optional<YAML::Node> found = lookup(key);
  if (!found) return std::nullopt;
  const YAML::Node& n = *found;
  try {
    if (!n.IsScalar()) throw YAML::Exception(n.Mark(), "not a scalar");
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    fail(error_at(n, what_ + "." + key + ": expected true or false"));
    return std::nullopt;
  }
}

std::optional<std::chrono::nanoseconds> YamlOptions::duration(const char* key) {
  std::optional<YAML::Node> found = lookup(key);
  if (!found) return std::nullopt;
  const YAML::Node& n = *found;
  if (!n.IsScalar()) {
    fail(error_at(n, what_ + "." + key + ": expected a duration"));
    return std::nullopt;
  }
  auto d = parse_duration(n.Scalar());
  if (!d) {
    fail(error_at(n, what_ + "." + key + ": " + d.status().message()));
    return std::nullopt;
  }
  return d.value();
}

std::optional<YAML::Node> YamlOptions::child(const char* key) { return lookup(key); }

Status YamlOptions::finish() const {
  if (!first_error_.ok()) return first_error_;
  if (node_.IsDefined() && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (!known_.count(it->first.Scalar())) {
        return error_at(it->first, what_ + ": unknown option '" + it->first.Scalar() + "'");
      }
    }
  }
  return Status::Ok();
}

}  // namespace idemproof::injectors
