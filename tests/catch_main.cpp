// The one Catch2 main of the project: every test executable links this object.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char* argv[]) {
  // `idemproof run` hunts for 60 s after its suite unless told otherwise
  // (--hunt, harness/hunt/hunt.h). The runs the tests start test something
  // else, so they hunt only where they pass --hunt themselves; a developer's
  // own IDEMPROOF_HUNT is kept.
  ::setenv("IDEMPROOF_HUNT", "0", 0);
  return Catch::Session().run(argc, argv);
}
