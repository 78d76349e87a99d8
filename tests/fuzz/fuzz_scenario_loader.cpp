// The scenario loader over any bytes, with the built-in oracles' vocabulary:
// a scenario or a located error, never a crash, a hang or an exception.
#include "fuzz_support.h"
#include "model/scenario.h"
#include "oracles/oracle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const idemproof::ScenarioVocabulary vocabulary = idemproof::BuiltinOracles().Vocabulary();
  auto r = idemproof::ParseScenario(FuzzText(data, size), "fuzz.yaml", vocabulary);
  if (!r.ok()) FUZZ_ASSERT(r.status().ToString().rfind("fuzz.yaml", 0) == 0);
  return 0;
}
