// The one Catch2 main of the project: every test executable links this object.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
