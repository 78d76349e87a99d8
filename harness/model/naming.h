// Naming: every concrete name a scenario run sends — idempotency keys,
// business ids, message ids, batch job ids, {{uuid}} values and {{run}} —
// as a pure function of the seed, the run's namespace, the scenario and its
// ordinal in the run. Nothing else (no clock, no pid) goes in, so
// `--seed S --namespace N` replays a run's names exactly; the namespace is
// what keeps two runs against one long-lived service apart (a fresh one per
// run unless given, see FreshNamespace()).
//
// Shapes (the scenario run's namespace <run> = "<8 hex>-<namespace>"):
//   key     "idem-<run>-<name>"      ("" for the reserved "none")
//           "idem-<run>-xxx...<name>" (key_form max_length: the declared length)
//   fresh   "idem-<run>-fresh-<n>"   (the reserved "fresh", n = 1, 2, ...)
//   biz     "biz-<run>-<name>"
//   message "msg-<run>-<name>"
//   job     "job-<run>-<name>"
//   uuid    a version-4-shaped uuid, the n-th draw of one step
//
// Thread-safety: immutable after construction; share freely.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace idemproof {

// A namespace is 1..32 characters of [A-Za-z0-9_]: it goes into keys, URLs
// and JSON unescaped. kInvalidArgument otherwise, naming the offence.
Status ValidateNamespace(const std::string& name);

// A fresh namespace from `entropy` (the caller's random bits): 6 hex digits.
std::string FreshNamespace(std::uint64_t entropy);

class RunNaming {
 public:
  // REQUIRES: ValidateNamespace(run_namespace).ok()
  RunNaming(std::uint64_t seed, const std::string& run_namespace, const std::string& scenario, int ordinal);

  // {{run}}: unique per (seed, namespace, scenario, ordinal).
  const std::string& run() const { return run_; }
  // The key of a symbolic name; "" for "none".
  // REQUIRES: name != "fresh" (see Fresh()).
  std::string Key(const std::string& name) const;
  // `key_form: max_length` (issue 33): the key of `name` grown to `length`
  // characters by a filler between the run's prefix and the name, so two
  // names' keys share all but their last characters (a store that cuts keys
  // merges them); the plain key when it is not shorter than `length`.
  // REQUIRES: name is neither "none" nor "fresh".
  std::string Key(const std::string& name, std::size_t length) const;
  // The n-th fresh key of the run (n >= 1).
  std::string FreshKey(int n) const;
  std::string Biz(const std::string& name) const;
  std::string Message(const std::string& name) const;
  std::string Job(const std::string& name) const;
  // The n-th uuid drawn for step `step` (-1: the end of the run).
  std::string Uuid(int step, int n) const;

 private:
  std::uint64_t seed_;
  std::string run_;
};

}  // namespace idemproof
