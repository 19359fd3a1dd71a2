#!/usr/bin/env bash
# Captures real `__consumer_offsets` segments for testdata/offsets-log/<version>-<codec>/: for each
# Kafka version and offsets-topic codec it starts a one-broker cluster with
# `--offsets-compression CODEC`, drives groups through a bounded scenario, copies the segment
# files of `__consumer_offsets-0` and writes beside them what Kafka's own
# `DumpLogSegments --offsets-decoder --print-data-log` prints for them (dump.txt), the reference
# tests/offsets_log_real.rs checks our decoder against.
#
# The scenario (every group prefixed hist-; the script waits for the members' callbacks):
#   hist-eager   two range members (eager): A joins, B joins, B leaves, A leaves; auto-commits
#   hist-coop    two cooperative-sticky members, same sequence
#   hist-static  a static member (instance s1) that stops and comes back under a new member id
#   hist-admin   admin commits 10, 20, then 5 (a rewind) to hist-t/0
#   hist-gone    an admin commit, then the group deleted (tombstones)
#   hist-848     (4.x) two KIP-848 consumer-protocol members
#
# usage: tools/offsets-log/capture.sh [VERSION...]   (default: 3.9.1 4.1.1; from the repository root)
# env: KCP_LIVE_RUN (default /tmp/kcp-live-offsets-log), OFFSETS_LOG_PORT_BASE (default 21500),
#      OFFSETS_LOG_CODECS (default "none gzip snappy lz4 zstd")
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KAFKA=$ROOT/tools/live/kafka.sh
export KCP_LIVE_RUN=${KCP_LIVE_RUN:-/tmp/kcp-live-offsets-log}
CACHE=${KCP_LIVE_CACHE:-/tmp/kcp-live-cache}
BASE=${OFFSETS_LOG_PORT_BASE:-21500}
CODECS=${OFFSETS_LOG_CODECS:-none gzip snappy lz4 zstd}
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(3.9.1 4.1.1)

log() { echo "[capture $(date +%T)] $*" >&2; }

# Members run until stopped (SIGTERM: close(), a LeaveGroup unless static); the scenario moves
# on when their callbacks say they joined, so it holds on a loaded machine. Every wait is bounded.
declare -A PID OUT
start_member() {  # start_member CLUSTER BOOTSTRAP LABEL GROUP ARGS...
  local name=$1 bootstrap=$2 label=$3 group=$4
  shift 4
  OUT[$label]=$KCP_LIVE_RUN/$name/$label.out
  "$KAFKA" java "$name" LiveConsumer --bootstrap "$bootstrap" --group "$group" --topics hist-t \
    --duration-s 600 --config enable.auto.commit=true --config auto.commit.interval.ms=3000 "$@" \
    > "${OUT[$label]}" 2>> "$KCP_LIVE_RUN/$name/members.err" &
  PID[$label]=$!
}

wait_joined() {  # wait_joined LABEL N: until the member logged N "joined" (or "assigned") events
  local label=$1 n=$2 t
  for ((t = 0; t < 240; t++)); do
    [ "$(cat "${OUT[$label]}" 2>/dev/null | grep -c '"event": "assigned"')" -ge "$n" ] && return 0
    sleep 0.5
  done
  log "$label: no assignment #$n after 120 s"
}

stop_member() {  # stop_member LABEL
  kill -TERM "${PID[$1]}" 2>/dev/null || true
  wait "${PID[$1]}" 2>/dev/null || true
}

scenario() {  # scenario CLUSTER VERSION BOOTSTRAP
  local name=$1 version=$2 b=$3 v4=0
  [ "${version%%.*}" -ge 4 ] && v4=1
  local admin=("$KAFKA" java "$name" LiveAdmin --bootstrap "$b")
  "${admin[@]}" create-topic hist-t 4 > /dev/null
  # Creates __consumer_offsets before the members look for their coordinator.
  "${admin[@]}" commit-offsets hist-warm hist-t 0 0 > /dev/null
  # Wave A: one member per group.
  start_member "$name" "$b" eager-a hist-eager --assignors range
  start_member "$name" "$b" coop-a hist-coop --assignors cooperative-sticky
  start_member "$name" "$b" static-a hist-static --assignors range --instance-id s1 --session-timeout-ms 30000
  [ $v4 = 1 ] && start_member "$name" "$b" k848-a hist-848 --group-protocol consumer
  wait_joined eager-a 1; wait_joined coop-a 1; wait_joined static-a 1
  [ $v4 = 1 ] && wait_joined k848-a 1
  # Wave B: a second member joins each group (a rebalance), then leaves (another).
  start_member "$name" "$b" eager-b hist-eager --assignors range
  start_member "$name" "$b" coop-b hist-coop --assignors cooperative-sticky
  [ $v4 = 1 ] && start_member "$name" "$b" k848-b hist-848 --group-protocol consumer
  wait_joined eager-b 1; wait_joined coop-b 1
  [ $v4 = 1 ] && wait_joined k848-b 1
  "${admin[@]}" commit-offsets hist-admin hist-t 0 10 > /dev/null
  "${admin[@]}" commit-offsets hist-admin hist-t 0 20 > /dev/null
  "${admin[@]}" commit-offsets hist-admin hist-t 0 5 > /dev/null
  "${admin[@]}" commit-offsets hist-gone hist-t 1 7 > /dev/null
  "${admin[@]}" delete-group hist-gone > /dev/null
  sleep 4
  stop_member eager-b; stop_member coop-b
  [ $v4 = 1 ] && stop_member k848-b
  wait_joined eager-a 3
  # The static member stops (no LeaveGroup) and comes back under a new member id.
  stop_member static-a
  start_member "$name" "$b" static-b hist-static --assignors range --instance-id s1 --session-timeout-ms 30000
  wait_joined static-b 1
  sleep 2
  stop_member static-b; stop_member eager-a; stop_member coop-a
  [ $v4 = 1 ] && stop_member k848-a
  return 0
}

capture() {  # capture VERSION CODEC PORT_BASE
  local version=$1 codec=$2 port=$3
  local name="h${version//./}$codec" out=$ROOT/testdata/offsets-log/$version-$codec
  "$KAFKA" start "$name" --version "$version" --port-base "$port" --offsets-compression "$codec" 2>> "$KCP_LIVE_RUN.log"
  local bootstrap="127.0.0.1:$port"
  scenario "$name" "$version" "$bootstrap"
  sleep 2
  rm -rf "$out" && mkdir -p "$out"
  cp "$KCP_LIVE_RUN/$name/broker-1/data/__consumer_offsets-0/"*.log "$out/"
  "$KAFKA" stop "$name" 2>> "$KCP_LIVE_RUN.log"
  # Kafka's reference decoding of the same files.
  (cd "$out" && java -Xmx256m -cp "$CACHE/broker-$version/*" kafka.tools.DumpLogSegments \
    --offsets-decoder --print-data-log --files "$(ls *.log | paste -sd, -)" > dump.txt 2> /dev/null)
  log "$version-$codec: $(wc -c < "$out"/*.log | tail -1) bytes, $(grep -c '| offset:' "$out/dump.txt") records"
}

mkdir -p "$KCP_LIVE_RUN"
"$KAFKA" fetch >&2
i=0
for version in "${VERSIONS[@]}"; do
  for codec in $CODECS; do
    # One cluster at a time: the machine's two cores are shared.
    capture "$version" "$codec" $((BASE + 4 * i))
    i=$((i + 1))
  done
done
