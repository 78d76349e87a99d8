// The target loader over any bytes: a description or an error located at
// file:line:column, never a crash, a hang or an exception.
#include "fuzz_support.h"
#include "model/target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = idemproof::ParseTarget(FuzzText(data, size), "fuzz.yaml");
  if (!r.ok()) FUZZ_ASSERT(r.status().ToString().rfind("fuzz.yaml", 0) == 0);
  return 0;
}
