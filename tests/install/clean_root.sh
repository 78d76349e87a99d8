#!/usr/bin/env bash
# A clean Debian root for the install tests: what a fresh Debian machine of
# this machine's release has (mmdebstrap --variant=minbase), and nothing of
# this checkout.
#   clean_root.sh make CACHE ROOT [PACKAGE...]
#       ROOT: a fresh root over the cached one made of minbase + PACKAGEs
#       (made once per package list and release, under CACHE; a concurrent
#       make waits on the lock), as an overlay: ROOT/lower (the cached root,
#       never written), ROOT/upper (empty: what the test writes goes there).
#       Prints what it did and how long it took.
#   clean_root.sh run CACHE ROOT COMMAND...
#       COMMAND chrooted in ROOT's overlay, in a mount and PID namespace of its
#       own (every process it starts dies with it; the mounts go with it):
#       /proc, /dev, and CACHE's apt archives and lists (downloads kept
#       between runs; the root itself starts clean every time). The network
#       is the machine's.
# A file of the root as the chroot sees it: ROOT/upper/PATH if there, else
# ROOT/lower/PATH; a file put in: ROOT/upper/PATH (while no `run` is on).
# Needs root (chroot, mount), mmdebstrap, and the Debian mirror of
# /etc/apt/sources.list reachable.
set -euo pipefail
what=$1 cache=$2 root=$3
shift 3
case "$what" in
make)
  . /etc/os-release
  release=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
  key=$(printf '%s\n' "$release" minbase "$@" | sha256sum | cut -c1-16)
  cached=$cache/root-$key
  mkdir -p "$cache"
  start=$SECONDS
  (
    flock 9
    if [ ! -e "$cached.done" ]; then
      rm -rf "$cached"
      include=()
      if (($#)); then include=("--include=$(IFS=,; echo "$*")"); fi
      echo "clean root: mmdebstrap --variant=minbase ${include[*]} $release (cached as $cached)"
      mmdebstrap --quiet --variant=minbase "${include[@]}" "$release" "$cached" >"$cached.log" 2>&1 || {
        cat "$cached.log" >&2
        exit 1
      }
      touch "$cached.done"
    else
      echo "clean root: the cached minbase root of $release${*:+ + $*} ($cached)"
    fi
  ) 9>"$cached.lock"
  rm -rf "$root"
  mkdir -p "$root/upper/etc" "$root/work" "$root/merged"
  ln -s "$cached" "$root/lower"
  cp /etc/resolv.conf "$root/upper/etc/resolv.conf"  # the mirror's name, as the machine resolves it
  echo "clean root: $root ready in $((SECONDS - start)) s"
  ;;
run)
  mkdir -p "$cache/apt-archives/partial" "$cache/apt-lists/partial"
  exec unshare --mount --pid --fork --propagation private \
    bash -c 'set -e
      root=$1 cache=$2
      shift 2
      m=$root/merged
      mount -t overlay overlay -o "lowerdir=$(readlink -f "$root/lower"),upperdir=$root/upper,workdir=$root/work" "$m"
      mount -t proc proc "$m/proc"
      mount --bind /dev "$m/dev"
      mount --bind "$cache/apt-archives" "$m/var/cache/apt/archives"
      mount --bind "$cache/apt-lists" "$m/var/lib/apt/lists"
      exec chroot "$m" "$@"' _ "$root" "$cache" "$@"
  ;;
*)
  echo "usage: clean_root.sh make|run CACHE ROOT ..." >&2
  exit 2
  ;;
esac
