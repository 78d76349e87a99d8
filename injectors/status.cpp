#include "injectors/status.h"

namespace idemproof::injectors {

const char* to_string(ErrorCause cause) {
  switch (cause) {
    case ErrorCause::kInvalidConfig: return "invalid_config";
    case ErrorCause::kUnknownKind: return "unknown_kind";
    case ErrorCause::kNeedsProxy: return "needs_proxy";
    case ErrorCause::kBindFailed: return "bind_failed";
    case ErrorCause::kResolveFailed: return "resolve_failed";
    case ErrorCause::kInvalidState: return "invalid_state";
    case ErrorCause::kIo: return "io";
  }
  return "unknown";
}

std::string Status::to_text() const {
  if (ok_) return "ok";
  if (line > 0) return std::to_string(line) + ":" + std::to_string(column) + ": " + message;
  return message;
}

}  // namespace idemproof::injectors
