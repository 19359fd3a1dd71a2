#!/usr/bin/env bash
# Figures for `kcp group join` (not a timed test; run it in a quiet window):
#
#   1. time from process start to the first `assigned` line, for a kcp member and for a Java
#      consumer (tools/live/java/LiveConsumer.java, the broker's kafka-clients) joining the same
#      group, a settled group of one kcp member, same broker settings, RUNS times each, alternating;
#   2. a kcp member's resident memory (VmRSS, VmHWM) and CPU time while idle in a stable group for
#      IDLE_S seconds.
#
#   tools/live/bench-join.sh NAME [RUNS] [IDLE_S]      # NAME: a cluster started by kafka.sh
#
# Uses target/release/kcp (built here if missing) and prints one JSON object per figure, then a
# summary line. Every process it starts is bounded in time and killed at exit.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NAME=${1:?usage: bench-join.sh NAME [RUNS] [IDLE_S]}
RUNS=${2:-5}
IDLE_S=${3:-60}
CTL="$HERE/kafka.sh"
KCP=${KCP_BIN:-$ROOT/target/release/kcp}   # KCP_BIN: another build (figures are for release)
SESSION_MS=10000

eval "$(bash "$CTL" env "$NAME")"
prefix="KCP_LIVE_$(echo "$NAME" | tr '[:lower:]' '[:upper:]')_BOOTSTRAP"
BOOTSTRAP=${!prefix:?"cluster $NAME has no bootstrap"}
[ -x "$KCP" ] || (cd "$ROOT" && cargo build --release --quiet --bin kcp)

WORK=$(mktemp -d /tmp/bench-join.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

now_ms() { date +%s%3N; }

# start_member KIND OUT GROUP TOPIC: starts a member in its own process group; echoes its pid.
start_member() {
  local kind=$1 out=$2 group=$3 topic=$4
  local common=(--group "$group" --topics "$topic" --assignors cooperative-sticky --session-timeout-ms "$SESSION_MS" --duration-s 600)
  if [ "$kind" = kcp ]; then
    setsid timeout 660 "$KCP" group join --bootstrap-server "$BOOTSTRAP" "${common[@]}" > "$out" 2>"$out.err" &
  else
    setsid timeout 660 bash "$CTL" java "$NAME" LiveConsumer --bootstrap "$BOOTSTRAP" "${common[@]}" > "$out" 2>"$out.err" &
  fi
  echo $!
}

# first_assigned OUT LIMIT_S: the ts_ms of the first `assigned` line (waits at most LIMIT_S).
first_assigned() {
  local out=$1 limit=$2 t
  for ((i = 0; i < limit * 20; i++)); do
    t=$(jq -r 'select(.event == "assigned") | .ts_ms' "$out" 2>/dev/null | head -1)
    [ -n "$t" ] && { echo "$t"; return 0; }
    sleep 0.05
  done
  echo "no assigned line in $out within ${limit}s:" >&2; cat "$out" "$out.err" >&2; return 1
}

stop_member() {  # SIGTERM (leave), bounded, then SIGKILL
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -KILL -- "-$pid" 2>/dev/null || true
}

topic="bench-join-$$"
bash "$CTL" java "$NAME" LiveAdmin --bootstrap "$BOOTSTRAP" create-topic "$topic" 12 >/dev/null

# ---- 1. start to first assignment, joining a settled group of one member
group="bench-join-g-$$"
anchor=$(start_member kcp "$WORK/anchor" "$group" "$topic"); pids+=("$anchor")
first_assigned "$WORK/anchor" 60 >/dev/null
kcp_ms=(); java_ms=()
for ((run = 1; run <= RUNS; run++)); do
  for kind in kcp java; do
    out="$WORK/$kind-$run"
    t0=$(now_ms)
    pid=$(start_member "$kind" "$out" "$group" "$topic"); pids+=("$pid")
    t1=$(first_assigned "$out" 120)
    ms=$((t1 - t0))
    echo "{\"figure\": \"start_to_first_assigned_ms\", \"member\": \"$kind\", \"run\": $run, \"ms\": $ms}"
    if [ "$kind" = kcp ]; then kcp_ms+=("$ms"); else java_ms+=("$ms"); fi
    stop_member "$pid"
    sleep 1
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

# ---- 2. idle in a stable group: RSS and CPU over IDLE_S seconds
idle_out="$WORK/idle"
idle=$(start_member kcp "$idle_out" "$group" "$topic"); pids+=("$idle")
first_assigned "$idle_out" 60 >/dev/null
sleep 5  # let the cooperative follow-up rebalance finish
kcp_pid=$(pgrep -P "$idle" -x kcp || echo "$idle")
ticks() { awk '{print $14 + $15}' "/proc/$kcp_pid/stat"; }
hz=$(getconf CLK_TCK)
c0=$(ticks); t0=$(now_ms)
rss_max=0
for ((s = 0; s < IDLE_S; s++)); do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$kcp_pid/status")
  [ "$rss" -gt "$rss_max" ] && rss_max=$rss
  sleep 1
done
c1=$(ticks); t1=$(now_ms)
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$kcp_pid/status")
cpu_ms=$(( (c1 - c0) * 1000 / hz ))
wall_ms=$((t1 - t0))
events=$(jq -s 'length' "$idle_out")
echo "{\"figure\": \"idle\", \"seconds\": $IDLE_S, \"rss_max_kib\": $rss_max, \"vm_hwm_kib\": $hwm, \"cpu_ms\": $cpu_ms, \"wall_ms\": $wall_ms, \"lines_printed\": $events}"
stop_member "$idle"
stop_member "$anchor"

echo "{\"summary\": {\"runs\": $RUNS, \"kcp_median_ms\": $(median "${kcp_ms[@]}"), \"java_median_ms\": $(median "${java_ms[@]}"), \"kcp_idle_rss_max_kib\": $rss_max, \"kcp_idle_cpu_ms\": $cpu_ms, \"idle_s\": $IDLE_S}}"
