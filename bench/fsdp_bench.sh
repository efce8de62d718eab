#!/usr/bin/env bash
# FSDP side by side with PyTorch 2.6's FSDP (FSDP1 on gloo; ../shared/peers/torch_fsdp_bench.py), on
# the peer's GPT (pre-LayerNorm blocks, tied head, vocabulary 256, AdamW lr 3e-4, one unit per
# block plus the root), two ranks of one thread each, alternating ours and the peer's REPEAT times
# for each strategy: FULL_SHARD, SHARD_GRAD_OP and DDP (ours: DistributedDataParallel). Default
# shape: where parameters dominate memory (width 768, 8 layers, 12 heads, batch 2, context 64: 57 M
# parameters). Prints every line, then per strategy the medians of tokens/s per rank and of the
# largest peak resident memory of any rank (VmHWM / ru_maxrss), ours against the peer's, and ours
# against our DDP.
# Our JVMs run with a bounded heap (-Xmx512m -Xmn64m: FSDP's Java objects are small; an unbounded
# young generation would count as resident memory the Python peer does not have).
# usage: bench/fsdp_bench.sh [REPEAT=3] [STEPS=10] [BATCH=2] [CONTEXT=64] [LAYERS=8] [HEADS=12] [WIDTH=768]
# Environment: MALLOC (tuned, the default, or default: see below), STRATEGIES, JAVA_OPTS, OURS_ARGS
# (more key=value arguments for ours only, e.g. OURS_ARGS=checkpointing=1).
# Needs the peer: sudo ../shared/peers/setup.sh. Builds the examples' classpath if missing.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
REPEAT=${1:-3}; STEPS=${2:-10}; BATCH=${3:-2}; CONTEXT=${4:-64}
LAYERS=${5:-8}; HEADS=${6:-12}; WIDTH=${7:-768}
ARGS="layers=$LAYERS heads=$HEADS width=$WIDTH context=$CONTEXT batch=$BATCH steps=$STEPS"
JAVA_OPTS=${JAVA_OPTS:--XX:+UseSerialGC -Xmx512m -Xmn64m}
STRATEGIES=${STRATEGIES:-FULL_SHARD SHARD_GRAD_OP DDP}
if ! ls "$ROOT"/examples/target/lib/djl-distributed-fsdp-*.jar >/dev/null 2>&1; then
  echo "fsdp_bench: building the examples (mvn -pl examples -am package)..." >&2
  (cd "$ROOT" && mvn -B -q -ntp -pl examples -am package -DskipTests) >&2
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# The same glibc malloc settings on both sides, as in ddp_bench.sh: MALLOC=tuned (the default) gives
# the peer too those bin/djlrun gives our workers (one arena, no mmap below 32 MiB, no trimming
# below 1 GiB; without them here only ours had them); MALLOC=default runs both with glibc's.
MALLOC=${MALLOC:-tuned}
if [ "$MALLOC" = tuned ]; then
  export MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
else
  unset "${!MALLOC_@}"
  export GLIBC_TUNABLES= # keeps bin/djlrun from adding its settings
fi
# shellcheck disable=SC2086
ours() {
  "$ROOT/bin/djlrun" --nproc-per-node 2 --jvm-opts "$JAVA_OPTS" \
    ai.djl.distributed.examples.FsdpGptBench strategy="$1" $ARGS ${OURS_ARGS:-} 2>&1 | grep 'strategy=' | sed 's/^\[rank0\]: //'
}
# shellcheck disable=SC2086
peer() { "$PEERS/torch26" bash /peers/launch_torch.sh python3 2 /peers/torch_fsdp_bench.py strategy="$1" $ARGS 2>&1 | grep '^strategy='; }

LOG=$(mktemp -d); trap 'rm -rf "$LOG"' EXIT
# field NAME: NAME's value on stdin's line, nothing (and status 0) when the line has none
field() { { grep -o "$1=[-0-9.]*" || true; } | head -1 | cut -d= -f2; }
# put FILE VALUE: appends VALUE to FILE, or counts a failed run in FILE.failed when it is empty (a
# failed run must neither end the script under pipefail nor count as 0 in a median)
put() { touch "$1"; if [ -n "$2" ]; then echo "$2" >> "$1"; else echo x >> "$1.failed"; fi; }
failed() { [ -f "$1.failed" ] && echo " ($(wc -l < "$1.failed") of $REPEAT runs failed)"; true; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "# $ARGS${OURS_ARGS:+ (ours also $OURS_ARGS)}, two ranks, one thread each, malloc $MALLOC; java: $("${JAVA:-java}" -version 2>&1 | head -1), $JAVA_OPTS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$REPEAT"); do
  for s in $STRATEGIES; do
    order="ours peer"
    [ $((r % 2)) = 0 ] && order="peer ours"
    for who in $order; do
      line=$($who "$s" || true)
      echo "$who run=$r $line"
      put "$LOG/$who.$s.tps" "$(echo "$line" | field tokens_per_s_per_rank)"
      put "$LOG/$who.$s.rss" "$(echo "$line" | field peak_rss_mib)"
    done
  done
done
echo "# medians over $REPEAT runs; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
DDP_RSS=nan; DDP_TPS=nan
if [ -f "$LOG/ours.DDP.rss" ]; then DDP_RSS=$(median < "$LOG/ours.DDP.rss"); DDP_TPS=$(median < "$LOG/ours.DDP.tps"); fi
for s in $STRATEGIES; do
  OT=$(median < "$LOG/ours.$s.tps"); PT=$(median < "$LOG/peer.$s.tps")
  OR=$(median < "$LOG/ours.$s.rss"); PR=$(median < "$LOG/peer.$s.rss")
  for who in ours peer; do
    [ -f "$LOG/$who.$s.tps.failed" ] && echo "# $s, $who:$(failed "$LOG/$who.$s.tps"), left out of its medians"
  done
  echo "$s: tokens/s per rank ours=$OT peer=$PT ratio=$(ratio "$OT" "$PT"); peak MiB ours=$OR peer=$PR ratio=$(ratio "$OR" "$PR"); vs our DDP: tokens/s $(ratio "$OT" "$DDP_TPS"), peak $(ratio "$OR" "$DDP_RSS")"
done
