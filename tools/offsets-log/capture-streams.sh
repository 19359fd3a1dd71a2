#!/usr/bin/env bash
# Captures a real `__consumer_offsets` segment with streams-group records (KIP-1071) for
# testdata/offsets-log-streams/4.1.1-zstd/: a one-broker Kafka 4.1.1 cluster on which the streams
# rebalance protocol is on (in 4.1 an early-access feature: `streams.version=1` exists only with
# `unstable.feature.versions.enable=true`, and the StreamsGroupHeartbeat API only with
# `unstable.api.versions.enable=true`), real Kafka Streams 4.1.1 members
# (tools/offsets-log/streams/StreamsMember.java, `group.protocol=streams`), then the segment files
# of `__consumer_offsets-0` and what Kafka's own `DumpLogSegments --offsets-decoder
# --print-data-log` prints for them (dump.txt), the reference tests/offsets_log_real.rs checks our
# decoder against. kafka-streams 4.1.1 is fetched with Maven (one jar, no dependencies beyond
# kafka-clients: the topology uses no RocksDB store) into $KCP_LIVE_CACHE/streams-4.1.1.
#
# The scenario: application hist-streams; member sa joins (every task), sb joins (the tasks are
# split), sb leaves, sa leaves.
#
# usage: tools/offsets-log/capture-streams.sh   (from the repository root)
# env: KCP_LIVE_RUN (default /tmp/kcp-live-offsets-log-streams), STREAMS_LOG_PORT_BASE (default 21584)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KAFKA=$ROOT/tools/live/kafka.sh
export KCP_LIVE_RUN=${KCP_LIVE_RUN:-/tmp/kcp-live-offsets-log-streams}
CACHE=${KCP_LIVE_CACHE:-/tmp/kcp-live-cache}
PORT=${STREAMS_LOG_PORT_BASE:-21584}
VERSION=4.1.1
NAME=hstreams
APP=hist-streams
OUT=$ROOT/testdata/offsets-log-streams/$VERSION-zstd
STREAMS=$CACHE/streams-$VERSION

log() { echo "[capture-streams $(date +%T)] $*" >&2; }

"$KAFKA" fetch >&2
if [ ! -f "$STREAMS/kafka-streams-$VERSION.jar" ]; then
  mkdir -p "$STREAMS"
  mvn -q -B dependency:copy -Dartifact="org.apache.kafka:kafka-streams:$VERSION" -DoutputDirectory="$STREAMS" >&2
fi
mkdir -p "$STREAMS/classes"
javac -nowarn -d "$STREAMS/classes" -cp "$STREAMS/kafka-streams-$VERSION.jar:$CACHE/clients-$VERSION/*" \
  "$ROOT/tools/offsets-log/streams/StreamsMember.java"
CP="$STREAMS/classes:$STREAMS/kafka-streams-$VERSION.jar:$CACHE/clients-$VERSION/*"

declare -A PID OUTF
start_member() {  # start_member CLIENT
  local client=$1
  OUTF[$client]=$KCP_LIVE_RUN/$NAME/$client.out
  : > "${OUTF[$client]}"
  java -Xmx256m -XX:TieredStopAtLevel=1 -cp "$CP" StreamsMember "127.0.0.1:$PORT" "$APP" "$client" \
    "$KCP_LIVE_RUN/$NAME/state-$client" 600 > "${OUTF[$client]}" 2>> "$KCP_LIVE_RUN/$NAME/members.err" &
  PID[$client]=$!
}

wait_running() {  # wait_running CLIENT N: until the member's Nth RUNNING state (bounded)
  local client=$1 n=$2 t
  for ((t = 0; t < 240; t++)); do
    [ "$(grep -c '"state": "RUNNING"' "${OUTF[$client]}" 2>/dev/null)" -ge "$n" ] && return 0
    sleep 0.5
  done
  log "$client: not RUNNING ($n) after 120 s"
  return 1
}

stop_member() {
  kill -TERM "${PID[$1]}" 2>/dev/null || true
  wait "${PID[$1]}" 2>/dev/null || true
}

mkdir -p "$KCP_LIVE_RUN"
"$KAFKA" start "$NAME" --version "$VERSION" --port-base "$PORT" --offsets-compression zstd \
  --config unstable.feature.versions.enable=true --config unstable.api.versions.enable=true \
  --feature streams.version=1 2>> "$KCP_LIVE_RUN.log"
trap '"$KAFKA" stop "$NAME" 2>> "$KCP_LIVE_RUN.log" || true' EXIT
for t in "$APP-in" "$APP-out"; do
  "$KAFKA" java "$NAME" LiveAdmin --bootstrap "127.0.0.1:$PORT" create-topic "$t" 2 > /dev/null
done
start_member sa
wait_running sa 1
sleep 5
start_member sb
wait_running sb 1
sleep 8
stop_member sb
sleep 8
stop_member sa
sleep 2
rm -rf "$OUT" && mkdir -p "$OUT"
cp "$KCP_LIVE_RUN/$NAME/broker-1/data/__consumer_offsets-0/"*.log "$OUT/"
"$KAFKA" stop "$NAME" 2>> "$KCP_LIVE_RUN.log"
trap - EXIT
(cd "$OUT" && java -Xmx256m -cp "$CACHE/broker-$VERSION/*" kafka.tools.DumpLogSegments \
  --offsets-decoder --print-data-log --files "$(ls *.log | paste -sd, -)" > dump.txt 2> /dev/null)
log "$VERSION-zstd: $(wc -c < "$OUT"/*.log | tail -1) bytes, $(grep -c '| offset:' "$OUT/dump.txt") records"
