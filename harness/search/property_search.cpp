#include "search/property_search.h"

#include <cstdlib>

#include <rapidcheck.h>

namespace idemproof::search {

namespace {

// Counts cases and shrinks for the caller's progress line; prints nothing
// (the callers report themselves).
class ProgressListener final : public rc::detail::TestListener {
 public:
  explicit ProgressListener(const ProgressCallback& on_progress) : on_progress_(on_progress) {}

  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    ++progress_.cases;
    if (description.result.type == rc::detail::CaseResult::Type::Failure) progress_.shrinking = true;
    Report();
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++progress_.shrinks_tried;
    if (accepted) ++progress_.shrinks;
    Report();
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

 private:
  void Report() {
    if (on_progress_) on_progress_(progress_);
  }

  const ProgressCallback& on_progress_;
  SearchProgress progress_;
};

}  // namespace

const char* SearchOutcomeName(SearchOutcome outcome) {
  switch (outcome) {
    case SearchOutcome::kPassed: return "passed";
    case SearchOutcome::kFailed: return "failed";
    case SearchOutcome::kGaveUp: return "gave up";
    case SearchOutcome::kError: return "error";
  }
  return "?";
}

SearchSummary RunPropertySearch(const PropertyBody& body, const SearchParams& params,
                                const ProgressCallback& on_progress) {
  // Only the first search of a process decides what RapidCheck's
  // configuration line shows; a user's RC_PARAMS wins.
  ::setenv("RC_PARAMS", ("seed=" + std::to_string(params.seed)).c_str(), 0);
  // A failure thrown as RC_FAIL throws it, without RC_FAIL's file:line prefix.
  const auto property = rc::detail::toProperty([&body] {
    if (auto failure = body()) throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, *failure);
  });
  rc::detail::TestParams rc_params;
  rc_params.seed = params.seed;
  rc_params.maxSuccess = params.max_success;
  rc_params.maxSize = params.max_size;
  rc_params.maxDiscardRatio = params.max_discard_ratio;
  rc_params.disableShrinking = !params.shrink;
  rc::detail::TestMetadata metadata;
  metadata.id = metadata.description = params.name;
  ProgressListener listener(on_progress);
  const rc::detail::TestResult result = rc::detail::checkProperty(property, metadata, rc_params, listener);

  SearchSummary out;
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(success)) {
    out.cases = success.numSuccess;
    if (success.numSuccess == 0 && params.max_success > 0) {
      // Reached only through RC_PARAMS' reproduce map, which names other properties.
      out.outcome = SearchOutcome::kError;
      out.message = "RapidCheck ran no case of " + params.name + " (RC_PARAMS reproduce= names another property)";
    } else {
      out.outcome = SearchOutcome::kPassed;
    }
  } else if (result.match(failure)) {
    out.outcome = SearchOutcome::kFailed;
    out.cases = failure.numSuccess;
    out.shrinks = static_cast<int>(failure.reproduce.shrinkPath.size());
    out.message = failure.description;
  } else if (result.match(gave_up)) {
    out.outcome = SearchOutcome::kGaveUp;
    out.cases = gave_up.numSuccess;
    out.message = gave_up.description;
  } else if (result.match(error)) {
    out.outcome = SearchOutcome::kError;
    out.message = error.description;
  }
  return out;
}

}  // namespace idemproof::search
