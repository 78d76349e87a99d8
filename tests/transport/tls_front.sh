#!/usr/bin/env bash
# The transport test rig: Debian's haproxy on loopback as a TLS-terminating
# front (ALPN h2,http/1.1), an h2c front (HTTP/2 prior knowledge) and a plain
# HTTP/1.1 front for one HTTP/1.1 backend, with a CA and a server
# certificate made by the openssl CLI (scripts/setup.sh installs both).
#
#   tls_front.sh certs DIR
#       Makes DIR/ca.pem (the CA to trust), DIR/server.pem (certificate +
#       key, for haproxy; names 127.0.0.1, localhost, front.idemproof.test)
#       and DIR/other-ca.pem (an unrelated CA: the "wrong CA" case). Keeps
#       existing files, so one CA serves a whole test run.
#   tls_front.sh front --certs DIR [--log FILE] --backend HOST:PORT
#   tls_front.sh front --certs DIR [--log FILE] [--port-regex RE] -- CMD [ARGS...]
#       Starts haproxy in front of HOST:PORT, or first starts CMD (its stdout
#       to a temp file) and fronts the port its stdout names (group 1 of RE,
#       default 'listening on 127\.0\.0\.1:(\d+)'). Then prints
#         tls front on 127.0.0.1:PORT
#         h2c front on 127.0.0.1:PORT
#         plain front on 127.0.0.1:PORT
#         ca DIR/ca.pem
#       and runs until SIGTERM/SIGINT or until haproxy or CMD ends; on any exit
#       it stops both (TERM, KILL after 3 s) and reaps them. --log FILE: haproxy's
#       HTTP log (with its timers) goes to FILE.
#   tls_front.sh target IN.yaml OUT.yaml DIR [tls|h2c|plain]
#       Writes OUT.yaml: the target file IN.yaml (a started target whose
#       start.port_from_stdout names its port) behind the chosen front of
#       this script (default tls): start.argv wrapped, base_url https:// (or
#       http:// for h2c and plain) on the front's port, tls: {ca_file: DIR/ca.pem}.
#
# As a target's start command (the harness runs it in one process group, so
# the fronts count as the target's own listeners and a kill stops them all):
#   start:
#     argv: [bash, .../tls_front.sh, front, --certs, DIR, --, .../idemproof-ref, --port, "0", ...]
#     port_from_stdout: 'tls front on 127\.0\.0\.1:(\d+)'
#   base_url: "https://127.0.0.1:{{port}}"
#   tls: {ca_file: DIR/ca.pem}
# Every wait is bounded: the backend's port line 10 s, haproxy's ports 5 s.
set -uo pipefail

die() { echo "tls_front.sh: $*" >&2; exit 2; }

make_ca() {  # make_ca DIR NAME: DIR/NAME.pem + DIR/NAME.key
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=idemproof test $2" -keyout "$1/$2.key" -out "$1/$2.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    >/dev/null 2>&1 || die "openssl could not make the CA $2"
}

certs() {
  local dir=$1
  mkdir -p "$dir" || die "cannot create $dir"
  [ -s "$dir/server.pem" ] && [ -s "$dir/ca.pem" ] && [ -s "$dir/other-ca.pem" ] && return 0
  make_ca "$dir" ca
  make_ca "$dir" other-ca
  local ext="$dir/server.ext"
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:front.idemproof.test" \
    "basicConstraints=CA:FALSE" "keyUsage=digitalSignature" "extendedKeyUsage=serverAuth" >"$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$dir/server.key" -out "$dir/server.csr" >/dev/null 2>&1 || die "openssl: server key"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 2 -extfile "$ext" -out "$dir/server.crt" >/dev/null 2>&1 || die "openssl: server certificate"
  cat "$dir/server.crt" "$dir/server.key" >"$dir/server.pem.tmp" && mv "$dir/server.pem.tmp" "$dir/server.pem"
}

free_ports() {  # N free loopback ports (the kernel's picks; a race is retried by the caller)
  python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

backend_pid="" haproxy_pid="" tmp=""
stop_all() {
  trap - TERM INT EXIT
  local p
  for p in $haproxy_pid $backend_pid; do kill -TERM "$p" 2>/dev/null; done
  for _ in $(seq 30); do
    local alive=0
    for p in $haproxy_pid $backend_pid; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in $haproxy_pid $backend_pid; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -n "$tmp" ] && rm -rf "$tmp"
}

front() {
  local dir="" backend="" regex='listening on 127\.0\.0\.1:([0-9]+)' log=""
  while [ $# -gt 0 ]; do
    case $1 in
      --certs) dir=$2; shift 2 ;;
      --backend) backend=$2; shift 2 ;;
      --port-regex) regex=$2; shift 2 ;;
      --log) log=$2; shift 2 ;;
      --) shift; break ;;
      *) die "unknown option $1" ;;
    esac
  done
  [ -n "$dir" ] || die "front needs --certs DIR"
  certs "$dir"
  tmp=$(mktemp -d) || die "mktemp"
  trap stop_all EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  if [ $# -gt 0 ]; then
    [ -z "$backend" ] || die "--backend and a command: one or the other"
    : >"$tmp/backend.out"
    "$@" >"$tmp/backend.out" 2>&1 &
    backend_pid=$!
    local deadline=$((SECONDS + 10)) port=""
    while [ -z "$port" ]; do
      port=$(sed -nE "s/.*${regex}.*/\\1/p" "$tmp/backend.out" | head -1)
      [ -n "$port" ] && break
      kill -0 "$backend_pid" 2>/dev/null || { cat "$tmp/backend.out" >&2; die "the backend exited before naming its port"; }
      [ $SECONDS -lt $deadline ] || die "the backend named no port within 10 s"
      sleep 0.02
    done
    backend="127.0.0.1:$port"
  fi
  [ -n "$backend" ] || die "front needs --backend HOST:PORT or a command after --"

  local attempt ports tls h2c plain
  for attempt in 1 2 3; do
    read -r tls h2c plain <<<"$(free_ports 3)"
    {
      echo "global"
      echo "  maxconn 2000"
      [ -n "$log" ] && echo "  log stdout format raw local0"
      echo "defaults"
      echo "  mode http"
      [ -n "$log" ] && printf '  log global\n  option httplog\n'
      echo "  timeout connect 5s"
      echo "  timeout client 120s"
      echo "  timeout server 120s"
      echo "frontend tls"
      echo "  bind 127.0.0.1:$tls ssl crt $dir/server.pem alpn h2,http/1.1"
      echo "  default_backend app"
      echo "frontend h2c"
      echo "  bind 127.0.0.1:$h2c proto h2"
      echo "  default_backend app"
      echo "frontend plain"
      echo "  bind 127.0.0.1:$plain"
      echo "  default_backend app"
      echo "backend app"
      echo "  server app $backend"
    } >"$tmp/haproxy.cfg"
    haproxy -db -f "$tmp/haproxy.cfg" >"${log:-/dev/null}" 2>"$tmp/haproxy.err" &
    haproxy_pid=$!
    local deadline=$((SECONDS + 5)) up=0
    while [ $SECONDS -lt $deadline ] && kill -0 "$haproxy_pid" 2>/dev/null; do
      if port_open "$tls" && port_open "$h2c" && port_open "$plain"; then up=1; break; fi
      sleep 0.02
    done
    [ $up = 1 ] && break
    kill -KILL "$haproxy_pid" 2>/dev/null; wait "$haproxy_pid" 2>/dev/null; haproxy_pid=""
  done
  [ -n "$haproxy_pid" ] || { cat "$tmp/haproxy.err" >&2; die "haproxy did not start (3 attempts)"; }
  echo "tls front on 127.0.0.1:$tls"
  echo "h2c front on 127.0.0.1:$h2c"
  echo "plain front on 127.0.0.1:$plain"
  echo "ca $dir/ca.pem"
  # Until one of them ends or we are told to stop (the traps stop the other).
  if [ -n "$backend_pid" ]; then wait -n "$haproxy_pid" "$backend_pid"; else wait "$haproxy_pid"; fi
}

target() {
  local in=$1 out=$2 dir=$3 kind=${4:-tls} self
  self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tls_front.sh
  certs "$dir"
  python3 - "$in" "$out" "$(cd "$dir" && pwd)" "$kind" "$self" <<'PY' || die "cannot write $out"
import json, re, sys
src, out, certs, kind, script = sys.argv[1:]
text = open(src).read()
scheme = "https" if kind == "tls" else "http"
# base_url on the front's port; the harness reads that port off the wrapper's stdout.
text, n1 = re.subn(r'^base_url: "http://127\.0\.0\.1:\{\{port\}\}"',
                   'base_url: "%s://127.0.0.1:{{port}}"\ntls: {ca_file: %s}' % (scheme, json.dumps(certs + "/ca.pem")),
                   text, count=1, flags=re.M)
text, n2 = re.subn(r'^(start:\n  argv: \[)', r'\g<1>"bash", %s, "front", "--certs", %s, "--", '
                   % (json.dumps(script), json.dumps(certs)), text, count=1, flags=re.M)
text, n3 = re.subn(r"^(  port_from_stdout: ).*$", r"\g<1>'%s front on 127\\.0\\.0\\.1:(\\d+)'" % kind,
                   text, count=1, flags=re.M)
if (n1, n2, n3) != (1, 1, 1):
    sys.exit("%s: no base_url on {{port}}, start.argv list or port_from_stdout to rewrite (%d %d %d)" % (src, n1, n2, n3))
open(out, "w").write(text)
PY
}

case ${1:-} in
  target) [ $# -ge 4 ] || die "usage: tls_front.sh target IN.yaml OUT.yaml DIR [tls|h2c|plain]"; shift; target "$@" ;;
  certs) [ $# = 2 ] || die "usage: tls_front.sh certs DIR"; certs "$2" ;;
  front) shift; front "$@" ;;
  *) die "usage: tls_front.sh certs DIR | front --certs DIR (--backend HOST:PORT | -- CMD ...)" ;;
esac
