// The idempotency contract's questions (contract.h).
#include <algorithm>
#include <string>
#include <vector>

#include "model/target/contract.h"

namespace idemproof {
namespace {

bool StatusIn(int status, int first, const std::vector<int>& also) {
  return status == first || std::find(also.begin(), also.end(), status) != also.end();
}
std::string StatusesText(int first, const std::vector<int>& also) {
  std::string out = std::to_string(first);
  for (int st : also) out += " or " + std::to_string(st);
  return out;
}

}  // namespace

bool IdempotencyContract::IsRetryable(int status) const {
  if (std::find(retryable.begin(), retryable.end(), status) != retryable.end()) return true;
  if (status >= 500 && status <= 599) return !stores_5xx;
  // Released 4xx: all but the declared refusals, which are never stored anyway.
  return !stores_4xx && status >= 400 && status <= 499 && !IsInProgress(status) && !IsMismatch(status) &&
         status != missing_key;
}

bool IdempotencyContract::IsInProgress(int status) const { return StatusIn(status, in_progress, in_progress_also); }

bool IdempotencyContract::IsMismatch(int status) const { return StatusIn(status, mismatch, mismatch_also); }

std::string IdempotencyContract::InProgressText() const { return StatusesText(in_progress, in_progress_also); }

std::string IdempotencyContract::MismatchText() const { return StatusesText(mismatch, mismatch_also); }

std::string ReplayMarker::Where() const { return body ? "body " + body->text() : header; }

std::string ReplayMarker::Describe() const { return Where() + (body ? " = " : ": ") + value; }

}  // namespace idemproof
