// SearchProperty: one run of RapidCheck's search over a generator, for
// `idemproof explore` and `idemproof simulate`, with RapidCheck's internal
// API (rc::detail: TestParams, checkProperty, listeners, result variants)
// kept in property_search.cpp.
//
// The property gets each generated value and returns nothing when the value
// passes, or the evidence of a failure. RapidCheck generates up to
// `max_success` values of growing size (up to `max_size`) from `seed`; on the
// first failure it shrinks: it retries smaller values and keeps each one that
// fails too, so the LAST failing value the property saw is the minimal one,
// returned as the counterexample. The same seed, settings and property
// outcomes give the same values in the same order.
//
// The outcome is one of: passed (after `cases` passing values), failed (the
// shrunk counterexample, its evidence and the accepted shrink steps), gave up
// (RapidCheck discarded too many values) or error (RapidCheck itself failed,
// or ran nothing: RC_PARAMS=reproduce=... naming another property makes it
// skip the search, which must not read as a pass).
//
// RapidCheck prints its global configuration ("Using configuration:
// seed=S") when first used in a process; the first search sets RC_PARAMS
// (unless already set) so that the line shows its seed. The seed in
// SearchParams is what the search uses.
//
// Thread-safety: one search at a time per thread; the property runs on the
// calling thread.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <rapidcheck/Gen.h>

namespace idemproof::search {

struct SearchParams {
  std::string name;          // names the search to RapidCheck (its reproduce map)
  std::uint64_t seed = 0;
  int max_success = 100;     // passing values before the property passes
  int max_size = 100;        // the largest size handed to the generator
  int max_discard_ratio = 10;
  bool shrink = true;        // false: the first failing value is the counterexample
};

// Where a search is, after each value tried (a case or a shrink candidate).
struct SearchProgress {
  bool shrinking = false;
  int cases = 0;           // values generated and tried before shrinking began
  int shrinks_tried = 0;
  int shrinks = 0;         // accepted: the candidate failed too
};

enum class SearchOutcome { kPassed, kFailed, kGaveUp, kError };

// "passed", "failed", "gave up", "error".
const char* SearchOutcomeName(SearchOutcome outcome);

// What a search ended with, whatever the value type.
struct SearchSummary {
  SearchOutcome outcome = SearchOutcome::kError;
  int cases = 0;        // passing cases (before the failure, when failed)
  int shrinks = 0;      // failed: accepted shrink steps
  std::string message;  // failed: the counterexample's evidence; gave up / error: why
};

template <typename T>
struct SearchResult : SearchSummary {
  std::optional<T> counterexample;  // failed: the shrunk value
};

// A property over values drawn in RapidCheck's property context; returns the
// failure evidence or nothing.
using PropertyBody = std::function<std::optional<std::string>()>;
using ProgressCallback = std::function<void(const SearchProgress&)>;

// The search itself, over a body that draws its own values (`*gen`).
// REQUIRES: params.max_success >= 0, params.max_size >= 0.
SearchSummary RunPropertySearch(const PropertyBody& body, const SearchParams& params,
                                const ProgressCallback& on_progress);

// Searches `gen`'s values for one that `property` fails. A property that
// throws a std::exception fails that value, the exception's message its
// evidence.
// REQUIRES: as RunPropertySearch.
template <typename T>
SearchResult<T> SearchProperty(const rc::Gen<T>& gen,
                               const std::function<std::optional<std::string>(const std::type_identity_t<T>&)>& property,
                               const SearchParams& params, const ProgressCallback& on_progress = {}) {
  SearchResult<T> result;
  std::optional<T> last_failure;
  static_cast<SearchSummary&>(result) = RunPropertySearch(
      [&]() -> std::optional<std::string> {
        T value = *gen;
        std::optional<std::string> failure;
        try {
          failure = property(value);
        } catch (const std::exception& e) {
          failure = std::string("exception: ") + e.what();
        }
        if (failure) last_failure = std::move(value);
        return failure;
      },
      params, on_progress);
  if (result.outcome == SearchOutcome::kFailed) result.counterexample = std::move(last_failure);
  return result;
}

}  // namespace idemproof::search
