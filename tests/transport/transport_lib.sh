# Shared by the transport scripts (run_transport.sh, run_egress_tls.sh,
# run_flaw_matrix.sh): sourced as
#   . "$2/tests/transport/transport_lib.sh" "$@"    # IDEMPROOF SOURCE_DIR WORK_DIR
# sets $idemproof, $src and an emptied $work, enters the source tree, brings
# in run/verdict/fail (tests/foreign/foreign_lib.sh) and stops when a tool
# the fronts need is missing (scripts/setup.sh installs them).
set -uo pipefail
idemproof=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cd "$src" || exit 2
. "$src/tests/foreign/foreign_lib.sh"
for tool in haproxy openssl python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/setup.sh installs it)"; exit 1; }
done
