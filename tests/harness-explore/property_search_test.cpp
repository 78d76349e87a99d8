// SearchProperty (harness/search/): each outcome on small integer properties,
// the shrunk counterexample, progress, and one seed giving one search.
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <stdexcept>
#include <vector>

#include "search/property_search.h"

using namespace idemproof::search;

namespace {

SearchParams Params(std::uint64_t seed, int max_success = 50) {
  SearchParams p;
  p.name = "property-search-test";
  p.seed = seed;
  p.max_success = max_success;
  p.max_size = 100;
  return p;
}

const rc::Gen<int> kInts = rc::gen::inRange(0, 1000);

}  // namespace

TEST_CASE("a property that always holds passes after max_success cases", "[search]") {
  int tried = 0;
  std::vector<SearchProgress> progress;
  const SearchResult<int> r = SearchProperty<int>(
      kInts, [&](const int&) -> std::optional<std::string> { ++tried; return std::nullopt; }, Params(3),
      [&](const SearchProgress& p) { progress.push_back(p); });
  CHECK(r.outcome == SearchOutcome::kPassed);
  CHECK(r.cases == 50);
  CHECK(tried == 50);
  CHECK_FALSE(r.counterexample.has_value());
  REQUIRE(progress.size() == 50);
  CHECK(progress.back().cases == 50);
  CHECK_FALSE(progress.back().shrinking);
  CHECK(progress.back().shrinks_tried == 0);
}

TEST_CASE("a failure is shrunk to the minimal counterexample, with its evidence and shrink count", "[search]") {
  std::vector<SearchProgress> progress;
  const SearchResult<int> r = SearchProperty<int>(
      kInts,
      [](const int& x) -> std::optional<std::string> {
        if (x < 10) return std::nullopt;
        return "x=" + std::to_string(x);
      },
      Params(5, 1000), [&](const SearchProgress& p) { progress.push_back(p); });
  REQUIRE(r.outcome == SearchOutcome::kFailed);
  REQUIRE(r.counterexample.has_value());
  CHECK(*r.counterexample == 10);
  CHECK(r.message == "x=10");
  CHECK(r.shrinks > 0);
  REQUIRE_FALSE(progress.empty());
  CHECK(progress.back().shrinking);
  CHECK(progress.back().shrinks == r.shrinks);
  CHECK(progress.back().shrinks_tried >= r.shrinks);
  CHECK(progress.back().cases == r.cases + 1);  // the passing ones and the failing one
}

TEST_CASE("without shrinking the first failing value is the counterexample", "[search]") {
  SearchParams params = Params(5, 1000);
  params.shrink = false;
  std::optional<int> first;
  const SearchResult<int> r = SearchProperty<int>(
      kInts,
      [&](const int& x) -> std::optional<std::string> {
        if (x < 10) return std::nullopt;
        if (!first) first = x;
        return "x=" + std::to_string(x);
      },
      params);
  REQUIRE(r.outcome == SearchOutcome::kFailed);
  REQUIRE(first.has_value());
  CHECK(r.counterexample == first);
  CHECK(r.shrinks == 0);
}

TEST_CASE("the same seed gives the same values, another seed others", "[search]") {
  const auto values = [](std::uint64_t seed) {
    std::vector<int> seen;
    SearchProperty<int>(kInts, [&](const int& x) -> std::optional<std::string> {
      seen.push_back(x);
      return std::nullopt;
    }, Params(seed, 30));
    return seen;
  };
  CHECK(values(42) == values(42));
  CHECK(values(42) != values(43));
}

TEST_CASE("a property that throws fails that value, the message its evidence", "[search]") {
  const SearchResult<int> r = SearchProperty<int>(
      kInts,
      [](const int& x) -> std::optional<std::string> {
        if (x >= 500) throw std::runtime_error("too big");
        return std::nullopt;
      },
      Params(9, 1000));
  REQUIRE(r.outcome == SearchOutcome::kFailed);
  CHECK(r.counterexample == 500);
  CHECK(r.message == "exception: too big");
}

TEST_CASE("a generator that never yields a value gives up", "[search]") {
  const rc::Gen<int> never = rc::gen::suchThat(kInts, [](int) { return false; });
  const SearchResult<int> r = SearchProperty<int>(
      never, [](const int&) -> std::optional<std::string> { return std::nullopt; }, Params(1, 10));
  CHECK(r.outcome == SearchOutcome::kGaveUp);
  CHECK(r.cases == 0);
  CHECK_FALSE(r.message.empty());
  CHECK(std::string(SearchOutcomeName(r.outcome)) == "gave up");
}
