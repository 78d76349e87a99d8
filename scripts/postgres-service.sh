#!/usr/bin/env bash
# postgres-service.sh PORT DIR: a PostgreSQL server of our own, in the
# foreground, for a target file's `services:` and for the tests and the bench
# (tests/reference/postgres_server.cpp runs this script too): one way to start
# a server.
#
#  - DIR is the data folder: created, and when empty filled with a fresh
#    cluster (superuser `postgres`, trust authentication, C locale). initdb
#    takes seconds (10 s on a loaded 2-core machine), and a suite starts a
#    server per scenario run, so initdb runs once per server version and user
#    into a template, ${TMPDIR:-/tmp}/idemproof-pg-template-MAJOR-UID-HASH (built
#    under a lock, moved into place whole), and each DIR is a copy of it. A
#    DIR already holding a cluster is started as it is.
#  - The server listens on 127.0.0.1:PORT only; its Unix socket is in DIR
#    (never /var/run/postgresql) when DIR's path is short enough for a socket
#    path (107 bytes), else there is no Unix socket: clients use TCP.
#  - fsync, synchronous_commit and full_page_writes are off: the data dies
#    with the run.
#  - The script `exec`s the server, so the caller's child IS the postmaster:
#    the harness's process-group stop and reaping reach it. Its log (stderr)
#    goes to stdout, where a target file's `ready_stdout:` waits for
#    "database system is ready to accept connections".
#  - PostgreSQL refuses to run as root: as root, DIR is chowned to `nobody`
#    and initdb and the server run as nobody (setpriv; DIR's parents must be
#    searchable by nobody).
#
# The binaries come from the newest /usr/lib/postgresql/*/bin holding both
# initdb and postgres (Debian's `postgresql` package), not from PATH.
set -euo pipefail

if [ $# -ne 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 PORT DIR" >&2
  exit 2
fi
port=$1
dir=$2

bin=""
best=-1
for candidate in /usr/lib/postgresql/*/bin; do
  [ -x "$candidate/postgres" ] && [ -x "$candidate/initdb" ] || continue
  major=$(basename "$(dirname "$candidate")")
  [[ $major =~ ^[0-9]+$ ]] || continue
  if [ "$major" -gt "$best" ]; then
    best=$major
    bin=$candidate
  fi
done
if [ -z "$bin" ]; then
  echo "no PostgreSQL server under /usr/lib/postgresql/*/bin (Debian package postgresql)" >&2
  exit 1
fi

export LC_ALL=C LANG=C
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
as=()
if [ "$(id -u)" -eq 0 ]; then
  if ! id nobody >/dev/null 2>&1; then
    echo "running as root, and there is no user nobody to run PostgreSQL as" >&2
    exit 1
  fi
  chown "$(id -u nobody):$(id -g nobody)" "$dir"
  as=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
  # A parent nobody may not search (a private 0700 folder holding the run
  # folder) makes initdb fail with nothing said: name it.
  if ! "${as[@]}" test -x "$dir"; then
    blocked=$dir
    parent=$dir
    while [ "$parent" != / ]; do
      parent=$(dirname "$parent")
      "${as[@]}" test -x "$parent" || blocked=$parent
    done
    echo "PostgreSQL runs as nobody (this runs as root), and nobody cannot reach $dir:" \
         "$blocked is mode $(stat -c %a "$blocked") owned by $(stat -c %U "$blocked");" \
         "put the run folder (--out) under a folder others may search, or chmod o+x $blocked" >&2
    exit 1
  fi
fi

if [ -z "$(ls -A "$dir")" ]; then
  # 1 MB WAL segments: the cluster is 24 MB instead of 39 (a suite run keeps
  # one per scenario run). The options are in the template's name, so a
  # change to them makes a new template.
  initdb_options=(-U postgres --auth=trust --no-locale -E UTF8 --wal-segsize=1 --no-sync --no-instructions)
  options_hash=$(printf '%s\n' "${initdb_options[@]}" | md5sum | cut -c1-8)
  template="${TMPDIR:-/tmp}/idemproof-pg-template-$best-$(stat -c %u "$dir")-$options_hash"
  if [ ! -f "$template/PG_VERSION" ]; then
    exec 9>"$template.lock"
    flock -w 300 9
    if [ ! -f "$template/PG_VERSION" ]; then
      fresh=$(mktemp -d "$template.XXXXXX")
      [ ${#as[@]} -eq 0 ] || chown "$(id -u nobody):$(id -g nobody)" "$fresh"
      "${as[@]}" "$bin/initdb" -D "$fresh" "${initdb_options[@]}"
      mv "$fresh" "$template"
    fi
    exec 9>&-
  fi
  cp -a "$template/." "$dir/"
fi

socket_dir=$dir
if [ $((${#dir} + ${#port} + 12)) -gt 107 ]; then  # "/.s.PGSQL.PORT" and its ".lock" must fit sun_path
  socket_dir=""
fi
exec "${as[@]}" "$bin/postgres" -D "$dir" -p "$port" -c listen_addresses=127.0.0.1 \
  -c unix_socket_directories="$socket_dir" -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
  -c max_connections=200 -c shared_buffers=32MB 2>&1
