#include "base/status.h"

namespace idemproof {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidConfig: return "invalid_config";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kTimeout: return "timeout";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kProcessError: return "process_error";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string SourceMark::ToString() const {
  if (!known()) return file;
  if (file.empty()) return std::to_string(line) + ":" + std::to_string(column);
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  if (mark_) return mark_->ToString() + ": " + message_;
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace idemproof
