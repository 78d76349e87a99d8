# `cmake --install build --prefix P` and the Debian package (cpack -G DEB,
# scripts/package.sh). The layout is fixed, so the installed `idemproof` finds
# its data relative to its own location (harness/cli/command_support.cpp):
#   P/bin/                 idemproof, idemproof-ref, idemproof-stub
#   P/share/idemproof/     the suite (scenarios/, its example targets in
#                          scenarios/targets/), schemas/, and the files the
#                          example targets start through {{source_dir}}
#   P/lib/idemproof/       {{build_dir}} of an install: links laid out as in a
#                          build folder, so the example targets (which name
#                          {{build_dir}}/reference-impl/idemproof-ref) run
#                          unchanged
#   P/share/doc/idemproof/ README.md and docs/
# Only the three executables install; tests and bench do not.

install(TARGETS idemproof idemproof-ref idemproof-stub RUNTIME DESTINATION bin)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios ${PROJECT_SOURCE_DIR}/schemas
  DESTINATION ${IDEMPROOF_INSTALL_DATADIR})
# What the example targets start by {{source_dir}}/...: the PostgreSQL server
# of reference-postgres*.yaml and the foreign services of foreign-*.yaml.
# tests/install/installed_files.sh checks that every such path is installed.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/postgres-service.sh
  DESTINATION ${IDEMPROOF_INSTALL_DATADIR}/scripts)
install(FILES
  ${PROJECT_SOURCE_DIR}/tests/foreign/shop_service.py
  ${PROJECT_SOURCE_DIR}/tests/foreign/billing_service.js
  ${PROJECT_SOURCE_DIR}/tests/foreign/provider.js
  ${PROJECT_SOURCE_DIR}/tests/foreign/box_office.rb
  ${PROJECT_SOURCE_DIR}/tests/foreign/box_office_store.rb
  DESTINATION ${IDEMPROOF_INSTALL_DATADIR}/tests/foreign)

# Relative links, made at configure time and installed as links: the
# install stays relocatable (a prefix moved, a package unpacked elsewhere).
set(idemproof_links ${PROJECT_BINARY_DIR}/install-build-dir)
file(MAKE_DIRECTORY ${idemproof_links}/reference-impl ${idemproof_links}/payment-stub)
file(CREATE_LINK ../../../bin/idemproof-ref ${idemproof_links}/reference-impl/idemproof-ref SYMBOLIC)
file(CREATE_LINK ../../../bin/idemproof-stub ${idemproof_links}/payment-stub/idemproof-stub SYMBOLIC)
install(DIRECTORY ${idemproof_links}/ DESTINATION ${IDEMPROOF_INSTALL_BUILDDIR})

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/idemproof)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/idemproof)

# The Debian package: idemproof_<version>_<arch>.deb. Its Depends are the
# Debian runtime libraries the three executables link (dpkg-shlibdeps reads
# them from the binaries: never a -dev package).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME idemproof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "prove, or disprove, that an HTTP service is idempotent")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "A chaos-driven verification harness: it starts your service from a target file, replays, races, "
  "kills and delays its requests, and judges the answers and the side effects against the "
  "idempotency contract. Ships the scenario suite, a reference service (idemproof-ref) and a "
  "payment-provider stub (idemproof-stub).")
set(CPACK_PACKAGE_CONTACT "idemproof maintainers <idemproof@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# redis-server: the Redis server the reference target starts for its queue
# consumer (scenarios/targets/reference.yaml, services.redis); your own
# service's target need not. The rest start the other example targets.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "redis-server")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "postgresql, python3, nodejs, ruby, ruby-webrick, ruby-redis")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
include(CPack)
