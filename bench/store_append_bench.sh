#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A run of appends to one key (PyTorch's client, bench/store_append_client.py): N appends of SIZE
# bytes and a GET of the result, against this project's store server and PyTorch 2.6's, a fresh
# server for every run, servers alternating; prints each run, then the medians and their ratio.
# OTHER_ROOT, if set, is another checkout (built) whose server runs beside them (before/after).
# Needs the peer (../shared/peers/setup.sh).
# usage: bench/store_append_bench.sh [REPEAT=5] [N=4000] [SIZE=1024]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
REPEAT=${1:-5}; N=${2:-4000}; SIZE=${3:-1024}
"$ROOT/bin/djl-dist" --help >/dev/null   # builds the jars if needed
WORK=$(mktemp -d)   # under /tmp, which the peer's root shares
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
cp "$ROOT/bench/store_append_client.py" "$WORK/"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
SERVERS="java pytorch"; [ -n "${OTHER_ROOT:-}" ] && SERVERS="java other pytorch"
for r in $(seq 1 "$REPEAT"); do
  for which in $SERVERS; do
    PORT=$(free_port); : > "$WORK/server.log"
    case $which in
      java) "$ROOT/bin/djl-dist" store-server --host 127.0.0.1 --port "$PORT" > "$WORK/server.log" 2>&1 & PID=$!; ready=listening;;
      other) "$OTHER_ROOT/bin/djl-dist" store-server --host 127.0.0.1 --port "$PORT" > "$WORK/server.log" 2>&1 & PID=$!; ready=listening;;
      pytorch) "$PEERS/torch26" python3 /peers/torch_store_bench.py server "$PORT" > "$WORK/server.log" 2>&1 & PID=$!; ready=ready;;
    esac
    for _ in $(seq 1 600); do grep -q "$ready" "$WORK/server.log" && break; sleep 0.05; done
    grep -q "$ready" "$WORK/server.log" || { cat "$WORK/server.log"; echo "server $which did not start" >&2; exit 1; }
    s=$(timeout 900 "$PEERS/torch26" python3 "$WORK/store_append_client.py" 127.0.0.1 "$PORT" "$N" "$SIZE" | grep -o 'seconds=[0-9.]*' | cut -d= -f2)
    kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
    echo "append server=$which appends=$N size=$SIZE run=$r seconds=$s"; echo "$s" >> "$WORK/$which"
  done
done
J=$(median < "$WORK/java"); P=$(median < "$WORK/pytorch")
echo "## medians of $REPEAT: $N appends of $SIZE bytes: ours $J s, PyTorch's $P s, ours/PyTorch's time $(awk -v a="$J" -v b="$P" 'BEGIN{printf "%.2f", a/b}')"
[ -f "$WORK/other" ] && echo "## $OTHER_ROOT: $(median < "$WORK/other") s"
true
