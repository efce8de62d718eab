#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Side-by-side collectives benchmark: this project's CPU backend (bin/djl-dist bench collectives)
# against PyTorch 2.6's gloo (../shared/peers/torch_collectives_bench.py), N local ranks with one
# thread each, alternating REPEAT times (which goes first alternates too); prints every line, then
# per op and size the median time and busbw of each and the ratio. Needs the peer:
# sudo ../shared/peers/setup.sh.
# usage: bench/collectives_bench.sh [N=2] [OPS=all_reduce,broadcast,all_gather,reduce_scatter,all_to_all] [REPEAT=5]
# Environment: SIZES (default 4K,1M,16M,64M; the peer script always runs 4K,1M,16M,64M),
# TRANSPORT (auto, tcp or shm; default auto).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
N=${1:-2}; OPS=${2:-all_reduce,broadcast,all_gather,reduce_scatter,all_to_all}; REPEAT=${3:-5}
SIZES=${SIZES:-4K,1M,16M,64M}
TRANSPORT=${TRANSPORT:-auto}
"$ROOT/bin/djl-dist" --help >/dev/null   # builds the jars if needed
# A free port below the ephemeral range: a client retrying its connect to a port in that range can
# be handed the same port as its own and connect to itself (seen with gloo's ranks here).
free_port() { python3 -c '
import random, socket
while True:
    p = random.randrange(20000, 30000); s = socket.socket()
    try: s.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass
    finally: s.close()'; }
OUT=$(mktemp); trap 'rm -f "$OUT" "$OUT.gloo" "$OUT.err"' EXIT
djl() {
  "$ROOT/bin/djl-dist" bench collectives --world-size "$N" --ops "$OPS" --sizes "$SIZES" \
    --transport "$TRANSPORT" 2>/dev/null \
    | grep busbw | sed 's/^/djl /' | tee -a "$OUT" || echo "# djl run failed"
}
gloo() {
  # One launch per op, bounded; its ranks run in a session of their own (setsid), so that the
  # leftovers of a launch past the bound are killed by process group, not by a name that another
  # run of this script on the machine shares (timeout alone would orphan them).
  for op in ${OPS//,/ }; do
    PORT=$(free_port) setsid "$PEERS/torch26" bash /peers/launch_torch.sh python3 "$N" \
      /peers/torch_collectives_bench.py "$op" > "$OUT.gloo" 2> "$OUT.err" & GPID=$!
    for i in $(seq 1 1800); do kill -0 $GPID 2>/dev/null || break; sleep 0.1; done
    kill -- -"$GPID" 2>/dev/null || true; wait $GPID 2>/dev/null || true
    grep busbw "$OUT.gloo" | sed 's/^/gloo /' | tee -a "$OUT" || true
    grep -q busbw "$OUT.gloo" || { echo "# gloo $op failed:"; grep -v Warning "$OUT.err" | tail -5; }
  done
}
for r in $(seq 1 "$REPEAT"); do
  # alternate which goes first, so that neither always runs right after the other
  if [ $((r % 2)) = 1 ]; then djl; gloo; else gloo; djl; fi
done
echo "# medians over $REPEAT runs, $N ranks: op bytes | djl time_us busbw | gloo time_us busbw | busbw ratio, time ratio (gloo/djl)"
python3 - "$OUT" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    import re
    f = re.sub(r"=\s+", "=", line).split()
    who, op = f[0], f[1]
    kv = dict(x.split("=") for x in f[2:])
    rows[(op, int(kv["bytes"]), who)].append((float(kv["time_us"]), float(kv["busbw_GBps"])))
keys = sorted({(op, b) for op, b, _ in rows}, key=lambda k: (k[0], k[1]))
for op, b in keys:
    d, g = rows.get((op, b, "djl")), rows.get((op, b, "gloo"))
    if not d or not g:
        continue
    dt, db = statistics.median(x[0] for x in d), statistics.median(x[1] for x in d)
    gt, gb = statistics.median(x[0] for x in g), statistics.median(x[1] for x in g)
    print(f"{op:<15} {b:>10} | djl {dt:10.1f} us {db:6.3f} GB/s | gloo {gt:10.1f} us {gb:6.3f} GB/s | busbw x{db/gb if gb else float('nan'):5.2f} time x{gt/dt:5.2f}")
PY
