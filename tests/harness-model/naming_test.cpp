// Naming (model/naming.h): every name a function of the seed, the run's
// namespace, the scenario and its ordinal — nothing else.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "model/naming.h"

using namespace idemproof;

TEST_CASE("naming: one seed and namespace give the same names, always", "[model][naming]") {
  const RunNaming a(42, "ns1", "double-submit", 0);
  const RunNaming b(42, "ns1", "double-submit", 0);
  CHECK(a.run() == b.run());
  CHECK(a.Key("k1") == b.Key("k1"));
  CHECK(a.FreshKey(3) == b.FreshKey(3));
  CHECK(a.Biz("b1") == b.Biz("b1"));
  CHECK(a.Message("m1") == b.Message("m1"));
  CHECK(a.Job("j1") == b.Job("j1"));
  CHECK(a.Uuid(2, 1) == b.Uuid(2, 1));
}

TEST_CASE("naming: the shapes of keys, biz ids, messages, jobs", "[model][naming]") {
  const RunNaming n(7, "abc", "s", 0);
  CHECK(std::regex_match(n.run(), std::regex("[0-9a-f]{8}-abc")));
  CHECK(n.Key("k1") == "idem-" + n.run() + "-k1");
  CHECK(n.Key("none").empty());
  CHECK(n.FreshKey(1) == "idem-" + n.run() + "-fresh-1");
  CHECK(n.Biz("b1") == "biz-" + n.run() + "-b1");
  CHECK(n.Message("m1") == "msg-" + n.run() + "-m1");
  CHECK(n.Job("j1") == "job-" + n.run() + "-j1");
  const std::string uuid = n.Uuid(0, 1);
  CHECK(std::regex_match(uuid, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")));
}

TEST_CASE("naming: another namespace, seed, scenario or ordinal shares no name", "[model][naming]") {
  const RunNaming base(42, "ns1", "s", 0);
  for (const RunNaming& other : {RunNaming(42, "ns2", "s", 0), RunNaming(43, "ns1", "s", 0),
                                 RunNaming(42, "ns1", "t", 0), RunNaming(42, "ns1", "s", 1)}) {
    CHECK(other.run() != base.run());
    CHECK(other.Key("k1") != base.Key("k1"));
    CHECK(other.Biz("b1") != base.Biz("b1"));
    CHECK(other.Uuid(0, 1) != base.Uuid(0, 1));
  }
}

TEST_CASE("naming: uuids differ per draw and per step", "[model][naming]") {
  const RunNaming n(1, "x", "s", 0);
  std::set<std::string> seen;
  for (int step = -1; step < 20; ++step) {
    for (int draw = 1; draw <= 50; ++draw) seen.insert(n.Uuid(step, draw));
  }
  CHECK(seen.size() == 21 * 50);
}

TEST_CASE("naming: a namespace is 1-32 letters, digits or '_'", "[model][naming]") {
  CHECK(ValidateNamespace("a1_B").ok());
  CHECK(ValidateNamespace(std::string(32, 'a')).ok());
  CHECK_FALSE(ValidateNamespace("").ok());
  CHECK_FALSE(ValidateNamespace(std::string(33, 'a')).ok());
  CHECK_FALSE(ValidateNamespace("a-b").ok());
  CHECK_FALSE(ValidateNamespace("a/b").ok());
  CHECK(ValidateNamespace("a b").message().find("only letters") != std::string::npos);
}

TEST_CASE("naming: fresh namespaces are valid and differ with their entropy", "[model][naming]") {
  std::set<std::string> seen;
  for (std::uint64_t e = 0; e < 1000; ++e) {
    const std::string ns = FreshNamespace(e);
    CHECK(ValidateNamespace(ns).ok());
    seen.insert(ns);
  }
  CHECK(seen.size() == 1000);
}

// Issue 33: keys at the target's declared maximum length that share all but
// their last characters, so a store that cuts keys merges them.
TEST_CASE("naming: key_form max_length grows a key to the length, its name last", "[model][naming]") {
  const RunNaming n(7, "abc", "s", 0);
  const std::string k1 = n.Key("k1", 255), k2 = n.Key("k2", 255);
  CHECK(k1.size() == 255);
  CHECK(k2.size() == 255);
  CHECK(k1 != k2);
  CHECK(k1.substr(0, 254) == k2.substr(0, 254));
  CHECK(k1.rfind("idem-" + n.run() + "-", 0) == 0);
  CHECK(k1.substr(k1.size() - 2) == "k1");
  CHECK(n.Key("k1", 255) == k1);  // a function of the run alone
  // Never shorter than the plain key.
  CHECK(n.Key("k1", 8) == n.Key("k1"));
}
