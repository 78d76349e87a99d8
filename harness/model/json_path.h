// A small JSONPath subset used to point into answers: "$" (the whole
// document), ".name", "['name']" / "[\"name\"]", "[N]" and "[*]" (every
// element of an array or every member value of an object).
// Examples: "$.count", "$.items[0].id", "$.items[*].created_at".
//
// A path without [*] maps to exactly one nlohmann::json::json_pointer.
//
// Thread-safety: an immutable value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace idemproof {

class JsonPath {
 public:
  // One step of a path: a member name, an array index, or [*].
  struct Segment {
    enum class Kind { kName, kIndex, kWildcard };
    Kind kind = Kind::kName;
    std::string name;       // kName
    std::size_t index = 0;  // kIndex
    bool operator==(const Segment&) const = default;
  };

  // Parses `text`; kInvalidArgument names the position of the problem.
  static Result<JsonPath> Parse(std::string_view text);

  JsonPath() = default;  // "$"

  // The text it was parsed from, e.g. "$.items[0].id".
  const std::string& text() const { return text_; }
  const std::vector<Segment>& segments() const { return segments_; }
  bool has_wildcard() const;

  // The nlohmann::json::json_pointer equivalent (that type, named so that
  // json_fwd.hpp declares it). Precondition: !has_wildcard().
  nlohmann::json_pointer<std::string> pointer() const;

  // The value at this path. Without [*]: kNotFound if absent. With [*]: an
  // array of every match (possibly empty), never kNotFound.
  Result<nlohmann::json> Find(const nlohmann::json& doc) const;
  // The value at this path as text, as captures and markers compare it: a
  // string as it is, anything else as its JSON ("true", "7"); nullopt if absent.
  std::optional<std::string> FindText(const nlohmann::json& doc) const;

  // Sets the value at this path in `doc`, as a request patch does: a missing
  // member is created, a null becomes an object (at a member) or an array (at
  // an index), an array is padded with nulls up to the index (at most
  // kMaxPatchPadding of them). Never throws. kInvalidArgument, with `doc`
  // unchanged, when the path goes through a scalar, names a member of an
  // array or an element of an object, pads too much, has [*] or is "$".
  static constexpr std::size_t kMaxPatchPadding = 1024;
  Status SetIn(nlohmann::json& doc, nlohmann::json value) const;

  // Removes the value(s) at this path from `doc` when present; absent is fine.
  // Removing "$" turns the document into null.
  void EraseFrom(nlohmann::json& doc) const;

  bool operator==(const JsonPath& other) const { return segments_ == other.segments_; }

 private:
  std::string text_ = "$";
  std::vector<Segment> segments_;
};

// What a value is, for an error that says what was found instead of what
// was wanted: "an object", "an array", "text \"12\"", "the number 1.5",
// "the boolean true", "null" (its JSON cut at 40 characters).
std::string DescribeJsonValue(const nlohmann::json& value);

// One segment as path text (".name", "['na me']", "[3]"), as a path is
// written after "$".
std::string SegmentText(const JsonPath::Segment& segment);

// A copy of `doc` with every path in `paths` removed (for "equal minus
// volatile fields" comparisons).
nlohmann::json WithoutPaths(nlohmann::json doc, const std::vector<JsonPath>& paths);

}  // namespace idemproof
