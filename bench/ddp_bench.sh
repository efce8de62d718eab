#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# DDP side by side with PyTorch 2.6 DDP on gloo, on the GPT of the transformer module (the same
# architecture as ../shared/peers/torch_gpt_bench.py: AdamW lr 3e-4, vocabulary 256, tied head, one
# thread per rank), alternating REPEAT times:
#   - communication share with 2 ranks: (DDP step - the same step under noSync) / DDP step, from
#     DdpGptBench under bin/djlrun and torch_gpt_bench.py under launch_torch.sh;
#   - 1-rank throughput without DDP: GptTrainBench (DJL's plain Trainer) and torch_gpt_bench.py
#     alone; then the 2-rank scaling, 2 x tokens/s per rank / 1-rank tokens/s, of each.
# All four run under the same glibc malloc settings: MALLOC=tuned (the default) gives every run those
# bin/djlrun gives its workers (one arena, no mmap below 32 MiB, no trimming below 1 GiB: freed
# tensor memory is reused instead of being faulted in again every step); MALLOC=default runs all
# with glibc's defaults.
# Prints every line, then the medians and ratios. Needs the peer: sudo ../shared/peers/setup.sh.
# Builds the examples' classpath if missing.
# usage: bench/ddp_bench.sh [REPEAT=5] [STEPS=20] [BATCH=16] [CONTEXT=128] [LAYERS=4] [HEADS=4] [WIDTH=128]
# Environment: DDP_ARGS, extra DdpGptBench arguments (e.g. "overlap=1", "bucket_kib=1024");
# JAVA_OPTS, the JVM options of every Java run (default -XX:+UseSerialGC).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
REPEAT=${1:-5}; STEPS=${2:-20}; BATCH=${3:-16}; CONTEXT=${4:-128}
LAYERS=${5:-4}; HEADS=${6:-4}; WIDTH=${7:-128}
ARGS="layers=$LAYERS heads=$HEADS width=$WIDTH context=$CONTEXT batch=$BATCH steps=$STEPS"
DDP_ARGS=${DDP_ARGS:-}
JAVA_OPTS=${JAVA_OPTS:--XX:+UseSerialGC}
LIB="$ROOT/examples/target/lib"
if ! ls "$LIB"/djl-distributed-ddp-*.jar >/dev/null 2>&1 || ! ls "$ROOT"/examples/target/djl-distributed-examples-*.jar >/dev/null 2>&1; then
  echo "ddp_bench: building the examples (mvn -pl examples -am package)..." >&2
  (cd "$ROOT" && mvn -B -q -ntp -pl examples -am package -DskipTests) >&2
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
MALLOC=${MALLOC:-tuned}
if [ "$MALLOC" = tuned ]; then
  export MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
else
  unset "${!MALLOC_@}"
  export GLIBC_TUNABLES= # keeps bin/djlrun from adding its settings
fi
# shellcheck disable=SC2086
java_ddp() {
  "$ROOT/bin/djlrun" --nproc-per-node 2 --jvm-opts "$JAVA_OPTS" \
    ai.djl.distributed.examples.DdpGptBench $ARGS $DDP_ARGS 2>&1 | grep 'params=' | sed 's/^\[rank0\]: //'
}
# shellcheck disable=SC2086
java_one() {
  "${JAVA:-java}" $JAVA_OPTS -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=error -cp "$LIB/*" \
    ai.djl.distributed.transformer.bench.GptTrainBench $ARGS 2>&1 | grep '^params='
}
# shellcheck disable=SC2086
torch_ddp() { "$PEERS/torch26" bash /peers/launch_torch.sh python3 2 /peers/torch_gpt_bench.py $ARGS 2>&1 | grep '^params='; }
# shellcheck disable=SC2086
torch_one() { "$PEERS/torch26" python3 /peers/torch_gpt_bench.py $ARGS 2>&1 | grep '^params='; }

LOG=$(mktemp -d); trap 'rm -rf "$LOG"' EXIT
# field NAME: NAME's value on stdin's line, nothing (and status 0) when the line has none
field() { { grep -o "$1=[-0-9.]*" || true; } | head -1 | cut -d= -f2; }
# put FILE VALUE: appends VALUE to FILE, or counts a failed run in FILE.failed when it is empty (a
# failed run must neither end the script under pipefail nor count as 0 in a median)
put() { touch "$1"; if [ -n "$2" ]; then echo "$2" >> "$1"; else echo x >> "$1.failed"; fi; }
failed() { [ -f "$1.failed" ] && echo " ($(wc -l < "$1.failed") of $REPEAT runs failed)"; true; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "# $ARGS $DDP_ARGS, one thread per rank, malloc $MALLOC; java: $("${JAVA:-java}" -version 2>&1 | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$REPEAT"); do
  order="java_ddp torch_ddp java_one torch_one"
  [ $((r % 2)) = 0 ] && order="torch_ddp java_ddp torch_one java_one"
  for run in $order; do
    line=$($run || true)
    echo "$run run=$r $line"
    case $run in
      *_ddp) put "$LOG/$run.share" "$(echo "$line" | field comm_share)"
             put "$LOG/$run.tps" "$(echo "$line" | field tokens_per_s_per_rank)" ;;
      *_one) put "$LOG/$run.tps" "$(echo "$line" | field tokens_per_s_per_rank)" ;;
    esac
  done
done
JS=$(median < "$LOG/java_ddp.share"); PS=$(median < "$LOG/torch_ddp.share")
J2=$(median < "$LOG/java_ddp.tps"); P2=$(median < "$LOG/torch_ddp.tps")
J1=$(median < "$LOG/java_one.tps"); P1=$(median < "$LOG/torch_one.tps")
echo "# medians over $REPEAT runs; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in java_ddp torch_ddp java_one torch_one; do
  [ -f "$LOG/$run.tps.failed" ] && echo "# $run:$(failed "$LOG/$run.tps"), left out of its medians"
done
echo "comm_share: java=$JS pytorch=$PS ratio=$(awk -v a="$JS" -v b="$PS" 'BEGIN{printf "%.2f", a/b}') (target: <= 0.50)"
echo "tokens_per_s 2 ranks (per rank): java=$J2 pytorch=$P2; 1 rank: java=$J1 pytorch=$P1"
echo "scaling 2 ranks / 1 rank: java=$(awk -v a="$J2" -v b="$J1" 'BEGIN{printf "%.2f", 2*a/b}') pytorch=$(awk -v a="$P2" -v b="$P1" 'BEGIN{printf "%.2f", 2*a/b}') (target for java: >= 1.80)"
