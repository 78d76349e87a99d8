// Status and Result<T>: how the injectors report errors of the tool.
//
// A failure of the tool (a bad YAML block, a port that cannot be bound, a
// burst with n = 0) is a value with a named cause, never an exception. A
// failure of the target (reset, no answer) is data in the events and burst
// answers, never a Status. Where a YAML node caused the error, line and column
// (1-based, as editors count) say where.
//
// Thread-safety: plain values; copy freely.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace idemproof::injectors {

enum class ErrorCause {
  kInvalidConfig,   // a YAML block or option is wrong: unknown key, wrong type, out of range
  kUnknownKind,     // no injector registered under that name
  kNeedsProxy,      // a proxy fault was started without a proxy to live in
  kBindFailed,      // the proxy could not listen
  kResolveFailed,   // an endpoint could not be resolved
  kInvalidState,    // started twice, used after heal
  kIo,              // another I/O error of the tool itself
};

const char* to_string(ErrorCause cause);

struct Status {
  ErrorCause cause = ErrorCause::kInvalidConfig;
  std::string message;
  int line = 0;    // 1-based; 0 when no YAML node is involved
  int column = 0;  // 1-based; 0 when no YAML node is involved
  bool ok_ = true;

  static Status ok() { return Status{}; }
  static Status error(ErrorCause c, std::string msg, int line = 0, int column = 0) {
    return Status{c, std::move(msg), line, column, false};
  }
  bool is_ok() const { return ok_; }
  // "line:column: message" when a position is known, else "message".
  std::string to_text() const;
};

// Either a T or an error Status (never an ok Status).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status error) : v_(std::move(error)) {}     // NOLINT: precondition !error.is_ok()
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const Status& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace idemproof::injectors
