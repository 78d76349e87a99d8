#!/usr/bin/env bash
# Runs COMMAND when this is root (the clean-root tests chroot and mount);
# otherwise says why and exits 77, which ctest shows as skipped, not passed.
# mmdebstrap must be there (scripts/setup.sh installs it): its absence fails.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: needs root (chroot and mount in a namespace of its own); run the tests as root" >&2
  exit 77
fi
command -v mmdebstrap >/dev/null || { echo "mmdebstrap not found: scripts/setup.sh installs it" >&2; exit 1; }
exec "$@"
