#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# World-size-1 all-reduce on GPU 0, side by side in one run: PyTorch's ProcessGroupNCCL
# (torch_allreduce.py), this project's nccl backend (BackendAllReduceBench) and, as the floor under
# it, NCCL through the bare JNA bindings (RawAllReduceBench), alternating REPEAT times; prints the
# medians and the ratios against PyTorch (time per call, algorithm bandwidth).
# Usage, from a GPU kit (bench/gpu/build-kit.sh) on the GPU machine: allreduce_bench.sh [REPEAT]
set -euo pipefail
source "$(dirname "$0")/kit-env.sh"
REPEAT=${1:-3}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
for r in $(seq 1 "$REPEAT"); do
  python3 "$KIT/torch_allreduce.py" | tee -a "$OUT"
  "$KIT/jre/bin/java" -cp "$CP" ai.djl.distributed.backend.nccl.BackendAllReduceBench | tee -a "$OUT" || echo "# BackendAllReduceBench failed"
  "$KIT/jre/bin/java" -cp "$CP" ai.djl.distributed.backend.nccl.RawAllReduceBench | tee -a "$OUT" || echo "# RawAllReduceBench failed"
done
python3 - "$OUT" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"allreduce impl=(\S+) dtype=(\S+) bytes=(\d+) time_us=([\d.]+) algbw_GBps=([\d.]+)", line)
    if m:
        rows.setdefault((m[2], int(m[3])), {}).setdefault(m[1], []).append((float(m[4]), float(m[5])))
for ours in ("djl-nccl", "djl-raw"):
    print(f"\n{ours} against PyTorch (medians)")
    print("| dtype | bytes | PyTorch time (us) | ours (us) | ours - PyTorch (us) | PyTorch algbw (GB/s) | ours | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for (dtype, nbytes), impls in sorted(rows.items()):
        if "pytorch" not in impls or ours not in impls:
            continue
        pt = statistics.median(t for t, _ in impls["pytorch"]); ot = statistics.median(t for t, _ in impls[ours])
        pb = statistics.median(b for _, b in impls["pytorch"]); ob = statistics.median(b for _, b in impls[ours])
        print(f"| {dtype} | {nbytes} | {pt:.2f} | {ot:.2f} | {ot - pt:+.2f} | {pb:.3f} | {ob:.3f} | {ob / pb:.3f}x |")
PY
