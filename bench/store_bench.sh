#!/usr/bin/env bash
# Side-by-side store benchmark: this project's TcpStore server against PyTorch 2.6's, in one run.
#   1. ops/s of PyTorch's own client load (../shared/peers/torch_store_bench.py: K Python client
#      processes doing M rounds of set/get/add) against each server, alternating, REPEAT times;
#   2. rendezvous of N simultaneous raw clients (connect, VALIDATE, ADD one counter, WAIT on a key
#      the last one sets) against each server, for N in $RDZV_SIZES.
# Needs the peer: sudo ../shared/peers/setup.sh. Prints one line per measurement, then medians.
# usage: bench/store_bench.sh [K=16] [M=500] [REPEAT=5]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
K=${1:-16}; M=${2:-500}; REPEAT=${3:-5}
RDZV_SIZES=${RDZV_SIZES:-"1000 3000 9000"}
ulimit -n 20000 2>/dev/null || true
"$ROOT/bin/djl-dist" --help >/dev/null   # builds the jars if needed
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
JP=$(free_port); PP=$(free_port)
LOG=$(mktemp -d)
cleanup() { kill $JAVA_PID $PY_PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$LOG"; }
trap cleanup EXIT
"$ROOT/bin/djl-dist" store-server --host 127.0.0.1 --port "$JP" > "$LOG/java.log" 2>&1 & JAVA_PID=$!
"$PEERS/torch26" python3 /peers/torch_store_bench.py server "$PP" > "$LOG/py.log" 2>&1 & PY_PID=$!
for i in $(seq 1 200); do grep -q listening "$LOG/java.log" && grep -q ready "$LOG/py.log" && break; sleep 0.1; done
grep -q listening "$LOG/java.log" && grep -q ready "$LOG/py.log" || { cat "$LOG"/*.log; exit 1; }
echo "# java server 127.0.0.1:$JP ($(grep -o '(epoll)\|(nio)' "$LOG/java.log")), pytorch 2.6 server 127.0.0.1:$PP"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for r in $(seq 1 "$REPEAT"); do
  for which in java pytorch; do
    port=$JP; [ $which = pytorch ] && port=$PP
    ops=$("$PEERS/torch26" python3 /peers/torch_store_bench.py clients 127.0.0.1 "$port" "$K" "$M" | grep -o 'ops_per_s=[0-9]*' | cut -d= -f2)
    echo "store-ops server=$which clients=$K rounds=$M ops_per_s=$ops"; echo "$ops" >> "$LOG/ops.$which"
  done
done
J=$(median < "$LOG/ops.java"); P=$(median < "$LOG/ops.pytorch")
echo "median store-ops ops_per_s: java=$J pytorch=$P ratio=$(awk -v a="$J" -v b="$P" 'BEGIN{printf "%.2f", a/b}')"
for n in $RDZV_SIZES; do
  for which in java pytorch; do
    port=$JP; [ $which = pytorch ] && port=$PP
    "$ROOT/bin/djl-dist" bench store-rendezvous --tcp 127.0.0.1:"$port" --clients "$n" --repeat 5 --timeout 120 \
      | sed "s/^/server=$which /" | tee -a "$LOG/rdzv.$which.$n"
  done
  J=$(grep -o 'seconds=[0-9.]*' "$LOG/rdzv.java.$n" | cut -d= -f2 | median)
  P=$(grep -o 'seconds=[0-9.]*' "$LOG/rdzv.pytorch.$n" | cut -d= -f2 | median)
  echo "median store-rendezvous clients=$n seconds: java=$J pytorch=$P"
done
