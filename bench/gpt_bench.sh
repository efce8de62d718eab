#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Side-by-side training throughput: the GPT of the transformer module through DJL's Trainer (forward,
# loss, backward, AdamW) against PyTorch 2.6 training the same architecture
# (../shared/peers/torch_gpt_bench.py: same layers, heads, width, context, vocabulary 256, tied head,
# exact GELU, no dropout, AdamW lr 3e-4), one thread each, alternating, REPEAT times.
# Each run does 2 warm-up steps then STEPS timed steps on one fixed batch of random tokens, and prints
# tokens/s; the script then prints the medians and their ratio (java / pytorch).
# Wall-clock time is what the peer measures, and on a shared machine it also measures the other load.
# So the script also compares CPU time of the training thread per step: Java reports it itself
# (cpu_step_ms), and the peer runs once more per repeat with its timer time.perf_counter replaced by
# time.thread_time (nothing else changed).
# Both run under the same glibc malloc settings (MALLOC=tuned, the default; those bin/djlrun gives
# its workers): one arena, no mmap below 32 MiB and no trimming below 1 GiB, so that freed tensor
# memory is reused rather than returned to the kernel and faulted in again. This matters for the JVM, whose main thread is not the process's
# first thread and so allocates from a secondary arena that glibc unmaps when it empties (about
# 3,000 to 15,000 page faults per step instead of about 300); PyTorch 2.6 barely changes with it.
# MALLOC=default runs both with glibc's defaults.
# Needs the peer: sudo ../shared/peers/setup.sh. Builds the examples' classpath if missing.
# usage: bench/gpt_bench.sh [REPEAT=5] [STEPS=20] [BATCH=16] [CONTEXT=128] [LAYERS=4] [HEADS=4] [WIDTH=128]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
REPEAT=${1:-5}; STEPS=${2:-20}; BATCH=${3:-16}; CONTEXT=${4:-128}
LAYERS=${5:-4}; HEADS=${6:-4}; WIDTH=${7:-128}
ARGS="layers=$LAYERS heads=$HEADS width=$WIDTH context=$CONTEXT batch=$BATCH steps=$STEPS"
LIB="$ROOT/examples/target/lib"
if ! ls "$LIB"/djl-distributed-transformer-*.jar >/dev/null 2>&1; then
  echo "gpt_bench: building the examples' classpath (mvn -pl examples -am package)..." >&2
  (cd "$ROOT" && mvn -B -q -ntp -pl examples -am package -DskipTests) >&2
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
MALLOC=${MALLOC:-tuned}
if [ "$MALLOC" = tuned ]; then
  export MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
fi
JAVA_CMD=("${JAVA:-java}" -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1
  -Dorg.slf4j.simpleLogger.defaultLogLevel=error -cp "$LIB/*"
  ai.djl.distributed.transformer.bench.GptTrainBench $ARGS)
# torch26 keeps the environment through its chroot; the settings are named here to make them visible
PY_CMD=("$PEERS/torch26" env ${MALLOC_ARENA_MAX:+MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX}
  ${MALLOC_MMAP_THRESHOLD_:+MALLOC_MMAP_THRESHOLD_=$MALLOC_MMAP_THRESHOLD_}
  ${MALLOC_TRIM_THRESHOLD_:+MALLOC_TRIM_THRESHOLD_=$MALLOC_TRIM_THRESHOLD_}
  OMP_NUM_THREADS=1 python3)
PY_WALL=("${PY_CMD[@]}" /peers/torch_gpt_bench.py $ARGS)
PY_CPU=("${PY_CMD[@]}" -c "import sys; sys.argv = ['torch_gpt_bench.py'] + sys.argv[1:]; exec(open('/peers/torch_gpt_bench.py').read().replace('time.perf_counter', 'time.thread_time'))" $ARGS)
LOG=$(mktemp -d); trap 'rm -rf "$LOG"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "# $ARGS, one thread, malloc $MALLOC; java: $("${JAVA:-java}" -version 2>&1 | head -1); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc --all) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$REPEAT"); do
  # alternate which goes first, so that neither always runs right after the other
  order="java pytorch"; [ $((r % 2)) = 0 ] && order="pytorch java"
  for which in $order; do
    if [ $which = java ]; then
      line=$("${JAVA_CMD[@]}" 2>&1 | grep '^params=')
      echo "$line" | grep -o 'cpu_step_ms=[0-9.]*' | cut -d= -f2 >> "$LOG/java.cpu"
    else
      line=$("${PY_WALL[@]}" | grep '^params=')
      cpu=$("${PY_CPU[@]}" | grep -o 'step_ms=[0-9.]*' | cut -d= -f2)
      echo "$cpu" >> "$LOG/pytorch.cpu"; line="$line cpu_step_ms=$cpu"
    fi
    echo "gpt-train impl=$which run=$r $line"
    echo "$line" | grep -o 'tokens_per_s_per_rank=[0-9]*' | cut -d= -f2 >> "$LOG/$which"
  done
done
J=$(median < "$LOG/java"); P=$(median < "$LOG/pytorch")
echo "median tokens_per_s (wall clock): java=$J pytorch=$P ratio=$(awk -v a="$J" -v b="$P" 'BEGIN{printf "%.2f", a/b}')"
JC=$(median < "$LOG/java.cpu"); PC=$(median < "$LOG/pytorch.cpu")
echo "median cpu_step_ms (training thread): java=$JC pytorch=$PC throughput ratio=$(awk -v a="$JC" -v b="$PC" 'BEGIN{printf "%.2f", b/a}')"
