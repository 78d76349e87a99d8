// Status and Result<T>: how the tool reports its OWN errors (bad YAML, an
// unknown oracle, an unreadable file, a template variable nobody defined).
// Failures of the target are never a Status: they are data in the History.
//
// A Status is a value: a named cause (StatusCode), a one-line message and,
// for errors found in a file, the place (file:line:column, 1-based) where the
// problem is. ToString() renders "file:line:column: message" so a CLI can
// print it as is. Result<T> holds either a T or a non-ok Status.
//
// Thread-safety: plain values; const methods may be called concurrently.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace idemproof {

enum class StatusCode {
  kOk,
  kInvalidConfig,    // a target or scenario file is wrong (YAML, keys, types, names)
  kInvalidArgument,  // a caller passed a malformed value (duration, JSON path, template)
  kNotFound,         // a file, a JSON path, a name that is not there
  kIoError,          // reading or writing a file failed
  kTimeout,          // a deadline passed (runtime)
  kUnavailable,      // the target could not be reached or started (runtime)
  kProcessError,     // a child process misbehaved (runtime)
  kUnsupported,      // the target does not declare what a step needs
  kInternal,         // a bug in idemproof
};

// Name of a code, e.g. "invalid_config".
const char* StatusCodeName(StatusCode code);

// Where in a source file something is. line/column are 1-based; 0 = unknown.
struct SourceMark {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  // "file:line:column", "line:column" without a file, or "file" when the
  // position is unknown.
  std::string ToString() const;
};

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message, std::optional<SourceMark> mark = std::nullopt)
      : code_(code), message_(std::move(message)), mark_(std::move(mark)) {}

  static Status Ok() { return Status(); }
  static Status InvalidConfig(std::string msg, SourceMark mark) {
    return Status(StatusCode::kInvalidConfig, std::move(msg), std::move(mark));
  }
  static Status InvalidArgument(std::string msg) {
    return Status(StatusCode::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(StatusCode::kIoError, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The bare message, without the location.
  const std::string& message() const { return message_; }
  // The place in a file the error refers to, when there is one.
  const std::optional<SourceMark>& mark() const { return mark_; }
  // "file:line:column: message" (or "code: message" when there is no mark).
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<SourceMark> mark_;
};

// Either a T or a non-ok Status. Constructing from an ok Status is a bug
// (it becomes kInternal). value() on an error is a precondition violation.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(implicit)
    if (std::get<Status>(v_).ok()) v_ = Status::Internal("Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  // Ok() when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // Precondition: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace idemproof
