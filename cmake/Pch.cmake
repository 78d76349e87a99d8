# Precompiled headers (issue 47: the clean build's time). A third-party header
# that most of a target's translation units include is parsed once into a
# .gch and loaded by each of them instead of parsed again: Catch2 and
# RapidCheck (2.3 s of parsing per test file, 0.5 s from the .gch) and
# nlohmann/json (2.4 s per file, 1.0 s from the .gch; the rest is the debug
# information its templates emit in every file). One header set per compile
# flag set, built once in a donor target and reused (REUSE_FROM) by every
# target with those flags: a .gch costs 6 to 10 s to build.
#
# GCC only: it takes a .gch built at -O2 for a file compiled at -Og or with
# other -D values that the headers never read, and says so when it cannot
# (-Winvalid-pch, an error under -Werror). Clang (scripts/fuzz.sh) refuses a
# precompiled header whose -D values differ, so it builds without. A target
# whose files mostly lack these headers gets none: loading the .gch costs
# about 1 s per file that did not need it. CLI11 is no candidate: a file that
# includes CLI/CLI.hpp and nothing else takes 9.7 s, 7.2 s from a .gch (it
# emits 1 830 functions in every file; fewer files that include it would help).
#
# ccache caches these compiles only with the sloppiness that CMakeLists.txt
# passes to a ccache launcher (docs/benchmarks.md, "Build time").
if(NOT IDEMPROOF_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR IDEMPROOF_FUZZ)
  return()
endif()

# The libraries and executables (-O2): those whose files include
# nlohmann/json (most of harness/, reports/, the stub's core).
add_library(idemproof_pch_json OBJECT EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(idemproof_pch_json PRIVATE nlohmann_json::nlohmann_json idemproof_warnings)
target_precompile_headers(idemproof_pch_json PRIVATE <nlohmann/json.hpp>)
# A target whose flags define what the headers test gets its own .gch:
# idemproof_model compiles with -pthread (_REENTRANT). A target added to the
# list with such a flag fails to build, saying "not used because ...".
foreach(t idemproof_oracles idemproof_runtime idemproof_explore idemproof_steps
          idemproof_run_files idemproof_session idemproof_discover idemproof_hunt idemproof_init
          idemproof_reports idemproof_report_pages idemproof_stub_core idemproof)
  if(TARGET ${t})
    target_precompile_headers(${t} REUSE_FROM idemproof_pch_json)
  endif()
endforeach()
target_precompile_headers(idemproof_model PRIVATE <nlohmann/json.hpp>)
# GCC 12 warns (-Warray-bounds, a known false positive of std::string's
# operator+) in this file when it loads the .gch, not when it parses.
set_source_files_properties(${PROJECT_SOURCE_DIR}/harness/oracles/registry.cpp
  TARGET_DIRECTORY idemproof_oracles PROPERTIES SKIP_PRECOMPILE_HEADERS ON)

# The test executables (-Og, tests/CMakeLists.txt): Catch2, RapidCheck and
# nlohmann/json, which nine in ten test files include. catch_main.cpp is not
# among them: it defines CATCH_CONFIG_RUNNER before it includes Catch2.
add_library(idemproof_pch_tests OBJECT EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(idemproof_pch_tests PRIVATE Catch2::Catch2 rapidcheck rapidcheck_catch
  nlohmann_json::nlohmann_json idemproof_warnings)
target_compile_options(idemproof_pch_tests PRIVATE $<TARGET_PROPERTY:idemproof_catch_main,COMPILE_OPTIONS>)
target_precompile_headers(idemproof_pch_tests PRIVATE
  <catch2/catch.hpp> <rapidcheck.h> <rapidcheck/catch.h> <nlohmann/json.hpp>)
get_property(test_targets GLOBAL PROPERTY idemproof_test_targets)
# test-external compiles with hiredis's -D_FILE_OFFSET_BITS=64: none.
list(REMOVE_ITEM test_targets test-external)
foreach(t IN LISTS test_targets)
  target_precompile_headers(${t} REUSE_FROM idemproof_pch_tests)
endforeach()
