#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Side-by-side store benchmark (issue 19): this project's TcpStore server (bin/djl-dist store-server)
# against PyTorch 2.6's classic TCPStore server, and a minimal C epoll store server (bench/
# min_store.c) as the floor of what any server reaches on this machine. Every measurement starts
# fresh servers (so a Java server is measured from its first second, as a job meets it), servers
# alternate, and each figure is the median of REPEAT runs:
#   1. capacity: bench/store_load.c holding 1, 16 and 64 connections, each with one small SET+GET
#      or ADD in flight in a closed loop, for SECONDS; the first second and the whole run;
#   2. steadiness: ten consecutive runs of SECONDS at 64 connections against each of three fresh
#      servers (ours, PyTorch's, the C floor) running at once, alternating, and the ratio of ours
#      to PyTorch's run by run;
#   3. PyTorch's own load: 16 Python client processes x 500 rounds of set/get/add
#      (../shared/peers/torch_store_bench.py), against each server and the C floor;
#   4. rendezvous: N simultaneous raw clients (connect, VALIDATE, ADD, WAIT for the last;
#      `djl-dist bench store-rendezvous`, whose JIT warm-up runs against a private server) on a
#      fresh server each run, for N in RDZV_SIZES; ours with and without a store secret, and, when
#      RDZV_SERVERS names java-tls, with mutual TLS (certificates made here by openssl for the run).
# Needs gcc and the peer (../shared/peers/setup.sh). Takes about 13 minutes with the defaults on a
# 2-core machine. Prints one line per run, then a table of medians and ratios.
# usage: bench/store_bench.sh [REPEAT=5] [SECONDS=3]
#   env: CONNS="1 16 64", RDZV_SIZES="9000 20000" (each capped below the open-file limit),
#        PY_CLIENTS=16, PY_ROUNDS=500, RDZV_TIMEOUT=30 (a run past it counts as failed),
#        SKIP="" (any of: capacity steady python rendezvous),
#        RDZV_SERVERS="java java-secret pytorch c" (java-tls too for TLS; with RDZV_TIMEOUT=180)
#        CAP_SERVERS="java pytorch", PY_SERVERS="java pytorch c" (the summary needs those; more
#        may be added); in all three lists "java-epoll" (and "java-epoll-secret") is ours on
#        Netty's epoll instead of io_uring, and "java-pipeline" ours with every connection served
#        through its Netty pipeline (no io_uring direct connections), for comparison;
#        LOCAL_PORT_RANGE="1024 65535": the client host's ephemeral ports for the run (restored at
#        exit; needs the right to write net.ipv4.ip_local_port_range). All the rendezvous' clients
#        run on this host, and connect() takes the even ports of the range first: past half the
#        range (14,116 of the default 32768-60999) every connect searches the odd ones, and the
#        clients' connects, not the server, set the time (docs/PERFORMANCE.md, session 20)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${PEERS:-$ROOT/../shared/peers}"
REPEAT=${1:-5}; SECONDS_PER_RUN=${2:-3}
CONNS=${CONNS:-"1 16 64"}; RDZV_SIZES=${RDZV_SIZES:-"9000 20000"}
PY_CLIENTS=${PY_CLIENTS:-16}; PY_ROUNDS=${PY_ROUNDS:-500}; SKIP=${SKIP:-}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
FD_LIMIT=$(ulimit -n)
"$ROOT/bin/djl-dist" --help >/dev/null   # builds the jars if needed
WORK=$(mktemp -d)
PID=""
PORT_RANGE_FILE=/proc/sys/net/ipv4/ip_local_port_range
OLD_PORT_RANGE=$(cat "$PORT_RANGE_FILE")
cleanup() {
  for p in $PID ${JAVA_PID:-} ${C_PID:-}; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null || true; rm -rf "$WORK"
  [ -n "${LOCAL_PORT_RANGE:-}" ] && echo "$OLD_PORT_RANGE" > "$PORT_RANGE_FILE" 2>/dev/null
  true
}
trap cleanup EXIT
if [ -n "${LOCAL_PORT_RANGE:-}" ] && ! echo "$LOCAL_PORT_RANGE" > "$PORT_RANGE_FILE"; then
  echo "LOCAL_PORT_RANGE=\"$LOCAL_PORT_RANGE\": cannot write $PORT_RANGE_FILE (root in this network namespace needed)" >&2
  exit 1
fi
gcc -O2 -o "$WORK/store_load" "$ROOT/bench/store_load.c"
gcc -O2 -o "$WORK/min_store" "$ROOT/bench/min_store.c"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
maximum() { sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b+0 == 0) print "n/a"; else printf "%.2f", a/b }'; }
# At SPIN_UPTO connections or fewer the load generator never sleeps: a client that blocks pays a
# vCPU wake-up per reply, which at one connection is most of the round trip (see docs/PERFORMANCE.md).
spin() { [ "$1" -le "${SPIN_UPTO:-1}" ] && echo spin; true; }
skip() { case " $SKIP " in *" $1 "*) return 0;; esac; return 1; }

# TLS files for "java-tls": an authority and a certificate it signs, made for this run
TLS_ENV=()
if command -v openssl >/dev/null; then
  ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  openssl req -x509 $ec -keyout "$WORK/ca.key" -out "$WORK/ca.pem" -days 2 -subj /CN=bench-ca 2>/dev/null
  openssl req $ec -keyout "$WORK/key.pem" -out "$WORK/leaf.csr" -subj /CN=store 2>/dev/null
  openssl x509 -req -in "$WORK/leaf.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial \
    -out "$WORK/leaf.pem" -days 2 2>/dev/null
  cat "$WORK/leaf.pem" "$WORK/ca.pem" > "$WORK/chain.pem"
  TLS_ENV=(DJL_DIST_STORE_TLS_CERT="$WORK/chain.pem" DJL_DIST_STORE_TLS_KEY="$WORK/key.pem" DJL_DIST_STORE_TLS_CA="$WORK/ca.pem")
fi
# java-tls only when asked: on the JDK's TLS a rendezvous of thousands outlasts RDZV_TIMEOUT's default
RDZV_SERVERS=${RDZV_SERVERS:-"java java-secret pytorch c"}
if [[ " $RDZV_SERVERS " == *" java-tls "* ]] && [ ${#TLS_ENV[@]} -eq 0 ]; then
  echo "RDZV_SERVERS names java-tls, and openssl is not installed to make its certificates" >&2; exit 1
fi
# tls_env WHICH: the TLS variables for java-tls, none otherwise
tls_env() { [ "$1" = java-tls ] && printf '%s\n' "${TLS_ENV[@]}"; true; }

# java_env WHICH: for java-epoll, the property that puts ours on epoll; for java-pipeline, the one
# that serves every connection through its pipeline
java_env() {
  case $1 in
    java-epoll) echo JAVA_TOOL_OPTIONS=-Dai.djl.distributed.netty.transport=epoll;;
    java-pipeline) echo JAVA_TOOL_OPTIONS=-Dai.djl.distributed.store.direct=false;;
  esac
  true
}
CAP_SERVERS=${CAP_SERVERS:-"java pytorch"}; PY_SERVERS=${PY_SERVERS:-"java pytorch c"}

# start WHICH [SECRET]: a fresh server on a free port; sets PORT and PID
start() {
  PORT=$(free_port)
  # emptied here, not only by the server's redirection: that runs in the background child, and a
  # check before it would find the previous server's ready line
  : > "$WORK/server.log"
  case $1 in
    java|java-tls|java-epoll|java-pipeline)
      env $(tls_env "$1") $(java_env "$1") DJL_DIST_STORE_SECRET="${2:-}" "$ROOT/bin/djl-dist" store-server --host 127.0.0.1 --port "$PORT" > "$WORK/server.log" 2>&1 & PID=$!
      ready=listening;;
    pytorch)
      "$PEERS/torch26" python3 /peers/torch_store_bench.py server "$PORT" > "$WORK/server.log" 2>&1 & PID=$!
      ready=ready;;
    c)
      "$WORK/min_store" "$PORT" > "$WORK/server.log" 2>&1 & PID=$!
      ready=ready;;
  esac
  for _ in $(seq 1 600); do grep -q "$ready" "$WORK/server.log" && return; sleep 0.05; done
  cat "$WORK/server.log"; echo "server $1 did not start" >&2; exit 1
}
stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "somaxconn=$(cat /proc/sys/net/core/somaxconn) tcp_max_syn_backlog=$(cat /proc/sys/net/ipv4/tcp_max_syn_backlog) open-file limit=$FD_LIMIT" \
  "local ports=$(tr '\t' - < "$PORT_RANGE_FILE")"

if ! skip capacity; then
  for c in $CONNS; do
    for r in $(seq 1 "$REPEAT"); do
      for which in $CAP_SERVERS; do
        start $which
        out=$("$WORK/store_load" 127.0.0.1 "$PORT" "$c" "$SECONDS_PER_RUN" $(spin "$c"))
        stop
        first=$(echo "$out" | grep -m1 '^second=1 ' | grep -o 'ops_per_s=[0-9]*' | cut -d= -f2)
        all=$(echo "$out" | tail -1 | grep -o 'ops_per_s=[0-9]*' | cut -d= -f2)
        echo "capacity server=$which connections=$c run=$r first_second_ops_per_s=$first ops_per_s=$all"
        echo "$first" >> "$WORK/cap.$which.$c.first"; echo "$all" >> "$WORK/cap.$which.$c.all"
      done
      # the C floor alternates with the servers too, REPEAT runs, and its median is reported
      start c
      all=$("$WORK/store_load" 127.0.0.1 "$PORT" "$c" "$SECONDS_PER_RUN" $(spin "$c") | tail -1 | grep -o 'ops_per_s=[0-9]*' | cut -d= -f2)
      stop
      echo "capacity server=c-floor connections=$c run=$r ops_per_s=$all"; echo "$all" >> "$WORK/cap.c.$c.all"
    done
  done
fi

if ! skip steady; then
  # The servers (ours, PyTorch's, the C floor) start fresh and run at once; their 3-s runs
  # alternate, so a drift of the machine falls on all three, the ratio's spread shows what is the
  # server's own, and the C floor's spread what the machine allows.
  start java; JAVA_PID=$PID; JAVA_PORT=$PORT; PID=""
  start c; C_PID=$PID; C_PORT=$PORT; PID=""
  start pytorch
  for r in $(seq 1 10); do
    for which in java pytorch c; do
      port=$PORT; [ "$which" = java ] && port=$JAVA_PORT; [ "$which" = c ] && port=$C_PORT
      all=$("$WORK/store_load" 127.0.0.1 "$port" 64 "$SECONDS_PER_RUN" | tail -1 | grep -o 'ops_per_s=[0-9]*' | cut -d= -f2)
      echo "steady server=$which connections=64 run=$r ops_per_s=$all"; echo "$all" >> "$WORK/steady.$which"
      [ "$which" = java ] && last_java=$all
      [ "$which" = pytorch ] && awk -v a="$last_java" -v b="$all" 'BEGIN{printf "%.3f\n", a/b}' >> "$WORK/steady.ratio"
    done
  done
  stop; PID=$C_PID; stop; C_PID=""; PID=$JAVA_PID; stop; JAVA_PID=""
fi

if ! skip python; then
  for r in $(seq 1 "$REPEAT"); do
    for which in $PY_SERVERS; do
      start $which
      ops=$("$PEERS/torch26" python3 /peers/torch_store_bench.py clients 127.0.0.1 "$PORT" "$PY_CLIENTS" "$PY_ROUNDS" | grep -o 'ops_per_s=[0-9]*' | cut -d= -f2)
      stop
      echo "python-load server=$which clients=$PY_CLIENTS rounds=$PY_ROUNDS run=$r ops_per_s=$ops"; echo "$ops" >> "$WORK/py.$which"
    done
  done
fi

if ! skip rendezvous; then
  for n in $RDZV_SIZES; do
    # the server and the clients' process each hold one socket per client
    if [ "$n" -gt $((FD_LIMIT - 500)) ]; then
      echo "# rendezvous of $n clients exceeds the open-file limit $FD_LIMIT here: measuring $((FD_LIMIT - 500))"
      n=$((FD_LIMIT - 500))
    fi
    echo "$n" >> "$WORK/rdzv.sizes"
    for r in $(seq 1 "$REPEAT"); do
      for which in $RDZV_SERVERS; do
        secret=""
        [[ $which == *-secret ]] && secret="bench-$RANDOM$RANDOM"
        start "${which%-secret}" "$secret"
        s=$(env $(tls_env "$which") DJL_DIST_STORE_SECRET="$secret" "$ROOT/bin/djl-dist" bench store-rendezvous --tcp 127.0.0.1:"$PORT" \
              --clients "$n" --repeat 1 --timeout "${RDZV_TIMEOUT:-30}" 2>&1 | tail -1 || true)
        stop
        if [[ "$s" == *seconds=* ]]; then
          s=$(echo "$s" | grep -o 'seconds=[0-9.]*' | cut -d= -f2); echo "$s" >> "$WORK/rdzv.$which.$n"
        else
          echo "$which" >> "$WORK/rdzv.failed.$n"   # e.g. a server that resets connections
        fi
        echo "rendezvous server=$which clients=$n run=$r seconds=$s"
      done
    done
  done
fi

echo
echo "## summary (medians of $REPEAT; every server freshly started for each run)"
if [ -f "$WORK/cap.java.$(echo $CONNS | cut -d' ' -f1).all" ]; then
  echo "| closed-loop load | ours first second | ours | PyTorch first second | PyTorch | ratio first second | ratio | C floor |"
  echo "|---|---|---|---|---|---|---|---|"
  for c in $CONNS; do
    jf=$(median < "$WORK/cap.java.$c.first"); ja=$(median < "$WORK/cap.java.$c.all")
    pf=$(median < "$WORK/cap.pytorch.$c.first"); pa=$(median < "$WORK/cap.pytorch.$c.all")
    echo "| $c connections (ops/s) | $jf | $ja | $pf | $pa | $(ratio "$jf" "$pf")x | $(ratio "$ja" "$pa")x | $(median < "$WORK/cap.c.$c.all") |"
  done
  # ours in another configuration: VARIANT LABEL OURS_NAME ITS_NAME
  for variant in "java-epoll|ours on epoll|io_uring|epoll" "java-pipeline|ours, pipelines only|direct|pipelines"; do
    IFS='|' read -r which label ours its <<< "$variant"
    for c in $CONNS; do
      [ -f "$WORK/cap.$which.$c.all" ] || continue
      ef=$(median < "$WORK/cap.$which.$c.first"); ea=$(median < "$WORK/cap.$which.$c.all")
      echo "$label, $c connections: first second $ef, whole run $ea;" \
        "$ours/$its $(ratio "$(median < "$WORK/cap.java.$c.all")" "$ea")x; $its/PyTorch $(ratio "$ea" "$(median < "$WORK/cap.pytorch.$c.all")")x"
    done
  done
fi
for which in java pytorch c; do
  [ -f "$WORK/steady.$which" ] || continue
  lo=$(sort -g "$WORK/steady.$which" | head -1); hi=$(maximum < "$WORK/steady.$which"); md=$(median < "$WORK/steady.$which")
  within=$(awk -v m="$md" '$1 >= 0.9 * m && $1 <= 1.1 * m {n++} END {print n+0}' "$WORK/steady.$which")
  echo "steady $which: ten consecutive runs at 64 connections: min=$lo median=$md max=$hi spread=$(awk -v a="$lo" -v b="$hi" -v m="$md" 'BEGIN{printf "%.1f%%", 100*(b-a)/m}') within 10% of the median: $within of 10"
done
if [ -f "$WORK/steady.ratio" ]; then
  lo=$(sort -g "$WORK/steady.ratio" | head -1); hi=$(maximum < "$WORK/steady.ratio"); md=$(median < "$WORK/steady.ratio")
  echo "steady ratio ours/pytorch, run by run: min=${lo}x median=${md}x max=${hi}x spread=$(awk -v a="$lo" -v b="$hi" -v m="$md" 'BEGIN{printf "%.1f%%", 100*(b-a)/m}')"
fi
if [ -f "$WORK/py.java" ]; then
  J=$(median < "$WORK/py.java"); P=$(median < "$WORK/py.pytorch"); C=$(median < "$WORK/py.c")
  echo "python load ($PY_CLIENTS processes): ours=$J pytorch=$P c-floor=$C ratio=$(ratio "$J" "$P")x ours/c-floor=$(ratio "$J" "$C")"
  [ -f "$WORK/py.java-epoll" ] && echo "python load, ours on epoll: $(median < "$WORK/py.java-epoll") ratio=$(ratio "$(median < "$WORK/py.java-epoll")" "$P")x"
  [ -f "$WORK/py.java-pipeline" ] && echo "python load, ours with pipelines only: $(median < "$WORK/py.java-pipeline") ratio=$(ratio "$(median < "$WORK/py.java-pipeline")" "$P")x"
fi
if [ -f "$WORK/rdzv.sizes" ]; then
  header="| rendezvous |"; rule="|---|"
  for which in $RDZV_SERVERS; do
    case $which in java) h=ours;; java-secret) h="ours with a secret";; java-tls) h="ours with TLS";;
      java-epoll) h="ours on epoll";; java-epoll-secret) h="ours on epoll with a secret";;
      java-pipeline) h="ours, pipelines only";;
      pytorch) h="PyTorch 2.6";; c) h="C floor";; esac
    header="$header $h median / max |"; rule="$rule---|"
  done
  echo "$header"; echo "$rule"
  for n in $(cat "$WORK/rdzv.sizes"); do
    row="| $n clients (s) |"
    for which in $RDZV_SERVERS; do
      touch "$WORK/rdzv.$which.$n"
      failed=$(grep -cx "$which" "$WORK/rdzv.failed.$n" 2>/dev/null || true); [ "$failed" = 0 ] && failed=""
      row="$row $(median < "$WORK/rdzv.$which.$n") / $(maximum < "$WORK/rdzv.$which.$n")${failed:+ ($failed of $REPEAT failed)} |"
    done
    echo "$row"
  done
fi
